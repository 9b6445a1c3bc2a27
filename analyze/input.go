package analyze

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ptuprobe/ptuprobe/results"
)

// DefaultValueColumn is the value column a foreign CSV is searched for when
// none is named: the column of the published events file.
const DefaultValueColumn = "retry_after_ms"

// autoGroupColumn is taken as the group column of a foreign CSV when none
// is named: it is the column of our own retry_after_ms_events.csv, so a
// published events file reads back into the same table.
const autoGroupColumn = "source_group"

// maxForeignLine bounds one line of a foreign CSV.
const maxForeignLine = 1 << 20

// checkEvery is how many rows are read between looks at the context.
const checkEvery = 1 << 13

// Input names one file: Name (its path) appears only in errors, Ordinal
// (1-based position on the command line) in published line references.
type Input struct {
	Name    string
	Ordinal int
}

// ForeignColumns names the columns of a foreign CSV. An empty Value means
// DefaultValueColumn; an empty Group means source_group when present, else
// one group named after the file.
type ForeignColumns struct {
	Value string
	Group string
}

// BadInputError is an input the user must fix (a missing column, a bad
// header), as opposed to an I/O failure.
type BadInputError struct{ Err error }

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
}

func (e *ioErrReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && e.err == nil {
		e.err = err
	}
	return n, err
}

// Read streams one file into the tally: a ptuprobe results file when its
// header is a results header (every row is an attempt; the 429s are the
// events), else a foreign CSV read with cols (every row is one 429 event).
func (t *Tally) Read(ctx context.Context, r io.Reader, in Input, cols ForeignColumns) error {
	src := &ioErrReader{r: r}
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
	header, err := results.SplitCSVLine(nil, line)
	if err != nil {
		return badInput("%s line 1: %v", in.Name, err)
	}
	rest := io.MultiReader(bytes.NewReader(head), br)
	if results.IsResultsHeader(header) {
		t.resultsFiles++
		return t.readResults(ctx, rest, src, in)
	}
	t.foreignFiles++
	return t.readForeign(ctx, rest, src, in, header, cols)
}

func (t *Tally) readResults(ctx context.Context, r io.Reader, src *ioErrReader, in Input) error {
	rd, err := results.NewReader(r, in.Name)
	if err != nil {
		return badInput("%v", err)
	}
	rec := results.Blank()
	for n := 0; ; n++ {
		if n%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		err := rd.Read(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if src.err != nil {
				return fmt.Errorf("read %s: %w", in.Name, src.err)
			}
			t.unreadable.add(LineRef{Input: in.Ordinal, Line: rd.Line()})
			continue
		}
		t.addRecord(&rec)
	}
	if src.err != nil {
		return fmt.Errorf("read %s: %w", in.Name, src.err)
	}
	if l := rd.Truncated(); l > 0 {
		t.truncated = append(t.truncated, LineRef{Input: in.Ordinal, Line: l})
	}
	return nil
}

func (t *Tally) readForeign(ctx context.Context, r io.Reader, src *ioErrReader, in Input, header []string, cols ForeignColumns) error {
	valueName := cols.Value
	if valueName == "" {
		valueName = DefaultValueColumn
	}
	value := columnIndex(header, valueName)
	if value < 0 {
		hint := "name it with --value-column"
		if cols.Value != "" {
			hint = "check --value-column"
		}
		return badInput("%s has no column %q (its columns: %s); %s", in.Name, valueName, describeColumns(header), hint)
	}
	group := -1
	switch {
	case cols.Group != "":
		if group = columnIndex(header, cols.Group); group < 0 {
			return badInput("%s has no column %q (its columns: %s); check --group-column", in.Name, cols.Group, describeColumns(header))
		}
	default:
		group = columnIndex(header, autoGroupColumn)
	}
	fileGroup := fileGroupName(in.Name)

	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxForeignLine)
	var fields []string
	for line := 0; sc.Scan(); {
		line++
		if line == 1 {
			continue // the header, already parsed
		}
		if line%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		text := sc.Bytes()
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		var err error
		fields, err = results.SplitCSVLine(fields[:0], bytes.TrimRight(text, "\r"))
		if err != nil || value >= len(fields) || (group >= 0 && group >= len(fields)) {
			t.unreadable.add(LineRef{Input: in.Ordinal, Line: line})
			continue
		}
		raw := fileGroup
		if group >= 0 {
			if raw = strings.TrimSpace(fields[group]); raw == "" {
				raw = "ungrouped"
			}
		}
		t.addForeign(raw, strings.TrimSpace(fields[value]), LineRef{Input: in.Ordinal, Line: line})
	}
	if src.err != nil {
		return fmt.Errorf("read %s: %w", in.Name, src.err)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return badInput("%s: a line is longer than %d bytes; not a CSV of events", in.Name, maxForeignLine)
		}
		return fmt.Errorf("read %s: %w", in.Name, err)
	}
	return nil
}

// addForeign counts one foreign event: an empty value is a 429 without an
// advised wait; a value that is not a finite non-negative number is invalid
// and its line is remembered (not its text, which could be anything).
func (t *Tally) addForeign(raw, value string, ref LineRef) {
	g := t.group(raw)
	g.noteShape("")
	g.events++
	if value == "" {
		g.none++
		return
	}
	v, err := strconv.ParseFloat(value, 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		g.invalid++
		t.invalid.add(ref)
		return
	}
	g.waits = append(g.waits, v)
}

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
