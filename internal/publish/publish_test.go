package publish

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/internal/pagecheck"
	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/report"
	"github.com/ptuprobe/ptuprobe/results"
)

// upstreamEvents is the published fixture kept with analyze's tests.
var upstreamEvents = filepath.Join("..", "..", "analyze", "testdata", "upstream", "retry_after_ms_events.csv")

// resultsInput writes a small results file with send times (for the
// timeline) under dir.
func resultsInput(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "results.csv")
	recs := make([]results.Record, 40)
	for i := range recs {
		r := &recs[i]
		*r = results.Blank()
		r.RunID, r.Shape, r.Group, r.Seq, r.Attempt = "0123abcd", results.ShapeBurst, results.GroupBurst, i, 1
		r.IntendedMS, r.SentMS, r.LatencyMS, r.Status = float64(i*10), float64(i*10+1), 5, 429
		r.WaitMS, r.WaitSource = float64(10+i*i), results.WaitRetryAfterMS
	}
	testkit.WriteResults(t, path, recs...)
	return path
}

// TestRunCancelAtEveryStage cancels Run at each place it looks at its
// context before the report (before and while reading each input, around
// the analysis), as the report starts, and at the last look before the
// renames, when every file is written. Each cancel returns ErrInterrupted
// and leaves the output directory as it was — an earlier report whole, or
// no directory — with no temporary file. (report's own tests cancel at
// every look inside a report.)
func TestRunCancelAtEveryStage(t *testing.T) {
	t.Parallel()
	in := t.TempDir()
	paths := []string{resultsInput(t, in), upstreamEvents}
	job := func(out string) Job {
		return Job{Paths: paths, OutDir: out, MinGroup: 1, Timeline: true, Foreign: analyze.ForeignColumns{Group: "source"}}
	}

	// How many looks come before the report: Run with an output directory
	// that cannot be created fails right after report.Write's first look.
	blocker := filepath.Join(in, "a-file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	count := &testkit.CancelAfter{Context: context.Background(), N: 1 << 30}
	if _, err := Run(count, job(filepath.Join(blocker, "report"))); err == nil || errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want the directory refused", err)
	}
	beforeReport := count.Calls() - 1

	// An earlier report, with other inputs, so every file differs.
	out := filepath.Join(t.TempDir(), "report")
	earlier := job(out)
	earlier.Paths, earlier.Timeline = paths[:1], false
	if _, err := Run(context.Background(), earlier); err != nil {
		t.Fatal(err)
	}
	before := testkit.DirFiles(t, out)

	// Every look in a complete run.
	count = &testkit.CancelAfter{Context: context.Background(), N: 1 << 30}
	other := filepath.Join(t.TempDir(), "complete")
	if res, err := Run(count, job(other)); err != nil || len(res.Written) != 11 {
		t.Fatalf("Run: %v, wrote %d files, want 11", err, len(res.Written))
	}
	looks := count.Calls()
	t.Logf("Run looks at its context %d times, %d of them before the report", looks, beforeReport)
	// Before and inside each input, before the analysis, and in the report
	// before each of 11 files (the overshoot chart twice, PNG and SVG) and
	// the renames.
	if beforeReport < 2*2+1 || looks < beforeReport+11+1 {
		t.Errorf("Run looks at its context %d times (%d before the report), fewer than its stages", looks, beforeReport)
	}

	type cancel struct {
		n   int
		out string
	}
	var cancels []cancel
	for n := range beforeReport + 2 { // up to the report's look before its first file
		cancels = append(cancels, cancel{n, out})
	}
	cancels = append(cancels,
		cancel{looks - 1, out}, // every file written, not yet renamed
		cancel{beforeReport + 1, filepath.Join(t.TempDir(), "new", "report")}, // a directory just created
	)
	for _, c := range cancels {
		want := testkit.DirFiles(t, c.out)
		_, err := Run(&testkit.CancelAfter{Context: context.Background(), N: c.n}, job(c.out))
		if !errors.Is(err, ErrInterrupted) {
			t.Fatalf("cancel at look %d: err = %v, want ErrInterrupted", c.n, err)
		}
		if got := testkit.DirFiles(t, c.out); !testkit.SameFiles(got, want) {
			t.Fatalf("cancel at look %d changed %s: %v", c.n, c.out, keys(got))
		}
		if c.out != out {
			if _, err := os.Stat(filepath.Dir(c.out)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("cancel at look %d left the directory it created", c.n)
			}
		}
	}
	if after := testkit.DirFiles(t, out); !testkit.SameFiles(after, before) {
		t.Fatalf("the earlier report changed")
	}
	// A real cancel, as a signal gives it.
	ctx, stop := context.WithCancel(context.Background())
	stop()
	if _, err := Run(ctx, job(out)); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("canceled context: err = %v, want ErrInterrupted", err)
	}
	if after := testkit.DirFiles(t, out); !testkit.SameFiles(after, before) {
		t.Fatalf("the earlier report changed")
	}
}

