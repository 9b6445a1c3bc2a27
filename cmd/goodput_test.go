package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/results"
)

// writeStreamedResults writes n planned requests as a streaming server
// answers them: every fifth refused with a 429, the others streamed, the
// first content token at 50 ms plus 20 ms per (seq mod 10), 30 tokens
// after it at uneven gaps; with streamed false the same answers carry no
// token timing (not streamed).
func writeStreamedResults(t *testing.T, path string, n int, streamed bool) {
	t.Helper()
	writeScheduledRun(t, path, "5eed0037", n, func(i int, r *results.Record) {
		r.IntendedMS, r.SentMS = float64(10*i), float64(10*i)+0.5
		r.TTFBMS = 5
		if i%5 == 4 {
			r.Status, r.LatencyMS, r.WaitMS, r.WaitSource = 429, 6, 1000, results.WaitRetryAfterMS
		} else {
			r.Status, r.CompletionTokens, r.PromptTokens = 200, 31, 500
			ttft := float64(50 + 20*(i%10))
			r.LatencyMS = ttft + 30*8
			if streamed {
				r.TTFTMS, r.TPOTMS, r.ITLP50MS, r.ITLMaxMS = ttft, 8, 6, 40
			}
		}
	})
}

// writeScheduledRun writes n first attempts of the scheduled run runID
// to path, the seq'th made by fill from a blank row of that seq.
func writeScheduledRun(t *testing.T, path, runID string, n int, fill func(seq int, r *results.Record)) {
	t.Helper()
	recs := make([]results.Record, n)
	for i := range recs {
		r := &recs[i]
		*r = results.Blank()
		r.RunID, r.Shape, r.Group, r.Seq, r.Attempt = runID, results.ShapeScheduled, results.GroupScheduled, i, 1
		fill(i, r)
	}
	testkit.WriteResults(t, path, recs...)
}

