package analyze

import (
	"context"
	"errors"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/results"
)

// TestForeignQuotedLineBreaks reads RFC 4180 fields that hold a line
// break, in the group column and in a column that is not read; line
// references after them still name the physical line.
func TestForeignQuotedLineBreaks(t *testing.T) {
	t.Parallel()
	content := "source,note,retry_after_ms\r\n" + // line 1
		"\"night\nrun\",plain,5\n" + // lines 2–3
		"day,\"two\r\nlines, one \"\"quote\"\"\",7\n" + // lines 4–5
		"day,x,abc\n" + // line 6: invalid value
		"\n" + // line 7: blank
		"\"night\nrun\",,9\n" + // lines 8–9
		"day,\"a\nb\nc\",oops\n" // lines 10–12: invalid value
	path := writeFile(t, t.TempDir(), "events.csv", content)
	a, err := analyzeFiles(t, ForeignColumns{Group: "source"}, Labels{"night\nrun": "Night run"}, 1, path)
	if err != nil {
		t.Fatal(err)
	}
	night, day := a.GroupByLabel("Night run"), a.GroupByLabel("day")
	if night == nil || day == nil {
		t.Fatalf("groups %+v", a.Groups)
	}
	if night.Count() != 2 || night.Waits[0] != 5 || night.Waits[1] != 9 {
		t.Errorf("night run waits %v, want [5 9]", night.Waits)
	}
	if day.Count() != 1 || day.Events != 3 || day.NoWait.Invalid != 2 {
		t.Errorf("day: n=%d events=%d invalid=%d, want 1 3 2", day.Count(), day.Events, day.NoWait.Invalid)
	}
	if got := formatLineRefs(a.InvalidValues.First, 1); got != "line 6, line 10" {
		t.Errorf("invalid values at %q, want line 6, line 10", got)
	}
	if a.UnreadableRows.Count != 0 {
		t.Errorf("unreadable rows %+v", a.UnreadableRows)
	}

	// Without a rename the label cannot be published: the one rule says why.
	_, err = analyzeFiles(t, ForeignColumns{Group: "source"}, nil, 1, path)
	var bad *BadInputError
	if !errors.As(err, &bad) || !strings.Contains(err.Error(), "label must be printable: character 6 is U+000A") {
		t.Errorf("err = %v, want the label refused", err)
	}
}

// TestForeignMalformedRecords counts malformed records by the line they
// start on and reads on after them.
func TestForeignMalformedRecords(t *testing.T) {
	t.Parallel()
	content := lines(
		"g,retry_after_ms",
		`a,1`,      // line 2
		`a"b,2`,    // line 3: bare quote
		`"a"x,3`,   // line 4: text after a closing quote
		`a`,        // line 5: no value column
		"   ",      // line 6: white space only, skipped
		`"a","4"`,  // line 7
		`"a,b"",5`, // line 8: a quote that closes only at the end of the file
	)
	path := writeFile(t, t.TempDir(), "events.csv", content)
	a, err := analyzeFiles(t, ForeignColumns{Group: "g"}, nil, 1, path)
	if err != nil {
		t.Fatal(err)
	}
	if g := a.GroupByLabel("a"); g == nil || g.Count() != 2 {
		t.Fatalf("group a: %+v", g)
	}
	if got := formatLineRefs(a.UnreadableRows.First, 1); got != "line 3, line 4, line 5, line 8" {
		t.Errorf("unreadable rows at %q", got)
	}
}

