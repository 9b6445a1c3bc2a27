package cmd

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/report"
	"github.com/ptuprobe/ptuprobe/results"
)

// analyzeUpstream is the copy of the published events file kept with the
// analyze package's tests.
var analyzeUpstream = filepath.Join("..", "analyze", "testdata", "upstream")

// Canary values planted where a run keeps what it received: raw headers,
// error text, run id. None may reach a published file.
const (
	analyzeCanaryKey  = "sk-canary-5e1f0c"
	analyzeCanaryHost = "canary-host.example.net"
	analyzeCanaryDepl = "canary-deployment-ptu9"
)

// writeAnalyzeResults writes a ptuprobe results file with every kind of
// row: usable waits of both shapes, 429s without a wait, errors, late sends.
func writeAnalyzeResults(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := results.NewWriter(f)
	if err != nil {
		t.Fatal(err)
	}
	row := func(shape, group string, seq, status int, wait float64, source string) results.Record {
		r := results.Blank()
		r.RunID, r.Shape, r.Group, r.Seq, r.Attempt = "c0ffee01", shape, group, seq, 1
		r.IntendedMS = float64(seq * 100)
		r.SentMS = r.IntendedMS + float64(seq%4)*5 // every 4th at +15 ms: late
		r.LatencyMS, r.Status = 12, status
		r.WaitMS, r.WaitSource = wait, source
		return r
	}
	var recs []results.Record
	for i := 0; i < 60; i++ {
		switch {
		case i%3 == 0:
			r := row("burst", "burst-shaped", i, 429, float64(40+i), results.WaitRetryAfterMS)
			r.RetryAfterMS = results.FormatMS(float64(40 + i))
			recs = append(recs, r)
		case i%10 == 1:
			r := row("burst", "burst-shaped", i, 429, results.None, results.WaitInvalid)
			r.RetryAfterMS = analyzeCanaryKey // a hostile target echoing a secret
			r.RetryAfter = analyzeCanaryHost
			recs = append(recs, r)
		case i%10 == 2:
			recs = append(recs, row("burst", "burst-shaped", i, 429, results.None, results.WaitNone))
		case i%10 == 4:
			r := row("scheduled", "scheduled-shaped", i, 0, results.None, results.WaitNone)
			r.Error = "dial " + analyzeCanaryHost + " " + analyzeCanaryDepl // not a class: must be published as other
			recs = append(recs, r)
		case i%5 == 0:
			r := row("scheduled", "scheduled-shaped", i, 429, float64(i*100), results.WaitRetryAfterSeconds)
			r.RetryAfter = results.FormatMS(float64(i) / 10)
			recs = append(recs, r)
		default:
			recs = append(recs, row("scheduled", "scheduled-shaped", i, 200, results.None, results.WaitNone))
		}
	}
	for i := range recs {
		recs[i].RunID = analyzeCanaryDepl[:8]
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAnalyzeReproducesPublishedTable(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "report")
	code, stdout, stderr := runCLI(context.Background(), "analyze",
		"--group-column", "source",
		"--label", "task013=Burst-shaped source", "--label", "task019=Scheduled-shaped source",
		"--out-dir", out, filepath.Join(analyzeUpstream, "retry_after_ms_events.csv"))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, err := os.ReadFile(filepath.Join(out, report.PercentilesFile))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(analyzeUpstream, "expected_percentiles.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("percentiles:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(stdout, "| Overall | 193 | 43 ms | 50.8 ms | 16,921.12 ms | 17,258 ms |") {
		t.Errorf("stdout lacks the table:\n%s", stdout)
	}
	for _, name := range []string{report.PercentilesFile, report.EventsFile, report.SummaryFile, report.AnalysisFile, report.ECDFPNGFile, report.ECDFSVGFile, report.HistogramFile, report.HTMLFile} {
		if !strings.Contains(stdout, filepath.Join(out, name)) {
			t.Errorf("stdout does not list %s", name)
		}
	}
}

// TestAnalyzePublishesNoSecret plants canaries where a run keeps what it
// received, then greps every output (report.html included) and stdout for
// them.
func TestAnalyzePublishesNoSecret(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// The file name names the host too: a path must not be published.
	in := filepath.Join(dir, "results-"+analyzeCanaryHost+".csv")
	writeAnalyzeResults(t, in)
	out := filepath.Join(dir, "report")
	code, stdout, stderr := runCLI(context.Background(), "analyze", "--timeline", "--log-x", "--columns", "min,p999,mean", "--out-dir", out, in)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 11 {
		t.Errorf("%d files in the report, want 11 (with the timeline, and the overshoot chart in PNG and SVG)", len(entries))
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, canary := range []string{analyzeCanaryKey, analyzeCanaryHost, analyzeCanaryDepl, analyzeCanaryDepl[:8], "canary"} {
			if bytes.Contains(bytes.ToLower(b), []byte(canary)) {
				t.Errorf("%s contains %q", e.Name(), canary)
			}
		}
	}
	summary, _ := os.ReadFile(filepath.Join(out, report.SummaryFile))
	for _, want := range []string{"not part of the sanitized set", "| other | 4 |", "`sparse`", "late sends"} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	if strings.Contains(stdout, analyzeCanaryKey) {
		t.Errorf("stdout shows the key")
	}
	checkAnalyzePNG(t, filepath.Join(out, report.TimelineFile))
}

func checkAnalyzePNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// This package's charts are drawn at a quarter of the resolution
	// (TestMain); report's own tests check the full size.
	if w, h := report.PNGSize(); img.Bounds().Dx() != w || img.Bounds().Dy() != h || w != report.ChartWidthPx/4 {
		t.Errorf("%s: %dx%d, want %dx%d", filepath.Base(path), img.Bounds().Dx(), img.Bounds().Dy(), w, h)
	}
}

func TestAnalyzeExitCodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	results := filepath.Join(dir, "results.csv")
	writeAnalyzeResults(t, results)
	noColumn := filepath.Join(dir, "other.csv")
	os.WriteFile(noColumn, []byte("source,benchmark_id,wait\nx,y,1\n"), 0o644)
	no429 := filepath.Join(dir, "no429.csv")
	os.WriteFile(no429, []byte("retry_after_ms\n\n"), 0o644)
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("retry_after_ms\n5\nfive\n7\n"), 0o644)
	strayQuote := filepath.Join(dir, "stray.csv")
	os.WriteFile(strayQuote, []byte("retry_after_ms\n5\n\"6\n7\n8\n"), 0o644)
	unreadable := filepath.Join(dir, "unreadable.csv")
	os.WriteFile(unreadable, []byte("retry_after_ms\n5\n"), 0o000)

	cases := []struct {
		name       string
		args       []string
		code       int
		stderrHas  string
		noWork     bool // the out dir must not exist afterwards
		stdoutHas  string
		skipAsRoot bool
	}{
		{name: "ok", args: []string{results}, code: ExitOK, stdoutHas: "| Overall | 28 | 80.5 ms |"},
		{name: "no file", args: nil, code: ExitUsage, stderrHas: "no input file", noWork: true},
		{name: "missing file", args: []string{filepath.Join(dir, "missing.csv")}, code: ExitUsage, stderrHas: "no such file", noWork: true},
		{name: "unreadable file", args: []string{unreadable}, code: ExitUsage, stderrHas: "permission denied", noWork: true, skipAsRoot: true},
		{name: "directory", args: []string{dir}, code: ExitUsage, stderrHas: "is a directory", noWork: true},
		{name: "no value column", args: []string{noColumn}, code: ExitUsage, stderrHas: `its columns: "source", "benchmark_id", "wait"`, noWork: true},
		{name: "bad label", args: []string{"--label", "burst-shaped=a,b", results}, code: ExitUsage, stderrHas: "contains a comma", noWork: true},
		{name: "label without =", args: []string{"--label", "burst-shaped", results}, code: ExitUsage, stderrHas: "want FROM=TO", noWork: true},
		{name: "bad column", args: []string{"--columns", "p42", results}, code: ExitUsage, stderrHas: "unknown column", noWork: true},
		{name: "bad min-group", args: []string{"--min-group", "0", results}, code: ExitUsage, stderrHas: "--min-group", noWork: true},
		{name: "load window too long", args: []string{"--load-window", "2h", results}, code: ExitUsage, stderrHas: "--load-window is 2h0m0s: want 1ms to 1h0m0s", noWork: true},
		{name: "load window", args: []string{"--load-window", "10s", results}, code: ExitOK, stdoutHas: "retry_after_vs_load.svg"},
		{name: "malformed threshold", args: []string{"--fail-if", "overall.p99_ms=>5", results}, code: ExitUsage, stderrHas: "--fail-if", noWork: true},
		{name: "unknown metric", args: []string{"--fail-if", "overall.p98_ms>5", results}, code: ExitUsage, stderrHas: "unknown group metric", noWork: true},
		{name: "breach", args: []string{"--fail-if", "overall.p99_ms>1000", "--fail-if", "errors>0", results}, code: ExitThreshold, stderrHas: "threshold errors>0 breached: measured 4"},
		{name: "pass", args: []string{"--fail-if", "burst.count<5", "--fail-if", "scheduled.share_429>=0.5", results}, code: ExitOK, stdoutHas: "threshold scheduled.share_429>=0.5 passed: measured 0.25"},
		{name: "no usable 429", args: []string{no429}, code: ExitOK, stderrHas: "warning: no 429 with a usable advised wait", stdoutHas: "| Overall | 0 | — |"},
		{name: "stray quote", args: []string{strayQuote}, code: ExitUsage, stderrHas: "stray.csv lines 3-5: a quoted field opened on line 3 runs on to line 5 (a stray quote?), swallowing 3 rows", noWork: true},
		{name: "invalid values counted", args: []string{bad}, code: ExitOK, stderrHas: "first at line 3"},
		{name: "timeline without results", args: []string{"--timeline", bad}, code: ExitOK, stderrHas: "--timeline needs ptuprobe results"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.skipAsRoot && os.Geteuid() == 0 {
				t.Skip("root reads any file")
			}
			out := filepath.Join(t.TempDir(), "report")
			code, stdout, stderr := runCLI(context.Background(), append([]string{"analyze", "--out-dir", out}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, c.code, stderr)
			}
			if !strings.Contains(stderr, c.stderrHas) {
				t.Errorf("stderr %q lacks %q", stderr, c.stderrHas)
			}
			if !strings.Contains(stdout, c.stdoutHas) {
				t.Errorf("stdout lacks %q:\n%s", c.stdoutHas, stdout)
			}
			if c.code == ExitUsage {
				if strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 {
					t.Errorf("usage error is not one line: %q", stderr)
				}
			}
			if _, err := os.Stat(out); c.noWork && err == nil {
				t.Errorf("wrote %s before rejecting the input", out)
			}
		})
	}
}

