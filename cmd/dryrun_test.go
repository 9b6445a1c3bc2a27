package cmd

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestDryRunSendsNothing: every traffic command's --dry-run against a
// named loopback target prints the plan, exit 0, and makes no connection
// (not to the target, not to --coordinate's Redis), serves no metrics
// (their address is the listener's own, taken: serving would fail) and
// writes no file; the target is named by its kind, never its address.
func TestDryRunSendsNothing(t *testing.T) {
	t.Parallel()
	addr, conns := connCounter(t)
	dir := t.TempDir()
	named := []string{"--endpoint", "http://" + addr, "--deployment", "d", "--api-key-env", testKeyEnv, "--dry-run"}
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"burst", "--burst-size", "5", "--burst-waves", "3", "--burst-gap", "2s", "-o", filepath.Join(dir, "b.csv"),
			"--metrics-addr", addr, "--max-attempts", "3", "--coordinate", "redis://" + addr + "/0"},
			[]string{"burst plan: 3 waves of 5 requests, 2s apart, each at one instant: 15 requests, peak 5 at once, spans 4s", "in all: 15 requests", "about 4s", "retries:"}},
		{[]string{"schedule", "--phase", "up:10s@1/s-3/s", "--phase", "hold:5s@4/s", "-o", filepath.Join(dir, "s.csv")},
			[]string{"up 10s from 1/s to 3/s, hold 5s at 4/s: 40 requests, peak 4/s, spans 15s"}},
		{[]string{"characterize", "--burst-size", "2", "--burst-waves", "1", "--rate", "2/s", "--duration", "3s", "--out-dir", filepath.Join(dir, "c"),
			"--shard", "1/2", "--start-at", "2099-01-01T00:00:00Z"},
			nil}, // refused: the start is more than a day ahead (checked as a run would)
		{[]string{"characterize", "--burst-size", "2", "--burst-waves", "1", "--rate", "2/s", "--duration", "3s", "--out-dir", filepath.Join(dir, "c")},
			[]string{"burst plan: 1 wave of 2 requests", "scheduled plan (constant arrivals): constant 3s at 2/s: 6 requests", "in all: 8 requests", "(replaced)"}},
		// The main job's default phases: the burst waves growing to first
		// contact (40, 80, 160, 160 at most), the ramp sized by the burst
		// plan, its bounds stated (2.5 × 40 ÷ 2 s; --max-requests 400
		// leaves the ramp 231 requests and the waves no room to grow), then
		// the refill probe (4 × 2 × 40 at most, a quarter of a request each
		// at most, after 20 s), which --max-requests 400 leaves off.
		{[]string{"characterize", "--out-dir", filepath.Join(dir, "c")},
			[]string{"burst plan: 4 waves of 40 requests, 2s apart, each at one instant: 160 requests, peak 40 at once, spans 6s; growing to first contact: a wave after the first is 2× the one before while no first attempt of the waves before it was refused (a 429 by its time), then 40 again: waves of at most 160 (4× 40, within --max-requests and --max-in-flight), at most 440 requests, peak 160 at once\n",
				"ramp 12s from 3/s to 24/s: 171 requests", "sized by the burst plan: its ramp phase's top raised to 2.5× the most first attempts a wave after the first admitted ÷ 2s, when that is more than 24/s: at most 50/s, 327 requests",
				"refill probe (group refill-probe): a rest of 20s after the plans before it, then requests of a u-th of the job's prompt and max_tokens 25ms ÷ u apart until the first 429 comes back, u = 120 ÷ what the burst plan's first wave admitted, from 1 to 4 (4 if none; 1 if the whole wave, or with a raw body or a prompts file, which cannot be cut): at most 320 requests, 2s",
				"in all: 651 requests (first attempts; at most 1087 as the burst waves grow and size the ramp, within --max-requests 10000), expected duration about 43s"}},
		// Within the caps: --max-in-flight 100 holds a wave of 100 at
		// once; --max-requests 840 leaves the waves 840 − 320 − 327 − 40 =
		// 153 for three (51 each at most).
		{[]string{"characterize", "--max-in-flight", "100", "--out-dir", filepath.Join(dir, "c")},
			[]string{"waves of at most 100 (4× 40, within --max-requests and --max-in-flight), at most 320 requests, peak 100 at once", "at most 967 as the burst waves grow"}},
		{[]string{"characterize", "--max-requests", "840", "--out-dir", filepath.Join(dir, "c")},
			[]string{"waves of at most 51 (4× 40, within --max-requests and --max-in-flight), at most 193 requests", "at most 840 as the burst waves grow and size the ramp"}},
		// Named waves are as given.
		{[]string{"characterize", "--burst-size", "40", "--out-dir", filepath.Join(dir, "c")},
			[]string{"burst plan: 4 waves of 40 requests, 2s apart, each at one instant: 160 requests, peak 40 at once, spans 6s\n"}},
		{[]string{"characterize", "--max-requests", "400", "--out-dir", filepath.Join(dir, "c")},
			[]string{"at most 35.5/s, 240 requests", "at most 400 as the burst plan sizes the ramp",
				"spans 6s; its waves do not grow to first contact: --max-requests 400 and --max-in-flight 256 leave no room\n", "refill probe: off: its 320 requests more than the plan's 331 would pass the bound of 400"}},
		{[]string{"characterize", "--max-requests", "660", "--out-dir", filepath.Join(dir, "c")},
			[]string{"at most 25.5/s, 180 requests", "at most 320 requests", "at most 660 as the burst plan sizes the ramp"}},
		{[]string{"characterize", "--refill-rest", "45s", "--burst-size", "10", "--out-dir", filepath.Join(dir, "c")},
			[]string{"refill probe (group refill-probe): a rest of 45s", "at most 80 requests"}},
		// A fleet's plan is as given: the scheduled plan's line ends there.
		{[]string{"characterize", "--shard", "1/2", "--start-at", time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "--out-dir", filepath.Join(dir, "c")},
			[]string{"ramp 12s from 3/s to 24/s: 171 requests, peak 24/s, spans 15s\n", "in all: 331 requests (first attempts), expected"}},
		{[]string{"calibrate", "--min-rate", "1/s", "--max-rate", "4/s", "--probe-duration", "2s", "--depth", "1", "--pause", "1s", "-o", filepath.Join(dir, "cal.csv")},
			[]string{"grid: 1/s, 2/s, 4/s, each probe 2s; then up to 1 bisection probes (at most 4 probes)", "at most about 11s"}},
		{[]string{"policies", "--capacity", "4", "--load", "1x,2/s", "--policy", "honor", "--policy", "pace", "--repeat", "1", "--duration", "10s",
			"--pause", "5s", "--out-dir", filepath.Join(dir, "p")},
			[]string{"runs: 4 (2 policies × 2 loads × 1 fleet size × 1 repeat), on the wall clock", "1x (4/s), 2/s (2/s)", "peak 4/s", "expected duration: up to about"}},
	}
	for _, tt := range tests {
		code, stdout, stderr := runCLI(context.Background(), append(tt.args, named...)...)
		if tt.want == nil {
			if code != ExitUsage {
				t.Errorf("%v: exit %d, want 2", tt.args, code)
			}
			continue
		}
		if code != 0 || !strings.HasPrefix(stdout, dryRunHeader+"\ntarget: azure (host not shown)\n") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tt.args, code, stdout, stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%v: stdout lacks %q:\n%s", tt.args, w, stdout)
			}
		}
		if strings.Contains(stdout+stderr, addr) {
			t.Errorf("%v: the output names the target's address", tt.args)
		}
	}
	// The lab coordinated through a Redis: the dry run does not dial it.
	code, stdout, stderr := runCLI(context.Background(), "policies", "--dry-run", "--policy", "slots", "--policy", "honor", "--repeat", "1", "--load", "2x",
		"--coordinate", "redis://"+addr+"/0", "--out-dir", filepath.Join(dir, "lab"))
	if code != 0 || !strings.Contains(stdout, "1 policy also coordinated through --coordinate's Redis") {
		t.Errorf("policies --coordinate --dry-run: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("%d connections made by dry runs", n)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("dry runs wrote %d files", len(entries))
	}
}