// TestAnalyzeGoodput: goodput is the share of the planned requests
// answered within every term of the SLO, the refused counting against
// it; 0 under an SLO every answer misses; analysis.json lists it, Overall
// first; --fail-if gates on it; an SLO on ttft is refused, in one line
// with exit 2, on a file with no streamed answer, and e2e is not.
func TestAnalyzeGoodput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	streamed, plain := filepath.Join(dir, "streamed.csv"), filepath.Join(dir, "plain.csv")
	writeStreamedResults(t, streamed, 100, true)
	writeStreamedResults(t, plain, 100, false)

	// ttft ≤ 150 ms: seq mod 10 in 0…5, less the refused (4): 50 of 100.
	out := filepath.Join(dir, "report")
	code, stdout, stderr := runCLI(context.Background(), "analyze", "--out-dir", out, "--slo", "ttft=150ms,e2e=2s", "--fail-if", "goodput<95%", streamed)
	if code != ExitThreshold || !strings.Contains(stderr, "threshold goodput<95% breached: measured 50") {
		t.Fatalf("exit %d, want 3 with goodput 50; stderr %q", code, stderr)
	}
	if !strings.Contains(stdout, "| Overall | 100 | 50 | 50% |") {
		t.Errorf("stdout lacks the goodput row:\n%s", stdout)
	}
	var j struct {
		SLO     string `json:"slo"`
		Goodput []struct {
			Group    string  `json:"group"`
			Planned  int     `json:"planned"`
			Met      int     `json:"met"`
			SharePct float64 `json:"share_pct"`
			PerS     float64 `json:"per_s"`
		} `json:"goodput"`
	}
	raw, err := os.ReadFile(filepath.Join(out, "analysis.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	if j.SLO != "ttft=150ms,e2e=2s" || len(j.Goodput) != 2 || j.Goodput[0].Group != "Overall" || j.Goodput[0].Planned != 100 || j.Goodput[0].Met != 50 || j.Goodput[0].SharePct != 50 || j.Goodput[0].PerS <= 0 {
		t.Errorf("analysis.json goodput %+v (slo %q)", j.Goodput, j.SLO)
	}
	for _, name := range []string{"summary.md", "report.html"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || !strings.Contains(string(b), "Goodput under the SLO") || !strings.Contains(string(b), "TTFT p99") {
			t.Errorf("%s lacks the goodput or the token table (%v)", name, err)
		}
	}

	// Every answer misses a 10 ms TTFT.
	code, stdout, stderr = runCLI(context.Background(), "analyze", "--out-dir", filepath.Join(dir, "r2"), "--slo", "ttft=10ms", "--fail-if", "goodput>0", streamed)
	if code != ExitOK || !strings.Contains(stdout, "threshold goodput>0 passed: measured 0") {
		t.Errorf("exit %d; stdout %s; stderr %q", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "| Overall | 100 | 0 | 0% |") {
		t.Errorf("an SLO every answer misses: stdout lacks a goodput of 0:\n%s", stdout)
	}

	code, _, stderr = runCLI(context.Background(), "analyze", "--out-dir", filepath.Join(dir, "r3"), "--slo", "tpot=20ms", plain)
	if code != ExitUsage || !strings.Contains(stderr, "no streamed answer") || strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 {
		t.Errorf("ttft on a file not streamed: exit %d, stderr %q; want 2 and one line", code, stderr)
	}
	// e2e needs no stream: latency 290 ms + 20 ms × (seq mod 10) ≤ 400 ms: seq mod 10 in 0…5 but 4 (refused): 50.
	code, stdout, stderr = runCLI(context.Background(), "analyze", "--out-dir", filepath.Join(dir, "r4"), "--slo", "400ms", plain)
	if code != ExitOK || !strings.Contains(stdout, "| Overall | 100 | 50 | 50% |") {
		t.Errorf("a bare duration: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	for _, c := range []struct{ args []string }{
		{[]string{"--fail-if", "goodput<95%", plain}},
		{[]string{"--slo", "ttft=fast", plain}},
		{[]string{"--slo", "ttft=1s,ttft=2s", plain}},
		{[]string{"--fail-if", "latency_p99_ms>5%", plain}},
	} {
		code, _, stderr := runCLI(context.Background(), append([]string{"analyze", "--out-dir", filepath.Join(dir, "bad")}, c.args...)...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want 2; stderr %q", c.args, code, stderr)
		}
	}
}

// TestSLOFlagEverywhere: burst, schedule and characterize take --slo; one
// naming ttft streams their requests, as --dry-run says; policies takes
// the same grammar and refuses, in one line, the terms the lab cannot
// measure.
func TestSLOFlagEverywhere(t *testing.T) {
	t.Parallel()
	for _, c := range [][]string{
		{"burst", "--dry-run", "--slo", "ttft=500ms,e2e=5s"},
		{"schedule", "--dry-run", "--slo", "tpot=50ms", "--rate", "2", "--duration", "2s"},
		{"characterize", "--dry-run", "--slo", "itl=100ms", "--out-dir", t.TempDir()},
	} {
		code, stdout, stderr := runCLI(context.Background(), c...)
		if code != ExitOK || !strings.Contains(stdout, "stream: on, as --slo names ttft, tpot or itl") || !strings.Contains(stdout, "slo: ") {
			t.Errorf("%v: exit %d, stderr %q, stdout:\n%s", c, code, stderr, stdout)
		}
	}
	code, stdout, _ := runCLI(context.Background(), "burst", "--dry-run", "--slo", "10s")
	if code != ExitOK || strings.Contains(stdout, "stream: on") || !strings.Contains(stdout, "slo: e2e=10s") {
		t.Errorf("an e2e SLO: exit %d, stdout:\n%s", code, stdout)
	}
	code, _, stderr := runCLI(context.Background(), "policies", "--dry-run", "--slo", "ttft=1s")
	if code != ExitUsage || !strings.Contains(stderr, "ttft, tpot and itl need token timing") || strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 {
		t.Errorf("policies --slo ttft: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCLI(context.Background(), "policies", "--dry-run", "--slo", "e2e=8s"); code != ExitOK {
		t.Errorf("policies --slo e2e=8s: exit %d, stderr %q", code, stderr)
	}
}
