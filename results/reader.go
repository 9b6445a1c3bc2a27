package results

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/ptuprobe/ptuprobe/internal/rowdecode"
)

// MaxLine bounds one line of a results file, its line end included. A
// row is a few hundred bytes; a longer line is not a results row, and
// reading it whole could take all the memory there is.
const MaxLine = 1 << 20

// ErrLineTooLong is returned (wrapped with the file and line) for a line
// longer than MaxLine. It is final: the Reader returns it from then on.
var ErrLineTooLong = fmt.Errorf("line longer than %d bytes (1 MiB)", MaxLine)

// lineCap is the longest line a Reader takes: MaxLine, unless a test
// lowered it (SetLineCapForTests).
var lineCap = MaxLine

// SetLineCapForTests makes every Reader read after it take lines of at
// most n bytes instead of MaxLine (a longer one is ErrLineTooLong, whose
// text still names MaxLine), and blocks (rowdecode.ReadBlock) of more
// than n. It is for the tests of a package that reads files of several
// blocks (analyze's: a block holds the longest line, so a file of
// several blocks under a cap of 16 KiB is some 14 times smaller than
// under MaxLine's); call it from TestMain, before any Reader. LineCap is
// then the cap.
func SetLineCapForTests(n int) { lineCap = n }

// LineCap is the longest line a Reader takes: MaxLine, unless a test
// lowered it (SetLineCapForTests).
func LineCap() int { return lineCap }

// Reader streams Records from a results file. Columns are matched by
// header name, so a file written before new columns were added still
// reads; unknown extra columns are ignored. A last line with no newline
// (a run killed mid-write) is skipped and reported by Truncated.
type Reader struct {
	br        *bufio.Reader
	name      string
	line      int
	index     []int // index[i] = position of table[i] in the file, or -1
	header    []string
	fields    []string
	truncated int
	pending   []byte
	err       error // a read error, returned from then on
	// For readBlock: the start of a line that did not fit in the last
	// block, and what the underlying reader last returned.
	carry   []byte
	readErr error
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
	header, err := rowdecode.SplitCSVLine(nil, line)
	if err != nil {
		return nil, fmt.Errorf("%s line 1: %w", name, err)
	}
	if !IsResultsHeader(header) {
		return nil, fmt.Errorf("%s: %w", name, ErrNotResults)
	}
	rd.index = layout(header)
	rd.header = header
	return rd, nil
}

// layout returns where each column of the table sits in a file with this
// header: index[i] is the position of table[i], or -1 when the file lacks
// it.
func layout(header []string) []int {
	index := make([]int, len(table))
	for i, c := range table {
		index[i] = slices.Index(header, c.name)
	}
	return index
}

// decoder returns a lineDecoder of this file's rows that fills the fields
// of the columns named in keep (of Columns), or of every column when keep
// is empty, for rows cut by readBlock (rowdecode.NewDecoder).
func (rd *Reader) decoder(keep ...string) (*lineDecoder, error) {
	return newLineDecoder(rd.name, rd.index, keep)
}

