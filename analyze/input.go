package analyze

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/internal/rowdecode"
	"github.com/ptuprobe/ptuprobe/results"
)

// DefaultValueColumn is the value column a foreign CSV is searched for when
// none is named: the column of the published events file.
const DefaultValueColumn = "retry_after_ms"

// autoGroupColumn is taken as the group column of a foreign CSV when none
// is named: it is the column of our own retry_after_ms_events.csv, so a
// published events file reads back into the same table.
const autoGroupColumn = "source_group"

// maxForeignRecord bounds one record of a foreign CSV (a line, or lines
// joined by quoted line breaks): the cap of a results line.
const maxForeignRecord = results.MaxLine

// csvReadBuffer is the read buffer under the foreign CSV parser.
const csvReadBuffer = 64 << 10

// checkEvery is how many rows are read between looks at the context.
const checkEvery = 1 << 13

// Input names one file: Name (its path) appears only in errors, Ordinal
// (1-based position on the command line) in published line references.
type Input struct {
	Name    string
	Ordinal int
	// At, when not nil, reads the same bytes Read is given, from the
	// start (the regular file Read reads, open until the Analysis): the
	// overshoot picture (OfferedLoad) of a large ptuprobe results file then
	// reads it a second time rather than keep every row (reread.go). nil
	// for a pipe, or anything that cannot be read twice.
	At io.ReaderAt
}

// ForeignColumns names the columns of a foreign CSV. An empty Value means
// DefaultValueColumn; an empty Group means source_group when present, else
// one group named after the file.
type ForeignColumns struct {
	Value string
	Group string
	// Unit is the unit of the value column: UnitMS or UnitS. Empty means
	// milliseconds, and a value column whose name says seconds (ends in _s
	// or _seconds) is then read as ms with a warning (Analysis.ReadNotes).
	Unit string
	// Status names a column of HTTP statuses: only the rows whose status
	// is 429 are events, the others are counted (Analysis.OtherStatus)
	// and skipped. Empty means the column named DefaultStatusColumn when
	// there is one (with a note that says so), else every row is an event.
	Status string
}

// Units of a foreign CSV's value column.
const (
	UnitMS = "ms"
	UnitS  = "s"
)

// DefaultStatusColumn is the status column a foreign CSV is searched for
// when none is named.
const DefaultStatusColumn = "status"

// ParseUnit checks a value unit as --value-unit takes it: ms or s.
func ParseUnit(s string) (string, error) {
	switch u := strings.ToLower(strings.TrimSpace(s)); u {
	case UnitMS, UnitS:
		return u, nil
	}
	return "", fmt.Errorf("unknown unit %q (choose ms or s)", clip(s, 16))
}

// foreignLayout is where a foreign CSV's columns are and how its values
// read.
type foreignLayout struct {
	value, group int     // group -1: the file's name is the group
	status       int     // -1: every row is an event
	scale        float64 // what a value is multiplied by to give ms
}

// BadInputError is an input the user must fix (a missing column, a bad
// header), as opposed to an I/O failure. Setting, when not empty, names the
// analysis setting that can fix it: "Labels" (rename a group), "Value" or
// "Group" (the ForeignColumns).
type BadInputError struct {
	Err     error
	Setting string
}

func (e *BadInputError) Error() string { return e.Err.Error() }
func (e *BadInputError) Unwrap() error { return e.Err }

func badInput(format string, a ...any) error {
	return &BadInputError{Err: fmt.Errorf(format, a...)}
}

// ioErrReader remembers the first read error that is not EOF, so a row the
// parser rejects (counted, not fatal) can be told from a failing disk
// (fatal).
type ioErrReader struct {
	r   io.Reader
	err error
	n   int64 // bytes read
	// sum is the CRC-32C of the bytes read, when summed: what a second
	// read of the file checks it reads again (reread.go).
	sum    uint32
	summed bool
}

// castagnoli is CRC-32C's table: the instruction set computes it at about
// 15 GB/s, 70 ms for a 10 M-row file.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (e *ioErrReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	e.n += int64(n)
	if e.summed {
		e.sum = crc32.Update(e.sum, castagnoli, p[:n])
	}
	if err != nil && !errors.Is(err, io.EOF) && e.err == nil {
		e.err = err
	}
	return n, err
}