func TestAnalyzeHelpDocumentsThresholds(t *testing.T) {
	t.Parallel()
	code, stdout, _ := runCLI(context.Background(), "analyze", "--help")
	for _, want := range []string{"Examples:", "--fail-if", "share_429", "total_429", "p999_ms", "docs/thresholds.md"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("analyze --help: exit %d, lacks %q", code, want)
		}
	}
}

// TestAnalyzeForeignUnitsAndStatus reads the foreign fixtures of
// analyze/testdata/foreign: a value column in seconds with --value-unit s,
// a status column taken by default; each gives its expected table, and
// stderr says how the file was read.
func TestAnalyzeForeignUnitsAndStatus(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "analyze", "testdata", "foreign")
	cases := []struct {
		name   string
		args   []string
		stderr string // a line of stderr
	}{
		{"seconds", []string{"--value-column", "retry_after_s", "--value-unit", "s"}, ""},
		{"status", []string{"--group-column", "group"}, `ptuprobe: note: ` + filepath.Join(dir, "status.csv") + `: column "status" read as the HTTP status: only its 429 rows are events (--status-column names another)`},
	}
	for _, c := range cases {
		out := filepath.Join(t.TempDir(), "report")
		args := append([]string{"analyze", "--min-group", "1", "--out-dir", out}, c.args...)
		code, _, stderr := runCLI(context.Background(), append(args, filepath.Join(dir, c.name+".csv"))...)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", c.name, code, stderr)
		}
		got, _ := os.ReadFile(filepath.Join(out, report.PercentilesFile))
		want, _ := os.ReadFile(filepath.Join(dir, c.name+"_expected_percentiles.csv"))
		if len(want) == 0 || !bytes.Equal(got, want) {
			t.Errorf("%s: percentiles\n%s\nwant\n%s", c.name, got, want)
		}
		if c.stderr != "" && !strings.Contains(stderr, c.stderr+"\n") {
			t.Errorf("%s: stderr %q lacks %q", c.name, stderr, c.stderr)
		}
		if strings.Contains(stderr, "named like seconds") {
			t.Errorf("%s: a unit warning with the unit given: %q", c.name, stderr)
		}
	}

	// Without --value-unit, a column named like seconds is read as ms, with
	// a warning naming it; a bad unit or a missing status column is exit 2.
	out := filepath.Join(t.TempDir(), "report")
	_, _, stderr := runCLI(context.Background(), "analyze", "--value-column", "retry_after_s", "--out-dir", out, filepath.Join(dir, "seconds.csv"))
	if !strings.Contains(stderr, `ptuprobe: warning: `+filepath.Join(dir, "seconds.csv")+`: value column "retry_after_s" is named like seconds but is read as ms; give --value-unit s`) {
		t.Errorf("no unit warning: %q", stderr)
	}
	for _, bad := range [][]string{{"--value-unit", "min"}, {"--status-column", "code"}} {
		code, _, stderr := runCLI(context.Background(), append([]string{"analyze", "--out-dir", out}, append(bad, filepath.Join(dir, "status.csv"))...)...)
		if code != ExitUsage || !strings.Contains(stderr, bad[0]) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d %q, want 2 and one line naming %s", bad, code, stderr, bad[0])
		}
	}
}

