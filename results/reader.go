package results

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxLine bounds one line of a results file, its line end included. A
// row is a few hundred bytes; a longer line is not a results row, and
// reading it whole could take all the memory there is.
const MaxLine = 1 << 20

// ErrLineTooLong is returned (wrapped with the file and line) for a line
// longer than MaxLine. It is final: the Reader returns it from then on.
var ErrLineTooLong = fmt.Errorf("line longer than %d bytes (1 MiB)", MaxLine)

// Reader streams Records from a results file. Columns are matched by
// header name, so a file written before new columns were added still
// reads; unknown extra columns are ignored. A last line with no newline
// (a run killed mid-write) is skipped and reported by Truncated.
type Reader struct {
	br        *bufio.Reader
	name      string
	line      int
	index     []int // index[i] = position of table[i] in the file, or -1
	fields    []string
	truncated int
	pending   []byte
	err       error // a read error, returned from then on
}

// ErrNotResults is returned by NewReader when the header is not a ptuprobe
// results header.
var ErrNotResults = errors.New("not a ptuprobe results file")

// NewReader reads the header from r. name is used in error messages.
func NewReader(r io.Reader, name string) (*Reader, error) {
	rd := &Reader{br: bufio.NewReaderSize(r, 256<<10), name: name}
	line, _, err := rd.readLine()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty file: %w", name, ErrNotResults)
		}
		return nil, fmt.Errorf("read %s line 1: %w", name, err)
	}
	header, err := SplitCSVLine(nil, line)
	if err != nil {
		return nil, fmt.Errorf("%s line 1: %w", name, err)
	}
	if !IsResultsHeader(header) {
		return nil, fmt.Errorf("%s: %w", name, ErrNotResults)
	}
	rd.index = make([]int, len(table))
	for i, c := range table {
		rd.index[i] = -1
		for j, h := range header {
			if h == c.name {
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
	if len(header) < requiredColumns {
		return false
	}
	for i := range requiredColumns {
		if header[i] != table[i].name {
			return false
		}
	}
	return true
}

// Line returns the 1-based line number of the last line read.
func (rd *Reader) Line() int { return rd.line }

// Truncated returns the line number of a skipped truncated last line, or 0.
func (rd *Reader) Truncated() int { return rd.truncated }

// readLine returns the next line without its line end and whether it
// ended with a newline. A line longer than MaxLine is ErrLineTooLong.
func (rd *Reader) readLine() ([]byte, bool, error) {
	rd.pending = rd.pending[:0]
	for {
		chunk, err := rd.br.ReadSlice('\n')
		if len(rd.pending)+len(chunk) > MaxLine {
			return nil, false, ErrLineTooLong
		}
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
// lines are skipped. Errors carry the file name and line number; a row
// that does not parse is an error for that row only (the next Read goes
// on with the next line), a line longer than MaxLine or a failed read is
// final. After an error rec may be partly filled.
func (rd *Reader) Read(rec *Record) error {
	if rd.err != nil {
		return rd.err
	}
	for {
		line, complete, err := rd.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return io.EOF
			}
			rd.err = fmt.Errorf("read %s line %d: %w", rd.name, rd.line+1, err)
			return rd.err
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

// decode fills r from rd.fields through the column table; a column the
// file lacks decodes from an empty cell. It goes through every column and
// returns the first error.
func (rd *Reader) decode(r *Record) error {
	if len(rd.fields) < requiredColumns {
		return fmt.Errorf("%d fields, want at least %d", len(rd.fields), requiredColumns)
	}
	var first error
	fields, cols := rd.fields, table[:len(rd.index)]
	for i, j := range rd.index {
		cell := ""
		if uint(j) < uint(len(fields)) { // j is -1 for a column the file lacks
			cell = fields[j]
		}
		if err := cols[i].decode(r, cell); err != nil && first == nil {
			first = fmt.Errorf("column %s: %w", cols[i].name, err)
		}
	}
	return first
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
