package analyze

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/rowdecode"
	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/results"
)

// readSequential reads a results file row by row through results.Reader,
// as Tally.Read did before blocks.go: the reference the parallel read must
// agree with.
func (t *Tally) readSequential(r io.Reader, in Input) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.resultsFiles++
	src := &ioErrReader{r: r}
	rd, err := results.NewReader(src, in.Name)
	if err != nil {
		return badInput("%v", err)
	}
	rec := results.Blank()
	for {
		err := rd.Read(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if src.err != nil {
				return fmt.Errorf("read %s: %w", in.Name, src.err)
			}
			if errors.Is(err, results.ErrLineTooLong) {
				return &BadInputError{Err: err}
			}
			t.unreadable.add(LineRef{Input: in.Ordinal, Line: rd.Line()})
			continue
		}
		if rec.Is429() && rec.HasWait() && !usableWait(rec.WaitMS) {
			t.invalid.add(LineRef{Input: in.Ordinal, Line: rd.Line()})
		}
		t.addRecord(&rec)
		if t.overflow != nil {
			return &BadInputError{Err: fmt.Errorf("%s line %d: %w", in.Name, rd.Line(), errTooManyGroups)}
		}
	}
	if src.err != nil {
		return fmt.Errorf("read %s: %w", in.Name, src.err)
	}
	if l := rd.Truncated(); l > 0 {
		t.truncated = append(t.truncated, LineRef{Input: in.Ordinal, Line: l})
	}
	return nil
}

// variedRecord is row i of a file that uses every path of addRecord.
func variedRecord(rng *rand.Rand, i int) results.Record {
	r := results.Blank()
	r.RunID, r.Seq, r.Attempt = []string{"5eed1234", "5eed1234", "0ther0ne"}[rng.IntN(3)], i, 1+rng.IntN(3)
	r.Shape = []string{results.ShapeBurst, results.ShapeScheduled, results.ShapeBurst, "odd", ""}[rng.IntN(5)]
	r.Group = []string{"", results.GroupBurst, results.GroupScheduled, "team-a", "team,b", "t\"q", "Burst-shaped source"}[rng.IntN(7)]
	if r.Shape == results.ShapeBurst {
		r.Wave = i / 100
	}
	// Rows are written as requests complete: a row's intended time is
	// up to a few seconds before the rows around it.
	r.IntendedMS = max(0, float64(i)*2.5-float64(rng.IntN(3000)))
	r.SentMS = r.IntendedMS + float64(rng.IntN(30))/2
	if rng.IntN(50) == 0 {
		r.IntendedMS, r.SentMS = results.None, results.None
	}
	r.TTFBMS, r.LatencyMS = float64(rng.IntN(100)), float64(rng.IntN(1000))+0.125
	r.Status = []int{200, 200, 429, 429, 429, 0, 503}[rng.IntN(7)]
	if r.Status == 0 {
		r.Error = []string{results.ClassTimeout, results.ClassReset, "dial tcp secret.example.com", ""}[rng.IntN(4)]
	}
	r.WaitSource = results.WaitNone
	if r.Status == 429 || r.Status == 503 {
		switch rng.IntN(6) {
		case 0:
			r.WaitSource = results.WaitInvalid
		case 1:
		case 2:
			r.WaitMS, r.WaitSource = 1e13, results.WaitRetryAfterMS // over the cap
		default:
			r.WaitMS = float64(rng.IntN(200000)) / 8
			r.WaitSource = results.WaitSources[rng.IntN(len(results.WaitSources)-2)]
			r.RetryAfterMS = results.FormatMS(r.WaitMS)
		}
		if rng.IntN(10) == 0 {
			r.RetryAfter = "Wed, 21 Oct 2015 07:28:00 GMT" // quoted
		}
	}
	r.Spillover = rng.IntN(7) == 0
	r.PromptTokens, r.MaxTokens = 900+rng.IntN(200), []int{100, 256, 100, 100, results.None}[rng.IntN(5)]
	if r.Status != 200 {
		r.PromptTokens = results.None // no usage
	}
	if r.Status != 0 && rng.IntN(2) == 0 {
		r.PromptTokensSent = 905 + rng.IntN(200) // the sender's count, in a newer file
	}
	if rng.IntN(3) > 0 {
		r.UtilizationPct = float64(rng.IntN(1500)) / 10
	}
	if r.Status != 0 {
		r.Dialect = append(slices.Clone(results.Dialects), "klingon")[rng.IntN(len(results.Dialects)+1)]
	}
	r.Worker = []string{"", "0/3", "1/3", "2/3", "3/3", "x/y"}[rng.IntN(6)]
	switch rng.IntN(12) {
	case 0: // a request its retry owner gave up on before sending it
		r.Status, r.SentMS, r.LatencyMS, r.TTFBMS, r.Dialect = 0, results.None, results.None, results.None, ""
		r.Decision, r.Error = results.DecisionGiveUpLocal, results.ClassPaced
	case 1: // one a stop cut while it waited
		r.Status, r.SentMS, r.LatencyMS, r.TTFBMS, r.Dialect = 0, results.None, results.None, results.None, ""
		r.Decision, r.Error = results.DecisionInterrupted, results.ClassCanceled
	case 2:
		r.Decision = results.DecisionSleep
	}
	if r.Status == 200 && rng.IntN(2) == 0 { // a streamed answer
		r.TTFTMS = float64(rng.IntN(400)) + 0.5
		r.CompletionTokens = []int{1, 2, 40, results.None}[rng.IntN(4)]
		if r.CompletionTokens != 1 {
			r.TPOTMS = float64(rng.IntN(80)) / 4
			r.ITLP50MS, r.ITLMaxMS = float64(rng.IntN(60))/4, float64(60+rng.IntN(300))
		}
	}
	return r
}