// TestAnalyzeRequestsAndTheirThresholds: the printed summary has the
// requests table, and --fail-if gates on the success share and latency.
func TestAnalyzeRequestsAndTheirThresholds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "results.csv")
	writeAnalyzeResults(t, in)
	code, stdout, stderr := runCLI(context.Background(), "analyze", "--out-dir", filepath.Join(dir, "report"),
		"--fail-if", "success_pct<95", "--fail-if", "latency.p99_ms>1000", "--fail-if", "scheduled-shaped.http_5xx>0", in)
	if code != ExitThreshold {
		t.Fatalf("exit %d, want 3: %s", code, stderr)
	}
	// 60 rows: 20 + 2 + 6 + 6 429s (every third, and the 1 and 2 of each
	// ten), 6 without an answer, 20 successes of 12 ms.
	for _, want := range []string{
		"| group | planned | requests | ok | success | 429 | 4xx | 5xx | transport | not sent | latency p50 | latency p90 | latency p99 | ttfb p50 | ttfb p99 | requests/s | output tokens/s |",
		"threshold latency.p99_ms>1000 passed: measured 12",
		"threshold scheduled-shaped.http_5xx>0 passed: measured 0",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Count(stdout, "| source group |") != 1 {
		t.Errorf("stdout has %d tables headed source group, want the percentile table only", strings.Count(stdout, "| source group |"))
	}
	if !strings.Contains(stderr, "ptuprobe: threshold success_pct<95 breached: measured ") {
		t.Errorf("stderr %q does not report the breach", stderr)
	}
}