// TestDryRunOnTheSimulator: with no target, the plan names the embedded
// simulator, and nothing is written.
func TestDryRunOnTheSimulator(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "r.csv")
	code, stdout, stderr := runCLI(context.Background(), "burst", "--dry-run", "--burst-spread", "2s", "--burst-gap", "5s", "--burst-waves", "2", "-o", out)
	if code != 0 || !strings.Contains(stdout, "target: the embedded simulator (--sim-profile ptu, --sim-dialect azure)") ||
		!strings.Contains(stdout, "each spread over 2s: 40 requests, peak 10/s") || strings.Contains(stderr, "simulator at") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a dry run wrote the results file")
	}
}

// TestExpectedDurationPrinted: characterize and calibrate say how long
// they expect to take as they start, on stderr.
func TestExpectedDurationPrinted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// The simulator answers at 50× (TestCharacterizeSmallOnSimulator): the
	// expectation is the plan's, not the answers'.
	code, _, stderr := runCLI(context.Background(), "characterize", "--burst-size", "2", "--burst-waves", "1", "--rate", "20/s", "--duration", "200ms",
		"--sim-time-scale", "50", "--out-dir", filepath.Join(dir, "c"))
	if code != 0 || !strings.Contains(stderr, "characterize: 6 requests in 2 plans, expected to take about 200ms, then the report\n") {
		t.Errorf("characterize: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCLI(context.Background(), "calibrate", "--min-rate", "10/s", "--max-rate", "20/s", "--probe-duration", "100ms", "--depth", "0",
		"--pause", "10ms", "--sim-time-scale", "50", "-o", filepath.Join(dir, "cal.csv"))
	if code != 0 || !strings.Contains(stderr, "calibrate: at most 2 probes of 100ms, expected to take at most about 210ms") {
		t.Errorf("calibrate: exit %d, stderr %q", code, stderr)
	}
}

// connCounter is a loopback listener that counts the connections made to
// it (closing each at once), for tests that prove none is made.
func connCounter(t *testing.T) (addr string, conns *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conns = new(atomic.Int64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().String(), conns
}

// TestCharacterizeNamesTheProbe: characterize's start line counts to the
// most a refill probe may send, and the probe's summary is the refill
// probe's, not a second burst plan's (it is burst-shaped).
func TestCharacterizeNamesTheProbe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, _, stderr := runCLI(context.Background(), "characterize", "--burst-size", "4", "--burst-waves", "1", "--skip-schedule", "--refill-rest", "100ms",
		"--sim-time-scale", "50", "--out-dir", filepath.Join(dir, "c"))
	for _, want := range []string{"characterize: at most 36 requests in 2 plans (the refill probe ends at its first 429), expected to take about", "\nburst plan: requests: 4 planned", "\nrefill probe: requests: "} {
		if code != 0 || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, stderr lacks %q:\n%s", code, want, stderr)
		}
	}
}