// Read streams one file into the tally: a ptuprobe results file when its
// header is a results header (every row is an attempt; the 429s are the
// events), else a foreign CSV read with cols (every row is one 429 event).
// It holds the tally for the whole file.
func (t *Tally) Read(ctx context.Context, r io.Reader, in Input, cols ForeignColumns) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	src := &ioErrReader{r: r}
	if in.At != nil && t.load != nil {
		// The overshoot picture may read it again: what it reads then must
		// be what was read now.
		src.summed = true
		in.At = &firstRead{ReaderAt: in.At, src: src}
	}
	br := bufio.NewReaderSize(src, 64<<10)
	head, err := br.ReadSlice('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		if src.err != nil {
			return fmt.Errorf("read %s: %w", in.Name, src.err)
		}
		return badInput("%s: the first line is longer than %d bytes; not a CSV file", in.Name, br.Size())
	}
	head = append([]byte(nil), head...)
	line := bytes.TrimPrefix(bytes.TrimRight(head, "\r\n"), []byte("\ufeff"))
	if len(bytes.TrimSpace(line)) == 0 {
		return badInput("%s: empty file or empty header line", in.Name)
	}
	header, err := rowdecode.SplitCSVLine(nil, line)
	if err != nil {
		return badInput("%s line 1: %v", in.Name, err)
	}
	if results.IsResultsHeader(header) {
		t.resultsFiles++
		return t.readResults(ctx, io.MultiReader(bytes.NewReader(head), br), src, in)
	}
	t.foreignFiles++
	// The CSV parser reads the header again, without the byte order mark.
	head = bytes.TrimPrefix(head, []byte("\ufeff"))
	return t.readForeign(ctx, io.MultiReader(bytes.NewReader(head), br), src, in, header, cols)
}

func (t *Tally) readForeign(ctx context.Context, r io.Reader, src *ioErrReader, in Input, header []string, cols ForeignColumns) error {
	lay, err := t.foreignLayout(header, cols, in)
	if err != nil {
		return err
	}
	value, group := lay.value, lay.group
	fileGroup := fileGroupName(in.Name)

	// encoding/csv, because a quoted field may hold a line break (RFC
	// 4180). It buffers a whole record, and an unclosed quote makes the
	// rest of the file one record: bounded stops it after about
	// maxForeignRecord bytes of one record.
	bounded := &boundedReader{r: r, limit: maxForeignRecord + csvReadBuffer}
	cr := csv.NewReader(bufio.NewReaderSize(bounded, csvReadBuffer))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	if _, err := cr.Read(); err != nil && !errors.Is(err, io.EOF) {
		return foreignError(err, src, in, 1)
	}
	// endLine is the last line of the last record read, so that a record
	// too long to be read whole is reported from the line after it.
	endLine := 1
	for n := 0; ; n++ {
		if n%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		bounded.mark = cr.InputOffset()
		fields, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var perr *csv.ParseError
			if src.err == nil && errors.As(err, &perr) && !errors.Is(err, errRecordTooLong) {
				if perr.Line > perr.StartLine {
					// A quoted field ran on across lines before it failed:
					// the rows on them are lost, not one.
					return swallowedRows(in, perr.StartLine, perr.Line)
				}
				// A malformed line is counted and skipped; the parser goes
				// on after it.
				t.unreadable.add(LineRef{Input: in.Ordinal, Line: perr.StartLine})
				endLine = perr.Line
				continue
			}
			return foreignError(err, src, in, endLine+1)
		}
		line, _ := cr.FieldPos(0)
		last, _ := cr.FieldPos(len(fields) - 1)
		endLine = last + strings.Count(fields[len(fields)-1], "\n")
		if endLine > line && holdsRows(fields, len(header), value) {
			return swallowedRows(in, line, endLine)
		}
		if err := t.foreignRow(fields, lay, fileGroup, LineRef{Input: in.Ordinal, Line: line}); err != nil {
			return foreignRowError(err, in, line, header, group)
		}
	}
	if src.err != nil {
		return fmt.Errorf("read %s: %w", in.Name, src.err)
	}
	return nil
}

// foreignRow counts one record of a foreign CSV, read from the line of
// ref: an event, a row of another status, a line of white space (nothing)
// or a row without the columns (unreadable). It returns errTooManyGroups
// when the row's group is one past what analyze can group.
func (t *Tally) foreignRow(fields []string, lay foreignLayout, fileGroup string, ref LineRef) error {
	switch {
	case len(fields) == 1 && strings.TrimSpace(fields[0]) == "":
		return nil // a line of white space
	case lay.value >= len(fields) || lay.group >= len(fields) || lay.status >= len(fields):
		t.unreadable.add(ref)
		return nil
	case lay.status >= 0 && !is429(fields[lay.status]):
		t.otherStatus++
		return nil
	}
	raw := fileGroup
	if lay.group >= 0 {
		if raw = strings.TrimSpace(fields[lay.group]); raw == "" {
			raw = "ungrouped"
		}
	}
	t.addForeign(raw, strings.TrimSpace(fields[lay.value]), lay.scale, ref)
	if t.overflow != nil {
		return errTooManyGroups
	}
	return nil
}