// variedFile writes rows rows under hdr (a results header, its columns in
// any order), with what a file may hold besides: blank lines, CRLF line
// ends, quoted cells, numbers in unusual forms, unreadable rows, and
// (with truncate) a last line cut short.
func variedFile(seed uint64, hdr []string, rows int, truncate bool) string {
	rng := rand.New(rand.NewPCG(seed, 7))
	var b strings.Builder
	b.WriteString(strings.Join(hdr, ",") + "\n")
	index := make([]int, len(hdr)) // hdr[k] is results.Columns[index[k]], or -1
	for k, h := range hdr {
		index[k] = slices.Index(results.Columns, h)
	}
	// One writer for every row, its header dropped: a writer per row
	// (csvRow) cost half the fixture's time.
	var line bytes.Buffer
	w, _ := results.NewWriter(&line)
	var full, cells []string
	for i := range rows {
		r := variedRecord(rng, i)
		line.Reset()
		w.Write(&r)
		full, _ = rowdecode.SplitCSVLine(full[:0], bytes.TrimSuffix(line.Bytes(), []byte("\n")))
		cells = slices.Grow(cells[:0], len(hdr))[:len(hdr)]
		for k, j := range index {
			if j >= 0 {
				cells[k] = full[j]
			} else {
				cells[k] = "x" + fmt.Sprint(i%3) // a column the reader does not know
			}
			if strings.ContainsAny(cells[k], ",\"") {
				cells[k] = `"` + strings.ReplaceAll(cells[k], `"`, `""`) + `"`
			}
		}
		switch rng.IntN(200) {
		case 0:
			b.WriteString("\n")
		case 1:
			b.WriteString(" \t\n")
		case 2:
			cells[slices.Index(hdr, "seq")] = "twelve" // unreadable
		case 3:
			cells = cells[:10] // too few fields
		case 4:
			cells[slices.Index(hdr, "status")] = `"429"` // quoted, still readable
		case 5:
			if w := slices.Index(hdr, "wait_ms"); cells[w] != "" {
				cells[w] = "1.5e2" // readable by the general path only
			}
		case 6:
			cells[slices.Index(hdr, "group")] = `a"b` // a stray quote: unreadable
		case 7:
			cells[slices.Index(hdr, "sent_ms")] = "-3" // negative: unreadable
		}
		b.WriteString(strings.Join(cells, ","))
		if rng.IntN(100) == 0 {
			b.WriteString("\r")
		}
		b.WriteString("\n")
	}
	if truncate {
		b.WriteString(truncatedLine)
	}
	return b.String()
}

