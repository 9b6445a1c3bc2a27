package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// capacityOf runs capacity on the embedded simulator at ptu and returns
// capacity.json.
func capacityOf(t *testing.T, args ...string) (map[string]any, []byte) {
	t.Helper()
	dir := t.TempDir()
	code, stdout, stderr := runCLI(context.Background(), append([]string{"capacity", "-q", "--out-dir", dir}, args...)...)
	if code != 0 || !strings.Contains(stdout, "capacity: ") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "capacity.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc, b
}

// TestCapacityScalesWithPTU: twice the PTU (--sim-ptu) sustain 1.6–2.4
// times the load, and capacity.json holds the search. That a search is
// a function of its settings (the same file twice) is internal/capacity's
// TestSearchOnTheSimulator. 50 and 100 PTU in steps of 30 s, as there:
// the search's requests are a quarter of 100 and 200 PTU's in 60 s steps
// (issue 39), the ratio the same (2.00 either way).
func TestCapacityScalesWithPTU(t *testing.T) {
	t.Parallel()
	small, _ := capacityOf(t, "--sim-ptu", "50", "--duration", "30s", "--slo", "ttft=2s")
	large, _ := capacityOf(t, "--sim-ptu", "100", "--duration", "30s", "--slo", "ttft=2s")
	s, l := small["max_rate_per_s"].(float64), large["max_rate_per_s"].(float64)
	if small["verdict"] != "found" || !(l/s >= 1.6 && l/s <= 2.4) {
		t.Errorf("50 PTU %g/s, 100 PTU %g/s (%v)", s, l, small["verdict"])
	}
	if tpm := small["max_tokens_per_min"].(float64); !(tpm > s*60*1000) {
		t.Errorf("%g tokens/min at %g/s of 1,000-token prompts", tpm, s)
	}
	lo, hi := small["interval_low_per_s"].(float64), small["interval_high_per_s"].(float64)
	if !(lo <= s && s <= hi) || len(small["steps"].([]any)) < 5 {
		t.Errorf("capacity %g outside its interval %g–%g, or too few steps", s, lo, hi)
	}
}

// TestCapacityDryRun: the worst case in requests, tokens and time, and
// nothing written.
func TestCapacityDryRun(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	code, stdout, _ := runCLI(context.Background(), "capacity", "--dry-run", "--url", "http://127.0.0.1:1/v1/chat/completions",
		"--min-rate", "1/s", "--max-rate", "4/s", "--duration", "10s", "--pause", "5s", "--depth", "1", "--repeats", "2", "--out-dir", dir)
	// ramp 1, 2, 4 (10+20+40 requests), 1 bisection and 2 repeats at 4/s (3×40): 190 requests of 1,100 tokens;
	// 6 steps of 10 s and 5 pauses of 5 s.
	if code != 0 || !strings.Contains(stdout, "worst case: 6 steps, at most 190 requests, 209,000 tokens, 1m25s") || !strings.Contains(stdout, "wall clock") {
		t.Errorf("exit %d\n%s", code, stdout)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a dry run made %s", dir)
	}
}

func TestCapacityBadInput(t *testing.T) {
	t.Parallel()
	prompts := filepath.Join(t.TempDir(), "p.jsonl")
	os.WriteFile(prompts, []byte(`{"prompt":"hi"}`+"\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--goodput", "120%"}, "--goodput: must be from 0% to 100%"},
		{[]string{"--max-429-share", "lots"}, "--max-429-share: want a percentage"},
		{[]string{"--goodput", "0"}, "--goodput"},
		{[]string{"--min-rate", "8/s", "--max-rate", "4/s"}, "--max-rate"},
		{[]string{"--duration", "10ms"}, "--duration"},
		{[]string{"--repeats", "0"}, "--repeats"},
		{[]string{"--prompts", prompts}, "--prompts"},
		{[]string{"--slo", "ttft=fast"}, "--slo"},
	} {
		code, _, stderr := runCLI(context.Background(), append([]string{"capacity", "-q", "--out-dir", t.TempDir()}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