// TestForeignStrayQuoteSwallowsRows: a quoted field opened by a stray
// quote runs on over the rows after it; the file is refused, naming the
// lines and the rows lost, rather than counted as one unreadable row.
func TestForeignStrayQuoteSwallowsRows(t *testing.T) {
	t.Parallel()
	rows := func(n int, at map[int]string) string {
		var b strings.Builder
		b.WriteString("source_group,retry_after_ms\n")
		for i := 1; i <= n; i++ {
			row := "g," + strconv.Itoa(i%100)
			if edit, ok := at[i]; ok {
				row = strings.ReplaceAll(edit, "ROW", row)
			}
			b.WriteString(row + "\n")
		}
		return b.String()
	}
	cases := []struct {
		name, content, want string // want "": the file reads
	}{
		// The file: a quote at the start of row 2,501 (line 2,502)
		// that nothing closes.
		{"to the end of the file", rows(5000, map[int]string{2501: `"ROW`}),
			"events.csv lines 2502-5001: a quoted field opened on line 2502 runs on to line 5001 (a stray quote?), swallowing 2,500 rows; not a CSV of events"},
		{"to a quote that ends nothing", rows(50, map[int]string{10: `"ROW`, 20: `g"x,5`}),
			"events.csv lines 11-21: a quoted field opened on line 11 runs on to line 21 (a stray quote?), swallowing 11 rows"},
		{"to a second stray quote", rows(50, map[int]string{10: `"ROW`, 20: `g",5`}),
			"events.csv lines 11-21: a quoted field opened on line 11 runs on to line 21 (a stray quote?), swallowing 11 rows"},
		{"a note with lines of its own", "source_group,retry_after_ms,note\n" + `g,5,"one, two` + "\nthree, 4\n" + `five, six"` + "\ng,6,\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tally := NewTally(false)
			err := tally.Read(context.Background(), strings.NewReader(c.content), Input{Name: "events.csv", Ordinal: 1}, ForeignColumns{})
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var bad *BadInputError
			if !errors.As(err, &bad) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want a BadInputError with %q", err, c.want)
			}
		})
	}
}

// TestResultsStrayQuoteCostsItsRow: ptuprobe's own files are read line by
// line (no field of theirs holds a line break), so a quote opened in one
// row and another one rows later cost those two rows, each counted and
// named, and every row between them reads, on either path (Read,
// ReadParallel).
func TestResultsStrayQuoteCostsItsRow(t *testing.T) {
	t.Parallel()
	recs := make([]results.Record, 40)
	for i := range recs {
		recs[i] = attempt("team-a", "burst", 429, float64(i), results.WaitRetryAfterMS)
	}
	rows := strings.SplitAfter(resultsContent(t, recs...), "\n")
	rows[11] = strings.Replace(rows[11], ",team-a,", `,"team-a,`, 1) // line 12: opens a quote
	rows[21] = strings.Replace(rows[21], ",team-a,", `,team-a",`, 1) // line 22: "closes" it
	content := strings.Join(rows, "")
	reads := map[string]func(*Tally, io.Reader, Input) error{
		"in blocks": func(tl *Tally, r io.Reader, in Input) error {
			return tl.Read(context.Background(), r, in, ForeignColumns{})
		},
		"row by row": func(tl *Tally, r io.Reader, in Input) error { return tl.readSequential(r, in) },
	}
	for name, read := range reads {
		a, readErr, err := analysisOf(t, []string{content}, false, GroupByGroup, read)
		if err = errors.Join(readErr, err); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if a.Overall.Count() != 38 {
			t.Errorf("%s: %d waits, want 38", name, a.Overall.Count())
		}
		if got := formatLineRefs(a.UnreadableRows.First, 1); a.UnreadableRows.Count != 2 || got != "line 12, line 22" {
			t.Errorf("%s: unreadable rows %d at %q, want 2 at line 12, line 22", name, a.UnreadableRows.Count, got)
		}
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestForeignRecordCap: an unclosed quote makes the rest of a file one
// record, and a line can run on without end; neither is read much past
// the cap.
func TestForeignRecordCap(t *testing.T) {
	t.Parallel()
	rest := strings.Repeat("7,c\n", 3*maxForeignRecord/4) // 3 MiB of good rows
	cases := []struct {
		name    string
		content string
		wantErr string // "" when the file reads
	}{
		{"unclosed quote", "retry_after_ms,g\n5,a\n\"6,b\n" + rest, "events.csv line 3: a line, or a quoted field, runs on"},
		{"unclosed quote after a multi-line record", "retry_after_ms,g\n5,\"a\nb\"\n6,\"b\n" + rest, "events.csv line 4: a line, or a quoted field, runs on"},
		{"one long line", "retry_after_ms,g\n5,a\n" + strings.Repeat("8", 3*maxForeignRecord) + ",a\n" + rest, "events.csv line 3: a line, or a quoted field, runs on"},
		// Read to its end: good rows after the field, not the 3 MiB the
		// failures must stop short of (786,432 rows were most of the
		// package's CPU for the claim that a record under the cap reads).
		{"a quoted field under the cap", "retry_after_ms,g\n5,\"" + strings.Repeat("x\n", maxForeignRecord/2-8) + "\"\n" + strings.Repeat("7,c\n", 100), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src := &countingReader{r: strings.NewReader(c.content)}
			tally := NewTally(false)
			err := tally.Read(context.Background(), src, Input{Name: "events.csv", Ordinal: 1}, ForeignColumns{})
			if c.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var bad *BadInputError
			if !errors.As(err, &bad) || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("err = %v, want a BadInputError with %q", err, c.wantErr)
			}
			// The cap, the CSV parser's buffer and Read's own buffer.
			if limit := maxForeignRecord + 3*csvReadBuffer; src.n > limit {
				t.Errorf("read %d bytes before failing, more than %d", src.n, limit)
			}
		})
	}
}

