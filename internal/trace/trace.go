package trace

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// Formats (--replay-format).
const (
	FormatAuto     = "auto"
	FormatPtuprobe = "ptuprobe"
	FormatAzure    = "azure"
	FormatBurstGPT = "burstgpt"
	FormatMooncake = "mooncake"
)

// Formats lists the formats a file can be read as, auto first.
var Formats = []string{FormatAuto, FormatPtuprobe, FormatAzure, FormatBurstGPT, FormatMooncake}

// Bounds of a trace.
const (
	// MaxBytes bounds the bytes read from a file (1 GiB): a longer file is
	// refused rather than read for minutes.
	MaxBytes = 1 << 30
	// MaxLine bounds one line (1 MiB: a Mooncake row of 1,954 hash ids,
	// the most a 1,000,000-token prompt has, is about 16 KiB).
	MaxLine = 1 << 20
	// MaxRows bounds the rows kept (a row is about 64 bytes).
	MaxRows = 1_000_000
	// MaxHashIDs bounds the hash ids kept over the whole file.
	MaxHashIDs = 8_000_000
	// MaxTokens is the largest prompt or output a row keeps; more is
	// clipped to it.
	MaxTokens = 1_000_000
	// MaxSpan bounds the time from the earliest row to the latest
	// (BurstGPT's release spans 121 days).
	MaxSpan = 400 * 24 * time.Hour
	// BlockTokens is the tokens of one Mooncake hash block.
	BlockTokens = 512
)

// Row is one request of a trace.
type Row struct {
	// Offset is the row's time after the trace's earliest row.
	Offset       time.Duration
	InputTokens  int
	OutputTokens int
	// HashIDs are the prompt's 512-token blocks, in order (Mooncake
	// only), at most ⌈InputTokens ÷ 512⌉ of them: ids past the prompt's
	// length are dropped.
	HashIDs []int
	// Model is the row's model (BurstGPT; empty elsewhere).
	Model string
}

// Trace is a file's rows, sorted by offset (rows at one offset keep the
// file's order).
type Trace struct {
	// Source is the file's name as given to Read.
	Source string
	// Format is the format the file was read as.
	Format string
	Rows   []Row
	// Span is the trace's length, where a repetition of it would start:
	// the last offset plus the mean gap between rows (a millisecond when
	// every row is at one instant).
	Span time.Duration
	// Clipped counts token counts clipped into 1..MaxTokens (outputs of
	// 0 aside), ZeroOutput the rows whose output of 0 became 1.
	Clipped, ZeroOutput int
	// Unsized counts the rows of a ptuprobe file that record no prompt
	// size or no max_tokens: each is given the file's mean of those it
	// records, else FallbackPromptTokens and FallbackOutputTokens.
	Unsized int
}

// Offsets are the rows' offsets, in order.
func (t *Trace) Offsets() []time.Duration {
	out := make([]time.Duration, len(t.Rows))
	for i := range t.Rows {
		out[i] = t.Rows[i].Offset
	}
	return out
}

// Error is a file refused: not a trace of the format asked for (Line 0),
// or a bad row (its 1-based line).
type Error struct {
	File   string
	Line   int
	Reason string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s line %d: %s", e.File, e.Line, e.Reason)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Reason)
}

// ValidFormat reports whether f is one of Formats.
func ValidFormat(f string) bool { return slices.Contains(Formats, f) }