// foreignRowError is the BadInputError of a row foreignRow refused (one
// past the groups analyze can group), naming the group column when the
// file has one.
func foreignRowError(err error, in Input, line int, header []string, group int) error {
	if group < 0 {
		return &BadInputError{Err: fmt.Errorf("%s line %d: %w", in.Name, line, err)}
	}
	err = fmt.Errorf("%s line %d: column %q: %w", in.Name, line, clip(header[group], 32), err)
	return &BadInputError{Setting: "Group", Err: err}
}

// swallowedRows is the error of a quoted field of a foreign CSV that runs
// on from line first to line last, over lines that are rows of their own:
// a stray quote. Counting it as one unreadable row would hide the rows it
// took (every row from first to last is lost), so the file is refused,
// naming the lines.
func swallowedRows(in Input, first, last int) error {
	return badInput("%s lines %d-%d: a quoted field opened on line %d runs on to line %d (a stray quote?), swallowing %s rows; not a CSV of events",
		in.Name, first, last, first, last, num.Grouped(float64(last-first+1), 0))
}

// holdsRows reports whether a record read across lines has a field whose
// lines after its first read as rows of the file of their own: width
// cells (the header's), a number in the value column. A field that holds
// a line break by design (a message, a note) rarely reads so; a field
// opened by a stray quote and closed by another does, on every line
// between them.
func holdsRows(fields []string, width, value int) bool {
	var cells []string
	for _, f := range fields {
		_, rest, multi := strings.Cut(f, "\n")
		for multi {
			var line string
			line, rest, multi = strings.Cut(rest, "\n")
			if strings.Count(line, ",") != width-1 {
				continue
			}
			var err error
			if cells, err = rowdecode.SplitCSVLine(cells[:0], []byte(line)); err != nil || len(cells) != width {
				continue
			}
			if _, err := strconv.ParseFloat(strings.TrimSpace(cells[value]), 64); err == nil {
				return true
			}
		}
	}
	return false
}

// foreignIndexes finds the value column and the group column (-1 for
// none: the file's name is the group) of a foreign CSV's header.
func foreignIndexes(header []string, cols ForeignColumns, in Input) (value, group int, err error) {
	valueName := cols.Value
	if valueName == "" {
		valueName = DefaultValueColumn
	}
	if value = columnIndex(header, valueName); value < 0 {
		return 0, 0, &BadInputError{Setting: "Value", Err: fmt.Errorf("%s has no column %q (its columns: %s)", in.Name, valueName, describeColumns(header))}
	}
	if cols.Group == "" {
		return value, columnIndex(header, autoGroupColumn), nil
	}
	if group = columnIndex(header, cols.Group); group < 0 {
		return 0, 0, &BadInputError{Setting: "Group", Err: fmt.Errorf("%s has no column %q (its columns: %s)", in.Name, cols.Group, describeColumns(header))}
	}
	return value, group, nil
}

// foreignLayout finds the columns of a foreign CSV's header (and notes
// for the terminal how it reads them: Analysis.ReadNotes).
func (t *Tally) foreignLayout(header []string, cols ForeignColumns, in Input) (foreignLayout, error) {
	value, group, err := foreignIndexes(header, cols, in)
	if err != nil {
		return foreignLayout{}, err
	}
	lay := foreignLayout{value: value, group: group, status: -1, scale: 1}
	name := strings.TrimSpace(header[value])
	switch cols.Unit {
	case UnitS:
		lay.scale = 1000
	case "":
		if strings.HasSuffix(name, "_s") || strings.HasSuffix(name, "_seconds") {
			t.note(fmt.Sprintf("warning: %s: value column %q is named like seconds but is read as ms; give --value-unit s (or --value-unit ms to keep ms)", in.Name, clip(name, 32)))
		}
	}
	switch {
	case cols.Status != "":
		if lay.status = columnIndex(header, cols.Status); lay.status < 0 {
			return foreignLayout{}, &BadInputError{Setting: "Status", Err: fmt.Errorf("%s has no column %q (its columns: %s)", in.Name, cols.Status, describeColumns(header))}
		}
	default:
		if lay.status = columnIndex(header, DefaultStatusColumn); lay.status >= 0 {
			t.note(fmt.Sprintf("note: %s: column %q read as the HTTP status: only its 429 rows are events (--status-column names another)", in.Name, DefaultStatusColumn))
		}
	}
	for _, i := range []int{lay.value, lay.group, lay.status} {
		t.noteRepeated(header, i, in)
	}
	return lay, nil
}