func keys(m map[string]string) []string {
	var k []string
	for name := range m {
		k = append(k, name)
	}
	slices.Sort(k)
	return k
}

// hostileLabels are group names that a spreadsheet would run as a
// formula, or that would break or inject into Markdown and HTML.
var hostileLabels = []string{
	"=cmd|' /C calc'!A0", "+1", "-2", "@SUM(1)", "<script>alert(1)</script>",
	"[click](https://example.com/x)", "`code` *bold* _it_ ~~del~~", `back\slash & pipe|`,
}

// TestRunHostileLabels: labels from a foreign CSV reach every published
// file neutralised — a CSV cell never starts a formula, summary.md holds no
// tag, link or table-breaking pipe, report.html escapes them — and
// analysis.json and report.html keep them exactly.
func TestRunHostileLabels(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var in strings.Builder
	in.WriteString("source,retry_after_ms\n")
	for i, label := range hostileLabels {
		for k := range 5 {
			in.WriteString(`"` + strings.ReplaceAll(label, `"`, `""`) + `",` + strconv.Itoa(10*(i+1)+k) + "\n")
		}
	}
	input := filepath.Join(dir, "events.csv")
	if err := os.WriteFile(input, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report")
	res, err := Run(context.Background(), Job{Paths: []string{input}, OutDir: out, MinGroup: 1, Foreign: analyze.ForeignColumns{Group: "source"}})
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer // what the CLI prints
	if err := report.WriteTable(&table, res.Analysis, nil); err != nil {
		t.Fatal(err)
	}
	outputs := map[string][]byte{"table.md": table.Bytes()}
	for _, name := range []string{report.PercentilesFile, report.EventsFile, report.SummaryFile, report.AnalysisFile, report.ECDFSVGFile, report.HTMLFile} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		outputs[name] = b
	}

	// CSV: every group cell, as a spreadsheet reads it, starts with no
	// formula character, and is the label behind a '.
	for _, name := range []string{report.PercentilesFile, report.EventsFile} {
		rows, err := csv.NewReader(bytes.NewReader(outputs[name])).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		seen := map[string]bool{}
		for _, row := range rows[1:] {
			if strings.ContainsAny(row[0][:1], "=+-@\t\r") {
				t.Errorf("%s: cell %q starts a formula", name, row[0])
			}
			seen[row[0]] = true
		}
		for _, label := range hostileLabels {
			want := label
			if strings.ContainsAny(label[:1], "=+-@") {
				want = "'" + label
			}
			if !seen[want] {
				t.Errorf("%s lacks the cell %q", name, want)
			}
		}
	}
	// Markdown: no tag, no link, every table row keeps its cells.
	for _, name := range []string{report.SummaryFile, "table.md"} {
		md := string(outputs[name])
		for _, bad := range []string{"<script", "&amp;amp;"} {
			if strings.Contains(md, bad) {
				t.Errorf("%s contains %q", name, bad)
			}
		}
		if unescapedLink.MatchString(md) {
			t.Errorf("%s contains a link: %s", name, unescapedLink.FindString(md))
		}
		checkTables(t, name, md)
	}
	// JSON is encoded, so it keeps the labels exactly, and never raw HTML.
	var j struct {
		Groups []struct{ Label string } `json:"groups"`
	}
	if err := json.Unmarshal(outputs[report.AnalysisFile], &j); err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, g := range j.Groups {
		labels = append(labels, g.Label)
	}
	if want := slices.Sorted(slices.Values(hostileLabels)); !slices.Equal(labels, want) {
		t.Errorf("analysis.json labels %q, want %q", labels, want)
	}
	for _, name := range []string{report.AnalysisFile, report.ECDFSVGFile, report.HTMLFile} {
		if bytes.Contains(outputs[name], []byte("<script")) {
			t.Errorf("%s holds a raw <script> tag", name)
		}
	}
	// HTML: the page still parses strictly (no label broke out of its
	// cell), runs and loads nothing, and shows every label as it is, in a
	// row header of the table.
	page, err := pagecheck.Parse(outputs[report.HTMLFile])
	if err != nil {
		t.Fatal(err)
	}
	if err := pagecheck.SelfContained(page); err != nil {
		t.Errorf("%s: %v", report.HTMLFile, err)
	}
	var shown []string
	for _, row := range pagecheck.Rows(page.ByID("percentile-table"))[1:] {
		shown = append(shown, row[0].Text)
	}
	if want := slices.Sorted(slices.Values(hostileLabels)); !slices.Equal(shown, want) {
		t.Errorf("%s row headers %q, want %q", report.HTMLFile, shown, want)
	}
	for _, name := range []string{report.PercentilesFile, report.EventsFile, report.SummaryFile, "table.md"} {
		golden(t, "hostile_"+name, outputs[name])
	}
}