// truncatedLine is the last line variedFile cuts short.
const truncatedLine = "5eed1234,burst,burst-shaped,99,1,,1,2,3,4,429,,"

// bigRows is the rows of a file of more than two blocks (about 2.4 MB
// under results.MaxLine, 170 kB under the tests' cap, TestMain;
// TestParallelReadMatchesSequential checks it). bigFile and bigOldFile are
// such files under the full header and an older one, made once for the
// package's tests: making one costs about as much as reading it twice.
func bigRows() int { return scaled(20_000) }

var (
	bigFile    = sync.OnceValue(func() string { return variedFile(1, results.Columns, bigRows(), false) })
	bigOldFile = sync.OnceValue(func() string { return variedFile(2, results.Columns[:24], bigRows(), false) }) // before the policy and dialect columns
)

// analysisOf reads inputs into a Tally with read, and analyzes it; the
// outcome is everything compared: errors, and the Analysis.
func analysisOf(t *testing.T, inputs []string, timeline bool, by GroupBy, read func(*Tally, io.Reader, Input) error) (a *Analysis, readErr, analysisErr error) {
	t.Helper()
	// A window of seconds holds thousands of rows: windows span blocks,
	// and the rows of one block reach back into the blocks before it.
	tally := NewTally(timeline, GroupedBy(by), OfferedLoad(7*time.Second))
	for i, content := range inputs {
		if readErr = read(tally, strings.NewReader(content), Input{Name: fmt.Sprintf("in%d.csv", i+1), Ordinal: i + 1}); readErr != nil {
			break
		}
	}
	a, analysisErr = tally.Analysis(Labels{"team-a": "Team A"}, 3)
	return a, readErr, analysisErr
}