// TestResultsLineCap: a results header followed by megabytes without a
// newline is refused, naming the line, without reading it all.
func TestResultsLineCap(t *testing.T) {
	t.Parallel()
	r := attempt("burst-shaped", "burst", 429, 5, results.WaitRetryAfterMS)
	content := strings.Join(results.Columns, ",") + "\n" + string(csvRow(&r)) + strings.Repeat("x", 4*results.MaxLine)
	src := &countingReader{r: strings.NewReader(content)}
	err := NewTally(false).Read(context.Background(), src, Input{Name: "r.csv", Ordinal: 1}, ForeignColumns{})
	var bad *BadInputError
	if !errors.As(err, &bad) || !errors.Is(err, results.ErrLineTooLong) || !strings.Contains(err.Error(), "r.csv line 3") {
		t.Fatalf("err = %v, want a BadInputError naming r.csv line 3", err)
	}
	if limit := 2 * results.MaxLine; src.n > limit {
		t.Errorf("read %d bytes before failing, more than %d", src.n, limit)
	}
}

// endless is a results header followed by size bytes of 'x' and no
// newline, made as it is read: a damaged file of any size without the
// memory to hold it.
type endless struct {
	head []byte
	size int64
}

func (e *endless) Read(p []byte) (int, error) {
	if len(e.head) > 0 {
		n := copy(p, e.head)
		e.head = e.head[n:]
		return n, nil
	}
	if e.size <= 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), e.size))
	for i := range n {
		p[i] = 'x'
	}
	e.size -= int64(n)
	return n, nil
}

// TestResultsLineCapBounded: a results header followed by 64 MiB without a
// newline (as it would be followed by gigabytes) fails at the line cap
// with one line, having read and allocated a few MiB, not the input. Not
// parallel: it measures the heap.
func TestResultsLineCapBounded(t *testing.T) {
	const size = 64 << 20
	src := &countingReader{r: &endless{head: []byte(strings.Join(results.Columns, ",") + "\n"), size: size}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := NewTally(false).Read(context.Background(), src, Input{Name: "big.csv", Ordinal: 1}, ForeignColumns{})
	runtime.ReadMemStats(&after)
	var bad *BadInputError
	if !errors.As(err, &bad) || !errors.Is(err, results.ErrLineTooLong) || !strings.Contains(err.Error(), "big.csv line 2") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v, want one line: a BadInputError naming big.csv line 2", err)
	}
	if limit := 2 * results.MaxLine; src.n > limit {
		t.Errorf("read %d of %d bytes before failing, more than %d", src.n, size, limit)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("read %d bytes, allocated %d bytes", src.n, allocated)
	if limit := uint64(8 * results.MaxLine); allocated > limit {
		t.Errorf("allocated %d bytes reading a line over the cap, more than %d", allocated, limit)
	}
}