// Read reads a trace from r as format (FormatAuto: detected); name is
// the file's, for its errors. A refused file is an *Error; a failed read
// or a canceled ctx is returned as it is.
func Read(ctx context.Context, r io.Reader, name, format string) (*Trace, error) {
	if !ValidFormat(format) {
		return nil, &Error{File: name, Reason: fmt.Sprintf("format %q: want one of %s", clip(format), strings.Join(Formats, ", "))}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lim := &limited{r: r, left: MaxBytes}
	br := bufio.NewReaderSize(lim, 256<<10)
	if bom, err := br.Peek(3); err == nil && bytes.Equal(bom, []byte("\uFEFF")) {
		_, _ = br.Discard(3)
	}
	ls := &lines{br: br}
	first, err := ls.firstNonBlank()
	if err != nil {
		return nil, ls.fail(name, err)
	}
	if first == nil {
		return nil, &Error{File: name, Reason: "empty: no header and no row"}
	}
	kind, layout, err := detect(name, first, format)
	if err != nil {
		return nil, err
	}
	var b builder
	b.name = name
	switch kind {
	case FormatPtuprobe:
		// results reads from the header on; ls has read it.
		head := append(slices.Clip(first), '\n')
		return readPtuprobe(ctx, io.MultiReader(bytes.NewReader(head), br), name, lim)
	case FormatMooncake:
		err = readMooncake(ctx, ls, first, &b)
	default:
		err = readCSV(ctx, ls, layout, &b)
	}
	if err != nil {
		return nil, ls.fail(name, err)
	}
	return b.trace(kind)
}

// limited is io.LimitReader that says when the limit was passed.
type limited struct {
	r    io.Reader
	left int64
	over bool
}

var errTooBig = fmt.Errorf("longer than %d bytes (1 GiB): cut it (--replay-window reads a part of a trace, not a part of a file)", MaxBytes)

func (l *limited) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// One byte more tells a file of exactly MaxBytes from a longer one.
		var one [1]byte
		if n, _ := l.r.Read(one[:]); n > 0 {
			l.over = true
			return 0, errTooBig
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// lines reads a file line by line, each without its line end (LF or
// CRLF), at most MaxLine bytes.
type lines struct {
	br      *bufio.Reader
	line    int
	pending []byte
}

var errLineTooLong = fmt.Errorf("line longer than %d bytes (1 MiB)", MaxLine)

// next returns the next line, or nil and io.EOF at the end.
func (ls *lines) next() ([]byte, error) {
	ls.pending = ls.pending[:0]
	for {
		chunk, err := ls.br.ReadSlice('\n')
		if len(ls.pending)+len(chunk) > MaxLine {
			ls.line++
			return nil, errLineTooLong
		}
		switch {
		case err == nil:
			ls.line++
			if len(ls.pending) > 0 {
				chunk = append(ls.pending, chunk...)
			}
			return bytes.TrimRight(chunk, "\r\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			ls.pending = append(ls.pending, chunk...)
		case errors.Is(err, io.EOF):
			ls.pending = append(ls.pending, chunk...)
			if len(ls.pending) == 0 {
				return nil, io.EOF
			}
			ls.line++
			return bytes.TrimRight(ls.pending, "\r\n"), nil
		default:
			return nil, err
		}
	}
}

// firstNonBlank returns a copy of the first line that is not blank, or
// nil at the end of the file.
func (ls *lines) firstNonBlank() ([]byte, error) {
	for {
		l, err := ls.next()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(l)) > 0 {
			return bytes.Clone(l), nil
		}
	}
}

// rowError is a bad row's reason, which fail places on its line.
type rowError struct{ reason string }

func (e *rowError) Error() string { return e.reason }

func badRow(format string, a ...any) error { return &rowError{fmt.Sprintf(format, a...)} }

// fail makes err an *Error on the current line where it is the file's
// fault (a bad row, a long line, a file too big); a read error or a
// cancellation is returned as it is.
func (ls *lines) fail(name string, err error) error {
	var re *rowError
	switch {
	case errors.As(err, &re):
		return &Error{File: name, Line: ls.line, Reason: re.reason}
	case errors.Is(err, errLineTooLong):
		return &Error{File: name, Line: ls.line, Reason: err.Error()}
	case errors.Is(err, errTooBig):
		return &Error{File: name, Reason: err.Error()}
	}
	return err
}

// builder gathers rows as read: their times in ns on the trace's own
// clock, and their hash ids in one array.
type builder struct {
	name       string
	rows       []Row
	at         []int64
	idSpan     [][2]int // each row's ids: ids[from:to]
	ids        []int
	clipped    int
	zeroOutput int
}

// add keeps one row: at is its time on the trace's clock in ns.
func (b *builder) add(at int64, in, out int64, ids []int, model string) error {
	if len(b.rows) >= MaxRows {
		return badRow("more than %d rows: cut the trace (a smaller file, or fewer rows)", MaxRows)
	}
	row := Row{Model: model}
	row.InputTokens = b.tokens(in, false)
	row.OutputTokens = b.tokens(out, true)
	// A prompt has ⌈input ÷ 512⌉ blocks; ids past it are not the prompt's.
	ids = ids[:min(len(ids), (row.InputTokens+BlockTokens-1)/BlockTokens)]
	if len(b.ids)+len(ids) > MaxHashIDs {
		return badRow("more than %d hash ids in the file", MaxHashIDs)
	}
	b.idSpan = append(b.idSpan, [2]int{len(b.ids), len(b.ids) + len(ids)})
	b.ids = append(b.ids, ids...)
	b.rows = append(b.rows, row)
	b.at = append(b.at, at)
	return nil
}

// tokens applies the clipping rules to a count read (never negative).
func (b *builder) tokens(n int64, output bool) int {
	switch {
	case n == 0 && output:
		b.zeroOutput++
		return 1
	case n < 1:
		b.clipped++
		return 1
	case n > MaxTokens:
		b.clipped++
		return MaxTokens
	}
	return int(n)
}

// trace places the rows on offsets from the earliest and sorts them.
func (b *builder) trace(format string) (*Trace, error) {
	if len(b.rows) == 0 {
		return nil, &Error{File: b.name, Reason: "holds no row"}
	}
	lo, hi := slices.Min(b.at), slices.Max(b.at)
	if hi-lo > int64(MaxSpan) || hi-lo < 0 {
		return nil, &Error{File: b.name, Reason: fmt.Sprintf("spans more than %v from its earliest row to its latest", MaxSpan)}
	}
	for i := range b.rows {
		b.rows[i].Offset = time.Duration(b.at[i] - lo)
		if s := b.idSpan[i]; s[1] > s[0] {
			b.rows[i].HashIDs = b.ids[s[0]:s[1]:s[1]]
		}
	}
	slices.SortStableFunc(b.rows, func(x, y Row) int { return cmp.Compare(x.Offset, y.Offset) })
	t := &Trace{Source: b.name, Format: format, Rows: b.rows, Clipped: b.clipped, ZeroOutput: b.zeroOutput}
	t.Span = spanOf(t.Rows)
	return t, nil
}

// spanOf is the last offset plus the mean gap (a millisecond when there
// is no gap to take the mean of).
func spanOf(rows []Row) time.Duration {
	last := rows[len(rows)-1].Offset
	gap := time.Millisecond
	if len(rows) > 1 && last > rows[0].Offset {
		gap = (last - rows[0].Offset) / time.Duration(len(rows)-1)
	}
	return last + gap
}

// count reads a token count: a whole number, written as an integer or
// as a decimal with no fraction (308 or 308.0), not negative. It is
// bounded before conversion, so no cell overflows.
func count(cell, what string) (int64, error) {
	s := strings.TrimSpace(cell)
	if s == "" {
		return 0, badRow("%s is empty", what)
	}
	v, err := parseFloat(s)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v != math.Trunc(v) {
		return 0, badRow("%s %q is not a whole number of tokens", what, clip(s))
	}
	if v < 0 {
		return 0, badRow("%s %q is negative", what, clip(s))
	}
	return int64(min(v, 2*MaxTokens)), nil
}

// clip bounds a file's text in an error (a trace's cells are counts and
// times, but a bad row may hold anything).
func clip(s string) string {
	const n = 40
	if len(s) > n {
		s = s[:n] + "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