// TestParallelReadMatchesSequential: reading results files in blocks on
// every core gives the Analysis, and the errors, of reading them row by
// row, whatever the files hold.
func TestParallelReadMatchesSequential(t *testing.T) {
	t.Parallel()
	all := results.Columns
	reordered := slices.Concat(all[:17], []string{"worker"}, slices.Clone(all[17:]))
	slices.Reverse(reordered[17:])
	big := bigRows()
	overCap := strings.Repeat("L", results.LineCap()+1)
	many := func() string { // more groups than MaxRawGroups, late in the file
		var b strings.Builder
		b.WriteString(bigFile())
		for i := range MaxRawGroups + 10 {
			fmt.Fprintf(&b, "5eed1234,burst,g%d,%d,1,,1,2,3,4,429,,,,%d,retry-after-ms,0\n", i, i, i%500)
		}
		return b.String()
	}()
	phased := func() string { // groups whose shape holds for blocks, then changes
		var b strings.Builder
		w, _ := results.NewWriter(&b)
		for i := range big {
			shape := results.ShapeBurst
			if i >= big/2 {
				shape = results.ShapeScheduled
			}
			r := attempt("changes", shape, 429, float64(i%300), results.WaitRetryAfterMS)
			w.Write(&r)
			r = attempt("steady", results.ShapeBurst, 200, -1, results.WaitNone)
			w.Write(&r)
		}
		return b.String()
	}()
	cases := []struct {
		name   string
		inputs []string
	}{
		{"shapes that change between blocks", []string{phased}},
		{"every column, a truncated last line", []string{bigFile() + truncatedLine}},
		{"an older header", []string{bigOldFile()}},
		{"columns in another order, one unknown", []string{variedFile(3, reordered, 3000, true)}},
		{"two inputs", []string{bigFile() + truncatedLine, bigOldFile()}},
		{"a small file", []string{variedFile(6, all, 30, false)}},
		{"the header alone", []string{strings.Join(all, ",") + "\n"}},
		{"the header alone, without its newline", []string{strings.Join(all, ",")}},
		{"a line over the cap in a later block", []string{bigFile() + overCap + "\n" + variedFile(8, all, 10, false)}},
		{"a line over the cap at the end", []string{variedFile(9, all, 2000, false) + overCap}},
		{"too many groups", []string{many}},
		{"only blank lines", []string{strings.Join(all, ",") + "\n\n\r\n  \n"}},
	}
	if n := len(cases[1].inputs[0]); n < 2*blockSize() {
		t.Fatalf("a big file of %d bytes fits in two blocks", n)
	}
	// Every case with the timeline and by group (the most the blocks
	// carry); the other settings where blocks are merged and the group
	// keys differ: without the timeline where a group's shape changes
	// between blocks, by dialect where two files' blocks merge, and every
	// setting for a file of one block whose columns are reordered (under
	// -race, none: the same goroutines at work). Each setting once met
	// each of these files; the volume is FuzzReadResults'. The settings
	// of files of several blocks (1 s of CPU) are -long's (.ci/run).
	otherSettings := map[string][]string{
		"columns in another order, one unknown": {"timeline=false/by=group", "timeline=false/by=dialect", "timeline=true/by=dialect"},
	}
	if *long {
		otherSettings["shapes that change between blocks"] = []string{"timeline=false/by=group"}
		otherSettings["two inputs"] = []string{"timeline=false/by=dialect"}
	}
	for _, c := range cases {
		for _, timeline := range []bool{false, true} {
			for _, by := range []GroupBy{GroupByGroup, GroupByDialect} {
				setting := fmt.Sprintf("timeline=%v/by=%s", timeline, by)
				name := c.name + "/" + setting
				if (!timeline || by != GroupByGroup) && (testkit.Race || !slices.Contains(otherSettings[c.name], setting)) {
					continue
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					want, wantRead, wantAn := analysisOf(t, c.inputs, timeline, by, func(tl *Tally, r io.Reader, in Input) error { return tl.readSequential(r, in) })
					got, gotRead, gotAn := analysisOf(t, c.inputs, timeline, by, func(tl *Tally, r io.Reader, in Input) error {
						return tl.Read(context.Background(), r, in, ForeignColumns{})
					})
					if fmt.Sprint(gotRead) != fmt.Sprint(wantRead) || fmt.Sprint(gotAn) != fmt.Sprint(wantAn) {
						t.Fatalf("errors differ:\n got %v / %v\nwant %v / %v", gotRead, gotAn, wantRead, wantAn)
					}
					if reflect.TypeOf(gotRead) != reflect.TypeOf(wantRead) {
						t.Fatalf("read error types differ: %T, want %T", gotRead, wantRead)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("analyses differ:\n got %s\nwant %s", describe(got), describe(want))
					}
				})
			}
		}
	}
}

// describe sums up an Analysis for a failure message.
func describe(a *Analysis) string {
	if a == nil {
		return "nil"
	}
	s := fmt.Sprintf("totals %+v invalid %+v unreadable %+v truncated %v timeline %d; ", a.Totals, a.InvalidValues, a.UnreadableRows, a.TruncatedLines, len(a.Timeline))
	if o := a.Overshoot; o != nil {
		s += fmt.Sprintf("overshoot: %d unplaced; ", o.Unplaced)
		for _, g := range o.Groups {
			s += fmt.Sprintf("%s: %d points, %+v %+v %+v; ", g.Label, len(g.Points), g.Requests, g.Tokens, g.Utilization)
		}
	}
	for _, g := range append([]Group{a.Overall}, a.Groups...) {
		s += fmt.Sprintf("%s %s n=%d att=%d ref=%d nw=%+v late=%d err=%d; ", g.Label, g.Shape, g.Count(), g.Attempts, g.Refused, g.NoWait, g.Late, g.Errors)
	}
	return s
}

// failingReader returns its content, then an error.
type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if errors.Is(err, io.EOF) {
		return n, f.err
	}
	return n, err
}

// TestParallelReadFailure: a read that fails is the error of a sequential
// read, naming the file.
func TestParallelReadFailure(t *testing.T) {
	t.Parallel()
	content := bigFile()
	broken := errors.New("disk on fire")
	err := NewTally(false).Read(context.Background(), &failingReader{r: strings.NewReader(content), err: broken}, Input{Name: "r.csv", Ordinal: 1}, ForeignColumns{})
	if !errors.Is(err, broken) || err.Error() != "read r.csv: disk on fire" {
		t.Fatalf("err = %v", err)
	}
}