// noteRepeated warns when column i of header (-1: none) is not the only
// column of its name: the first is read, and the one meant may be
// another.
func (t *Tally) noteRepeated(header []string, i int, in Input) {
	if i < 0 {
		return
	}
	name := strings.TrimSpace(header[i])
	var at []string
	for j, h := range header {
		if strings.TrimSpace(h) == name {
			at = append(at, strconv.Itoa(j+1))
		}
	}
	if len(at) > 1 {
		t.note(fmt.Sprintf("warning: %s: %d columns are named %q (columns %s): column %d is read", in.Name, len(at), clip(name, 32), strings.Join(at, ", "), i+1))
	}
}

// is429 reports whether a status cell says 429 ("429", " 429 ", "429.0").
func is429(cell string) bool {
	v, err := strconv.ParseFloat(strings.TrimSpace(cell), 64)
	return err == nil && v == 429
}

// note keeps a line for the terminal about how an input was read, once.
func (t *Tally) note(s string) {
	if !slices.Contains(t.notes, s) {
		t.notes = append(t.notes, s)
	}
}

// errTooManyGroups ends reading at the row of the first group past
// MaxRawGroups.
var errTooManyGroups = fmt.Errorf("more than %d distinct groups, more than analyze can group (a report publishes at most %d)", MaxRawGroups, MaxPublishedGroups)

// foreignError is the error that ends reading a foreign CSV at line.
func foreignError(err error, src *ioErrReader, in Input, line int) error {
	switch {
	case src.err != nil:
		return fmt.Errorf("read %s: %w", in.Name, src.err)
	case errors.Is(err, errRecordTooLong):
		return badInput("%s line %d: a line, or a quoted field, runs on for more than %d bytes (an unclosed quote?); not a CSV of events", in.Name, line, maxForeignRecord)
	}
	return fmt.Errorf("read %s line %d: %w", in.Name, line, err)
}

// errRecordTooLong ends a foreign CSV record that runs past the cap.
var errRecordTooLong = errors.New("record longer than the cap")

// boundedReader hands out at most limit bytes past mark, the offset at
// which the record being parsed starts: encoding/csv keeps a whole record
// in memory, so this bounds what one record, or one unclosed quote, can
// make it buffer.
type boundedReader struct {
	r     io.Reader
	n     int64 // bytes handed out
	mark  int64
	limit int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	room := b.mark + b.limit - b.n
	if room <= 0 {
		return 0, errRecordTooLong
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	return n, err
}

// addForeign counts one foreign event: an empty value is a 429 without an
// advised wait; a value that is not a usable wait (usableWait) is invalid
// and its line is remembered (not its text, which could be anything).
func (t *Tally) addForeign(raw, value string, scale float64, ref LineRef) {
	g := t.group(raw)
	g.noteShape("")
	g.events++
	if value == "" {
		g.none++
		return
	}
	v, err := strconv.ParseFloat(value, 64)
	v *= scale
	if err != nil || !usableWait(v) {
		g.invalid++
		t.invalid.add(ref)
		return
	}
	g.addWait(v)
}

// usableWait reports whether v can be published as an advised wait: a
// number from 0 to results.MaxWaitMS, the cap every reader of a wait
// applies. NaN and the infinities are not.
func usableWait(v float64) bool { return v >= 0 && v <= results.MaxWaitMS }

func columnIndex(header []string, name string) int {
	for i, h := range header {
		if strings.TrimSpace(h) == name {
			return i
		}
	}
	return -1
}

// describeColumns lists a header for an error message, bounded and quoted
// so that a binary file does not flood the terminal.
func describeColumns(header []string) string {
	const maxColumns = 12
	parts := make([]string, 0, min(len(header), maxColumns)+1)
	for i, h := range header {
		if i == maxColumns {
			parts = append(parts, fmt.Sprintf("… %d more", len(header)-maxColumns))
			break
		}
		parts = append(parts, strconv.Quote(clip(h, 32)))
	}
	return strings.Join(parts, ", ")
}

// fileGroupName names the one group of a foreign CSV without a group
// column: the file's base name without its extension.
func fileGroupName(path string) string {
	base := filepath.Base(path)
	if name := strings.TrimSuffix(base, filepath.Ext(base)); name != "" {
		return name
	}
	return base
}
