// Package rowdecode is the fast path of reading a ptuprobe results file,
// for analyze: the file cut into blocks of whole lines (ReadBlock), the
// rows of each block decoded on another core by a Decoder of its own.
//
// Package results implements it, since its decoding is results' column
// table, and installs it here when it is loaded; rowdecode only carries
// it, so that results' public API stays NewReader and Read. What a
// Decoder guarantees (a row it decodes without error is a row Read reads
// without error, and the other way round, with the same error) is said in
// results' lineDecoder and checked by its FuzzLineDecoder.
//
// It imports the standard library only; results imports it, never the
// other way round.
package rowdecode

import (
	"iter"
)

// Block is a run of whole lines of a results file, as ReadBlock cuts it,
// for a Decoder to decode (Rows).
type Block struct {
	// Text holds whole lines, each with its newline: a slice of the buffer
	// given to ReadBlock.
	Text []byte
	// Line is the number of the first line of Text in the file.
	Line int
}

// Decoder decodes the rows of the Blocks of one file into records of
// type R (results.Record). It is not safe for concurrent use: each
// goroutine decodes with a Clone of its own.
type Decoder[R any] interface {
	// Rows decodes the rows of b in order: for each line that is not
	// blank it fills rec and yields the line's number and Read's error for
	// it (nil when the row reads). A line longer than results.MaxLine
	// yields Read's final error and ends the rows.
	Rows(b Block, rec *R) iter.Seq2[int, error]
	// Clone returns a Decoder of the same file and columns that shares no
	// scratch with this one.
	Clone() Decoder[R]
}

// Source is the fast path as package results installs it. The reader
// each function takes is a *results.Reader.
type Source struct {
	ReadBlock  func(rd any, buf []byte) (Block, error)
	NewDecoder func(rd any, readable bool, keep []string) (any, error)
}

var source Source

// Install is package results' own: it installs the fast path when results
// is loaded.
func Install(s Source) { source = s }

// ReadBlock reads the next lines of rd (a *results.Reader) into buf, as
// many whole lines as fit, for a Decoder to decode: results.Reader's read
// without the decoding. buf must be longer than results.MaxLine; a
// partial line at its end is kept for the next call, which starts with
// it. The end of the file is io.EOF, after a truncated last line is
// skipped and reported (Reader.Truncated), as with Read; a line longer
// than MaxLine, as far as ReadBlock sees it, and a failed read are Read's
// final errors, returned once the lines before them are. A Reader is read
// either with Read or with ReadBlock, not both.
func ReadBlock(rd any, buf []byte) (Block, error) {
	return source.ReadBlock(rd, buf)
}

// NewDecoder returns a Decoder of rd's rows (rd a *results.Reader, R
// results.Record) that fills the fields of the columns named in keep (of
// results.Columns), or of every column when keep is empty; the other
// fields are left as they were, or hold anything.
func NewDecoder[R any](rd any, keep ...string) (Decoder[R], error) {
	return newDecoder[R](rd, false, keep)
}

// NewReadableDecoder is NewDecoder for rows known to read without error:
// rows of a file read before, none of whose rows failed. It checks only
// the cells of the columns it keeps, which it fills as NewDecoder's does;
// a row that would not read may then be taken, its kept fields holding
// anything.
func NewReadableDecoder[R any](rd any, keep ...string) (Decoder[R], error) {
	return newDecoder[R](rd, true, keep)
}

func newDecoder[R any](rd any, readable bool, keep []string) (Decoder[R], error) {
	d, err := source.NewDecoder(rd, readable, keep)
	if err != nil {
		return nil, err
	}
	return d.(Decoder[R]), nil
}