// unescapedLink is a Markdown link: "](" whose bracket is not escaped.
var unescapedLink = regexp.MustCompile(`(^|[^\\])\]\(`)

// checkTables checks that every row of every Markdown table in md has as
// many cells as its header, counting only unescaped pipes.
func checkTables(t *testing.T, name, md string) {
	t.Helper()
	width := 0
	for i, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			width = 0
			continue
		}
		cells := strings.Count(strings.ReplaceAll(line, `\\`, ""), "|") - strings.Count(strings.ReplaceAll(line, `\\`, ""), `\|`)
		if width == 0 {
			width = cells
		} else if cells != width {
			t.Errorf("%s line %d has %d cell borders, its table %d: %s", name, i+1, cells, width, line)
		}
	}
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (go test ./internal/publish -update to accept):\n%s", name, path, got)
	}
}

// TestRunBadInputs: an input analyze refuses is one line, a
// BadInputError with the setting that fixes it when there is one, and no
// report directory is created.
func TestRunBadInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	groups := func(n int) string {
		var b strings.Builder
		b.WriteString("source,retry_after_ms\n")
		for i := range n {
			b.WriteString("g" + strconv.Itoa(i) + ",5\n")
		}
		return b.String()
	}
	cases := []struct {
		name, content string
		setting       string
		want          string
	}{
		{"a results line without end", strings.Join(results.Columns, ",") + "\n" + strings.Repeat("x", 3*results.MaxLine), "", "big.csv line 2: line longer than"},
		{"40,000 groups", groups(40_000), "Group", "more than 10000 distinct groups"},
		{"one group too many", groups(analyze.MaxPublishedGroups + 1), "Labels", "the inputs hold 101 groups"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := filepath.Join(t.TempDir(), "big.csv")
			if err := os.WriteFile(in, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			_, err := Run(context.Background(), Job{Paths: []string{in}, OutDir: out, MinGroup: 1, Foreign: analyze.ForeignColumns{Group: "source"}})
			var bad *analyze.BadInputError
			if !errors.As(err, &bad) || bad.Setting != c.setting || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line with %q, setting %q", err, c.want, c.setting)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s was created for a refused input", out)
			}
		})
	}
}
