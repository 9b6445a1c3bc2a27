package results

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Reader streams Records from a results file. Columns are matched by
// header name, so a file written before new columns were added still
// reads; unknown extra columns are ignored. A last line with no newline
// (a run killed mid-write) is skipped and reported by Truncated.
type Reader struct {
	br        *bufio.Reader
	name      string
	line      int
	index     []int // index[i] = position of Columns[i] in the file, or -1
	fields    []string
	truncated int
	pending   []byte
}

// ErrNotResults is returned by NewReader when the header is not a ptuprobe
// results header.
var ErrNotResults = errors.New("not a ptuprobe results file")

// NewReader reads the header from r. name is used in error messages.
func NewReader(r io.Reader, name string) (*Reader, error) {
	rd := &Reader{br: bufio.NewReaderSize(r, 256<<10), name: name}
	line, complete, err := rd.readLine()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty file: %w", name, ErrNotResults)
		}
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	_ = complete
	header, err := SplitCSVLine(nil, line)
	if err != nil {
		return nil, fmt.Errorf("%s line 1: %w", name, err)
	}
	if !IsResultsHeader(header) {
		return nil, fmt.Errorf("%s: %w", name, ErrNotResults)
	}
	rd.index = make([]int, len(Columns))
	for i, c := range Columns {
		rd.index[i] = -1
		for j, h := range header {
			if h == c {
				rd.index[i] = j
				break
			}
		}
	}
	return rd, nil
}

// IsResultsHeader reports whether a CSV header is a ptuprobe results
// header: it starts with the leading columns of Columns that every version
// of the file has had.
func IsResultsHeader(header []string) bool {
	const required = 17 // run_id … spillover
	if len(header) < required {
		return false
	}
	for i := 0; i < required; i++ {
		if header[i] != Columns[i] {
			return false
		}
	}
	return true
}

// Line returns the 1-based line number of the last line read.
func (rd *Reader) Line() int { return rd.line }

// Truncated returns the line number of a skipped truncated last line, or 0.
func (rd *Reader) Truncated() int { return rd.truncated }

// readLine returns the next line without its newline and whether it ended
// with one.
func (rd *Reader) readLine() ([]byte, bool, error) {
	rd.pending = rd.pending[:0]
	for {
		chunk, err := rd.br.ReadSlice('\n')
		if err == nil {
			rd.line++
			if len(rd.pending) > 0 {
				rd.pending = append(rd.pending, chunk...)
				chunk = rd.pending
			}
			return bytes.TrimRight(chunk, "\r\n"), true, nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			rd.pending = append(rd.pending, chunk...)
			continue
		}
		if errors.Is(err, io.EOF) {
			rd.pending = append(rd.pending, chunk...)
			if len(rd.pending) == 0 {
				return nil, false, io.EOF
			}
			rd.line++
			return rd.pending, false, nil
		}
		return nil, false, err
	}
}

// Read fills rec with the next row. It returns io.EOF at the end. Blank
// lines are skipped. Errors carry the file name and line number.
func (rd *Reader) Read(rec *Record) error {
	for {
		line, complete, err := rd.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return io.EOF
			}
			return fmt.Errorf("read %s line %d: %w", rd.name, rd.line+1, err)
		}
		if !complete {
			rd.truncated = rd.line
			return io.EOF
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		rd.fields, err = SplitCSVLine(rd.fields[:0], line)
		if err != nil {
			return fmt.Errorf("%s line %d: %w", rd.name, rd.line, err)
		}
		if err := rd.decode(rec); err != nil {
			return fmt.Errorf("%s line %d: %w", rd.name, rd.line, err)
		}
		return nil
	}
}

func (rd *Reader) field(col int) string {
	j := rd.index[col]
	if j < 0 || j >= len(rd.fields) {
		return ""
	}
	return rd.fields[j]
}

func (rd *Reader) decode(r *Record) error {
	if len(rd.fields) < 17 {
		return fmt.Errorf("%d fields, want at least 17", len(rd.fields))
	}
	var p parser
	r.RunID = rd.field(0)
	r.Shape = rd.field(1)
	r.Group = rd.field(2)
	r.Seq = p.int("seq", rd.field(3), false)
	r.Attempt = p.int("attempt", rd.field(4), false)
	r.Wave = p.int("wave", rd.field(5), true)
	r.IntendedMS = p.float("intended_ms", rd.field(6), true)
	r.SentMS = p.float("sent_ms", rd.field(7), true)
	r.TTFBMS = p.float("ttfb_ms", rd.field(8), true)
	r.LatencyMS = p.float("latency_ms", rd.field(9), true)
	r.Status = p.int("status", rd.field(10), false)
	r.Error = rd.field(11)
	r.RetryAfterMS = rd.field(12)
	r.RetryAfter = rd.field(13)
	r.WaitMS = p.float("wait_ms", rd.field(14), true)
	r.WaitSource = rd.field(15)
	r.Spillover = rd.field(16) == "1"
	r.RatelimitRemainingRequests = p.int("ratelimit_remaining_requests", rd.field(17), true)
	r.RatelimitRemainingTokens = p.int("ratelimit_remaining_tokens", rd.field(18), true)
	r.UtilizationPct = p.float("utilization_pct", rd.field(19), true)
	r.PromptTokens = p.int("prompt_tokens", rd.field(20), true)
	r.CachedTokens = p.int("cached_tokens", rd.field(21), true)
	r.CompletionTokens = p.int("completion_tokens", rd.field(22), true)
	r.MaxTokens = p.int("max_tokens", rd.field(23), true)
	return p.err
}

type parser struct{ err error }

func (p *parser) int(col, s string, optional bool) int {
	if s == "" && optional {
		return None
	}
	v, err := strconv.Atoi(s)
	if (err != nil || v < 0) && p.err == nil {
		p.err = fmt.Errorf("column %s: %q is not a non-negative integer", col, truncate(s, 32))
		return None
	}
	return v
}

func (p *parser) float(col, s string, optional bool) float64 {
	if s == "" && optional {
		return None
	}
	v, err := strconv.ParseFloat(s, 64)
	if (err != nil || v < 0 || v != v || v > 1e15) && p.err == nil {
		p.err = fmt.Errorf("column %s: %q is not a non-negative number", col, truncate(s, 32))
		return None
	}
	return v
}

// SplitCSVLine splits one RFC 4180 line (no embedded newlines) into
// fields, appending to dst. It rejects stray quotes. Unquoted fields are
// slices of one string made from the line, so a row costs one allocation
// rather than one per field.
func SplitCSVLine(dst []string, line []byte) ([]string, error) {
	s := string(line)
	i := 0
	for {
		if i < len(s) && s[i] == '"' {
			var b strings.Builder
			i++
			for {
				q := strings.IndexByte(s[i:], '"')
				if q < 0 {
					return dst, errors.New("unterminated quoted field")
				}
				b.WriteString(s[i : i+q])
				i += q + 1
				if i < len(s) && s[i] == '"' {
					b.WriteByte('"')
					i++
					continue
				}
				break
			}
			dst = append(dst, b.String())
			if i == len(s) {
				return dst, nil
			}
			if s[i] != ',' {
				return dst, errors.New("text after a closing quote")
			}
			i++
			continue
		}
		c := strings.IndexByte(s[i:], ',')
		end := len(s)
		if c >= 0 {
			end = i + c
		}
		f := s[i:end]
		if strings.IndexByte(f, '"') >= 0 {
			return dst, errors.New("stray quote in unquoted field")
		}
		dst = append(dst, f)
		if c < 0 {
			return dst, nil
		}
		i = end + 1
	}
}
