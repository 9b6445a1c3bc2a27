package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/results"
)

// writeTTFTRun writes n streamed answers of a run whose first token comes
// at base + (seq mod 50) ms: a slower run is the same with a larger base.
func writeTTFTRun(t *testing.T, path string, n int, base float64) {
	t.Helper()
	writeScheduledRun(t, path, "ba5e0037", n, func(i int, r *results.Record) {
		r.IntendedMS, r.SentMS, r.TTFBMS, r.Status = float64(5*i), float64(5*i), 3, 200
		r.TTFTMS = base + float64(i%50)
		r.CompletionTokens, r.PromptTokens = 21, 300
		r.TPOTMS, r.ITLP50MS, r.ITLMaxMS = 5, 5, 12
		r.LatencyMS = r.TTFTMS + 100
		if i%20 == 19 {
			r.Status, r.TTFTMS, r.TPOTMS, r.ITLP50MS, r.ITLMaxMS, r.CompletionTokens, r.PromptTokens = 429, -1, -1, -1, -1, -1, -1
			r.LatencyMS, r.WaitMS, r.WaitSource = 4, 500, results.WaitRetryAfterMS
		}
	})
}

// TestAnalyzeBaseline: a run whose TTFT rose by 100 ms shows the change
// beyond the noise and breaches 'ttft_p99>+10%'; the same run against
// itself changes nothing, within the noise; a report directory holding
// results.csv is a baseline; the comparison is the same on every run; a
// change term without --baseline is a usage error.
func TestAnalyzeBaseline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	baseDir := filepath.Join(dir, "last-week")
	if err := os.Mkdir(baseDir, 0o755); err != nil {
		t.Fatal(err)
	}
	base, slower := filepath.Join(baseDir, "results.csv"), filepath.Join(dir, "slower.csv")
	writeTTFTRun(t, base, 400, 100)
	writeTTFTRun(t, slower, 400, 200)

	var jsons [][]byte
	for i := range 2 {
		out := filepath.Join(dir, "report", string(rune('a'+i)))
		code, stdout, stderr := runCLI(context.Background(), "analyze", "--out-dir", out, "--baseline", baseDir, "--fail-if", "ttft_p99>+10%", "--fail-if", "success_pct<-1%", slower)
		if code != ExitThreshold || !strings.Contains(stderr, "threshold ttft_p99>+10% breached: measured ") {
			t.Fatalf("exit %d, want 3; stderr %q", code, stderr)
		}
		if !strings.Contains(stdout, "threshold success_pct<-1% passed: measured 0") {
			t.Errorf("success did not change: stdout\n%s", stdout)
		}
		if !strings.Contains(stdout, "| Overall | `ttft_p99_ms` | 148.21 | 248.21 | +100 | +67.5% |") || !strings.Contains(stdout, "| beyond |") {
			t.Errorf("stdout lacks the TTFT change:\n%s", stdout)
		}
		raw, err := os.ReadFile(filepath.Join(out, "analysis.json"))
		if err != nil {
			t.Fatal(err)
		}
		var j struct {
			Baseline struct {
				Resamples int `json:"resamples"`
				Changes   []struct {
					Group, Figure, Noise string
				} `json:"changes"`
			} `json:"baseline"`
		}
		if err := json.Unmarshal(raw, &j); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, c := range j.Baseline.Changes {
			if c.Group == "Overall" && c.Figure == "ttft_p50_ms" {
				found = c.Noise == "beyond"
			}
		}
		if j.Baseline.Resamples != 1000 || !found {
			t.Errorf("analysis.json baseline %+v", j.Baseline)
		}
		for _, name := range []string{"summary.md", "report.html"} {
			if b, err := os.ReadFile(filepath.Join(out, name)); err != nil || !bytes.Contains(b, []byte("Run over run")) {
				t.Errorf("%s lacks the comparison (%v)", name, err)
			}
		}
		jsons = append(jsons, raw)
	}
	if !bytes.Equal(jsons[0], jsons[1]) {
		t.Error("two comparisons of the same runs differ")
	}

	code, stdout, stderr := runCLI(context.Background(), "analyze", "--out-dir", filepath.Join(dir, "same"), "--baseline", base, "--fail-if", "ttft_p99>+1%", base)
	if code != ExitOK || strings.Contains(stdout, "| beyond |") || !strings.Contains(stdout, "| within |") {
		t.Errorf("a run against itself: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	for _, args := range [][]string{
		{"--fail-if", "ttft_p99>+10%", base},
		{"--baseline", filepath.Join(dir, "missing"), base},
		{"--baseline", base, "--fail-if", "latency_p95_ms>+10%", base},
	} {
		code, _, stderr := runCLI(context.Background(), append([]string{"analyze", "--out-dir", filepath.Join(dir, "bad")}, args...)...)
		if code != ExitUsage || strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 in one line", args, code, stderr)
		}
	}
}