// TestAddRecordReadsAnalyzedColumns guards analyzedColumns: addRecord must
// count a row the same whatever its other columns hold, since a
// rowdecode.Decoder fills only those.
func TestAddRecordReadsAnalyzedColumns(t *testing.T) {
	t.Parallel()
	fieldOf := map[string]string{ // the Record field of each analyzed column
		"shape": "Shape", "group": "Group", "status": "Status", "error": "Error",
		"intended_ms": "IntendedMS", "sent_ms": "SentMS", "wait_ms": "WaitMS",
		"wait_source": "WaitSource", "spillover": "Spillover", "dialect": "Dialect",
		"worker": "Worker", "run_id": "RunID", "prompt_tokens": "PromptTokens", "prompt_tokens_sent": "PromptTokensSent",
		"max_tokens": "MaxTokens", "utilization_pct": "UtilizationPct",
		"latency_ms": "LatencyMS", "ttfb_ms": "TTFBMS", "completion_tokens": "CompletionTokens",
		"attempt": "Attempt", "decision": "Decision",
		"ttft_ms": "TTFTMS", "itl_p50_ms": "ITLP50MS", "itl_max_ms": "ITLMaxMS", "tpot_ms": "TPOTMS",
	}
	readFields := map[string]bool{}
	for _, col := range analyzedColumns {
		if fieldOf[col] == "" {
			t.Fatalf("column %s: name its Record field here", col)
		}
		readFields[fieldOf[col]] = true
	}
	rng := rand.New(rand.NewPCG(11, 12))
	groupBys := []GroupBy{GroupByGroup, GroupByDialect, GroupByWorker}
	for i := range 600 {
		rec := variedRecord(rng, i)
		by := groupBys[i%len(groupBys)]
		want := NewTally(true, GroupedBy(by), OfferedLoad(0))
		want.resultsFiles = 1 // as Read counts a results file: the overshoot picture is drawn
		want.addRecord(&rec)
		other := rec
		v := reflect.ValueOf(&other).Elem()
		for f := range v.NumField() {
			if readFields[v.Type().Field(f).Name] {
				continue
			}
			switch fv := v.Field(f); fv.Kind() {
			case reflect.String:
				fv.SetString("changed")
			case reflect.Int:
				fv.SetInt(fv.Int() + 17)
			case reflect.Float64:
				fv.SetFloat(fv.Float() + 17)
			case reflect.Bool:
				fv.SetBool(!fv.Bool())
			}
		}
		got := NewTally(true, GroupedBy(by), OfferedLoad(0))
		got.resultsFiles = 1
		got.addRecord(&other)
		a, _ := want.Analysis(nil, 1)
		b, _ := got.Analysis(nil, 1)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("grouped by %s, addRecord reads a column that is not in analyzedColumns (fields read: %v)", by, readFields)
		}
	}
}

// endlessRows is a results file that never ends; it cancels its context
// once it has handed out cancelAt bytes.
type endlessRows struct {
	head, row []byte
	n         int
	cancelAt  int
	cancel    func()
	closed    atomic.Bool // set once Read returned: reading then is a bug
}

func (e *endlessRows) Read(p []byte) (int, error) {
	if e.closed.Load() {
		panic("read after Tally.Read returned")
	}
	n := 0
	if len(e.head) > 0 {
		n = copy(p, e.head)
		e.head = e.head[n:]
	}
	for n+len(e.row) <= len(p) {
		n += copy(p[n:], e.row)
	}
	if e.n += n; e.n >= e.cancelAt {
		e.cancel()
	}
	return n, nil
}

// TestReadCancel: a cancel stops reading within a few blocks, and Read
// returns with no worker left and nothing more read.
func TestReadCancel(t *testing.T) {
	t.Parallel()
	r := attempt(results.GroupBurst, results.ShapeBurst, 429, 40, results.WaitRetryAfterMS)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const cancelAt = 20 << 20
	src := &endlessRows{head: []byte(strings.Join(results.Columns, ",") + "\n"), row: csvRow(&r), cancelAt: cancelAt, cancel: cancel}
	err := NewTally(false).Read(ctx, src, Input{Name: "endless.csv", Ordinal: 1}, ForeignColumns{})
	src.closed.Store(true)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if limit := cancelAt + 2*blockSize(); src.n > limit {
		t.Errorf("read %d bytes, more than %d: the cancel was not seen at the next block", src.n, limit)
	}
}