// readableDecoder is decoder for rows known to read without error: rows
// of a file read before, none of whose rows failed. It checks only the
// cells of the columns it keeps, which it fills as decoder's lineDecoder
// does; a row that would not read may then be taken, its kept fields
// holding anything (rowdecode.NewReadableDecoder).
func (rd *Reader) readableDecoder(keep ...string) (*lineDecoder, error) {
	d, err := newLineDecoder(rd.name, rd.index, keep)
	if d != nil {
		d.markReadable()
	}
	return d, err
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

// Column returns the position of the column named name in this file's
// header, or -1: a column a newer ptuprobe writes that this one's table
// may not list yet (Cell reads it).
func (rd *Reader) Column(name string) int { return slices.Index(rd.header, name) }

// Cell returns the cell at position i (of Column) of the last row Read
// returned, or "" when the row has none there.
func (rd *Reader) Cell(i int) string {
	if i < 0 || i >= len(rd.fields) {
		return ""
	}
	return rd.fields[i]
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
		if len(rd.pending)+len(chunk) > lineCap {
			return nil, false, ErrLineTooLong
		}
		if err == nil {
			rd.line++
			if len(rd.pending) > 0 {
				rd.pending = append(rd.pending, chunk...)
				chunk = rd.pending
			}
			row, _ := rowOf(chunk)
			return row, true, nil
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
		if isBlank(line) {
			continue
		}
		rd.fields, err = rowdecode.SplitCSVLine(rd.fields[:0], line)
		if err != nil {
			return fmt.Errorf("%s line %d: %w", rd.name, rd.line, err)
		}
		if err := decodeFields(rd.index, rd.fields, rec); err != nil {
			return fmt.Errorf("%s line %d: %w", rd.name, rd.line, err)
		}
		return nil
	}
}

// rowOf trims a complete line's end (its newline, and any carriage returns
// or newlines before it) and reports whether what is left is blank: a line
// Read skips.
func rowOf(line []byte) (row []byte, blank bool) {
	n := len(line)
	for n > 0 && (line[n-1] == '\n' || line[n-1] == '\r') {
		n--
	}
	return line[:n], isBlank(line[:n])
}

// isBlank reports whether a row holds only white space (as bytes.TrimSpace
// sees it): Read skips it. A row that starts with a printable ASCII
// character is not, which is every row but a blank one.
func isBlank(row []byte) bool {
	if len(row) > 0 && row[0] > ' ' && row[0] < utf8.RuneSelf {
		return false
	}
	return len(bytes.TrimSpace(row)) == 0
}

// decodeFields fills r from the cells of one row through the column
// table; index is the file's layout, and a column the file (or the row)
// lacks decodes from an empty cell. It goes through every column and
// returns the first error.
func decodeFields(index []int, fields []string, r *Record) error {
	if len(fields) < requiredColumns {
		return fmt.Errorf("%d fields, want at least %d", len(fields), requiredColumns)
	}
	var first error
	cols := table[:len(index)]
	for i, j := range index {
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

// readBlock is rowdecode.ReadBlock: it reads the next lines into buf, as
// many whole lines as fit, instead of one Record as Read does, so that
// the rows can be decoded elsewhere, on several cores at once (decoder,
// lineDecoder.Rows). buf must be longer than MaxLine; a partial line at
// its end is kept for the next call, which starts with it.
//
// The end of the file is io.EOF, after a truncated last line is skipped
// and reported (Truncated), as with Read. A line longer than MaxLine, as
// far as readBlock can see it, and a failed read are the final errors of
// Read, returned once the lines before them are; a long line inside a
// block is Rows' to report. Line then returns the last line read. A
// Reader is read either with Read or with readBlock, not both.
func (rd *Reader) readBlock(buf []byte) (rowdecode.Block, error) {
	if rd.err != nil {
		return rowdecode.Block{}, rd.err
	}
	if len(buf) <= lineCap {
		return rowdecode.Block{}, fmt.Errorf("read %s: a block buffer of %d bytes is not longer than a line may be (%d)", rd.name, len(buf), lineCap)
	}
	n := copy(buf, rd.carry)
	rd.carry = rd.carry[:0]
	for empty := 0; n < len(buf) && rd.readErr == nil; {
		var m int
		m, rd.readErr = rd.br.Read(buf[n:])
		n += m
		if empty++; m > 0 {
			empty = 0
		} else if empty == 100 { // as bufio gives up on a reader that never reads
			rd.readErr = io.ErrNoProgress
		}
	}
	end := bytes.LastIndexByte(buf[:n], '\n') + 1
	rd.carry = append(rd.carry, buf[end:n]...)
	blk := rowdecode.Block{Text: buf[:end], Line: rd.line + 1}
	rd.line += bytes.Count(blk.Text, []byte{'\n'})
	switch {
	case len(rd.carry) > lineCap:
		// The line that starts after the block is already too long.
		rd.err = fmt.Errorf("read %s line %d: %w", rd.name, rd.line+1, ErrLineTooLong)
	case rd.readErr == nil || end > 0:
		// Whole lines are returned before an error or the end is seen.
	case errors.Is(rd.readErr, io.EOF):
		if len(rd.carry) > 0 {
			rd.line++
			rd.truncated = rd.line
			rd.carry = rd.carry[:0]
		}
		return rowdecode.Block{}, io.EOF
	default:
		rd.err = fmt.Errorf("read %s line %d: %w", rd.name, rd.line+1, rd.readErr)
	}
	if end == 0 && rd.err != nil {
		return rowdecode.Block{}, rd.err
	}
	return blk, nil
}