// FuzzReadResults: whatever follows a results header (the full one, the
// required columns, an older one), reading it in blocks gives the
// Analysis and the errors of reading it row by row.
func FuzzReadResults(f *testing.F) {
	body := func(file string) []byte { _, rows, _ := strings.Cut(file, "\n"); return []byte(rows) }
	f.Add(uint8(0), body(variedFile(1, results.Columns, 20, true)))
	f.Add(uint8(2), body(variedFile(2, results.Columns[:24], 20, false)))
	f.Add(uint8(1), []byte(""))
	f.Add(uint8(2), []byte("x,burst,g,1,1,,1,2,,1,429,,,,12,retry-after-ms,0\n\n \r\nx,burst,g,1,1,,1e1,2,,1,429,,,,-0,none,1\n\"q\",,"))
	f.Fuzz(func(t *testing.T, h uint8, body []byte) {
		hdr := [][]string{results.Columns, results.Columns[:17], results.Columns[:24]}[int(h)%3]
		content := strings.Join(hdr, ",") + "\n" + string(body)
		for _, by := range []GroupBy{GroupByGroup, GroupByDialect} {
			want, wantRead, wantAn := analysisOf(t, []string{content}, true, by, func(tl *Tally, r io.Reader, in Input) error { return tl.readSequential(r, in) })
			got, gotRead, gotAn := analysisOf(t, []string{content}, true, by, func(tl *Tally, r io.Reader, in Input) error {
				return tl.Read(context.Background(), r, in, ForeignColumns{})
			})
			if fmt.Sprint(gotRead) != fmt.Sprint(wantRead) || fmt.Sprint(gotAn) != fmt.Sprint(wantAn) {
				t.Fatalf("errors differ:\n got %v / %v\nwant %v / %v", gotRead, gotAn, wantRead, wantAn)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("analyses differ:\n got %s\nwant %s", describe(got), describe(want))
			}
		}
	})
}

// TestFinalAnalysisIsAnalysis: the Analysis that takes the Tally's rows
// as it goes is the Analysis that copies them, over inputs of several
// groups, labels that merge groups, timelines and a pipe's rows.
func TestFinalAnalysisIsAnalysis(t *testing.T) {
	t.Parallel()
	// 4,000 rows: every path of variedRecord some 20 times, in several
	// blocks (12,000 were twice the CPU for the same: issue 39).
	inputs := []string{variedFile(11, results.Columns, 4000, true), variedFile(12, results.Columns[:24], 3000, false)}
	for _, timeline := range []bool{false, true} {
		var analyses [2]*Analysis
		for k := range analyses {
			tally := NewTally(timeline, OfferedLoad(7*time.Second))
			for i, content := range inputs {
				if err := tally.Read(context.Background(), strings.NewReader(content), Input{Name: fmt.Sprintf("in%d.csv", i+1), Ordinal: i + 1}, ForeignColumns{}); err != nil {
					t.Fatal(err)
				}
			}
			analyze := tally.Analysis
			if k == 1 {
				analyze = tally.FinalAnalysis
			}
			a, err := analyze(Labels{"team-a": "Team A", "team,b": "Team A", "t\"q": "Q"}, 3)
			if err != nil {
				t.Fatal(err)
			}
			analyses[k] = a
		}
		if analyses[0].Overshoot == nil || len(analyses[0].Groups) < 2 {
			t.Fatalf("timeline %v: %s: want groups and an overshoot picture", timeline, describe(analyses[0]))
		}
		if !reflect.DeepEqual(analyses[1], analyses[0]) {
			t.Fatalf("timeline %v: the final analysis differs:\n got %s\nwant %s", timeline, describe(analyses[1]), describe(analyses[0]))
		}
	}
}
