package cmd

import (
	"context"
	"encoding/csv"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestCharacterizeSmallOnSimulator runs the main job with small plans on the
// embedded simulator and checks the report it leaves.
func TestCharacterizeSmallOnSimulator(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "report")
	args := []string{"characterize", "--out-dir", dir, "--quiet",
		"--burst-size", "30", "--burst-waves", "2", "--burst-gap", "50ms",
		"--rate", "320/s", "--duration", "125ms", "--sim-time-scale", "50"}
	code, stdout, stderr := runCLI(context.Background(), args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := readResults(t, filepath.Join(dir, "results.csv"))
	if len(recs) != 100 {
		t.Fatalf("%d rows, want 60 burst + 40 scheduled", len(recs))
	}
	shapes := map[string]int{}
	for _, r := range recs {
		shapes[r.Shape]++
		if r.RunID != recs[0].RunID {
			t.Fatal("one invocation wrote two run ids")
		}
	}
	if shapes["burst"] != 60 || shapes["scheduled"] != 40 {
		t.Fatalf("shapes %v", shapes)
	}
	for _, f := range []string{"retry_after_ms_percentiles.csv", "retry_after_ms_events.csv", "summary.md", "analysis.json", "retry_after_ms_ecdf.png", "retry_after_ms_ecdf.svg", "retry_after_ms_histogram.png", "report.html"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty", f)
		}
	}
	f, _ := os.Open(filepath.Join(dir, "retry_after_ms_percentiles.csv"))
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) < 2 || rows[1][0] != "Overall" {
		t.Fatalf("percentiles: %v %v", rows, err)
	}
	if !strings.Contains(stdout, "| Overall |") || !strings.Contains(stdout, "retry_after_ms_ecdf.png") {
		t.Fatalf("stdout:\n%s", stdout)
	}

	// Run again: results.csv is replaced, not appended to, unless --append.
	if code, _, stderr := runCLI(context.Background(), append(args, "--skip-burst")...); code != 0 {
		t.Fatalf("second run exit %d: %s", code, stderr)
	}
	if n := len(readResults(t, filepath.Join(dir, "results.csv"))); n != 40 {
		t.Fatalf("after a replacing run: %d rows, want 40", n)
	}
	// With --append, and a threshold that must breach: exit 3, naming the
	// measured value, the rows of both runs.
	code, _, stderr = runCLI(context.Background(), append(args, "--skip-burst", "--append", "--fail-if", "scheduled.attempts<1000")...)
	if code != ExitThreshold || !strings.Contains(stderr, "scheduled.attempts<1000") || !strings.Contains(stderr, "80") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if n := len(readResults(t, filepath.Join(dir, "results.csv"))); n != 80 {
		t.Fatalf("after --append: %d rows, want 80", n)
	}
}

func TestCharacterizeRejectsBadInputBeforeRunning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--fail-if", "overall.p99_ms>>3"},
		{"--label", "no-equals-sign"},
		{"--skip-burst", "--skip-schedule"},
		{"--burst-size", "0"},
		{"--phase", "nonsense"},
		{"--max-duration", "1s"},
		{"--burst-size", "9000", "--burst-waves", "2"},
	} {
		out := filepath.Join(dir, "r")
		code, _, stderr := runCLI(context.Background(), append([]string{"characterize", "--out-dir", out, "--quiet"}, args...)...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr)
		}
		if _, err := os.Stat(filepath.Join(out, "results.csv")); err == nil {
			t.Errorf("%v: traffic was sent before the input was checked", args)
		}
	}
}

// kneeTarget admits the first admit requests and refuses every later one
// (429, 100 ms advised): a knee by count, whatever the clock, so that the
// probes of calibrate at 40/s for 150 ms (6 requests) are admitted and
// those at 80/s (12) refused, however loaded the machine. It once was the
// simulator at 20× time, whose 429s a loaded machine's late sends missed.
// Calibrate's knee against the simulator is internal/campaign's
// TestKneeMatchesSimulatorCapacity, on a fake clock.
func kneeTarget(t *testing.T, admit int64) *httptest.Server {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if n.Add(1) > admit {
			w.Header().Set("retry-after-ms", "100")
			w.WriteHeader(429)
			return
		}
		w.Write([]byte(`{"usage":{"prompt_tokens":10,"completion_tokens":1}}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// kneeArgs are calibrate's flags for kneeTarget(t, 8): rates 40/s to 160/s,
// probes of 150 ms, one step of refinement.
func kneeArgs(srv *httptest.Server) []string {
	return []string{"calibrate", "--url", srv.URL, "--api", "openai", "--api-key-env", testKeyEnv, "--min-rate", "40/s", "--max-rate", "160/s",
		"--probe-duration", "150ms", "--depth", "1", "--pause", "50ms"}
}

func TestCalibrateCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	evidence := filepath.Join(dir, "calibrate.csv")
	code, stdout, stderr := runCLI(context.Background(), append(kneeArgs(kneeTarget(t, 8)), "--quiet",
		"-o", evidence, "--results", filepath.Join(dir, "results.csv"))...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "knee: 40/s admitted without 429s") || !strings.Contains(stdout, "verdict") {
		t.Fatalf("stdout:\n%s", stdout)
	}
	b, err := os.ReadFile(evidence)
	if err != nil || !strings.HasPrefix(string(b), "step,phase,offered_rps") {
		t.Fatalf("calibrate.csv: %q %v", b, err)
	}
	if len(readResults(t, filepath.Join(dir, "results.csv"))) == 0 {
		t.Fatal("no probe rows in --results")
	}
	for _, bad := range [][]string{{"--min-rate", "0"}, {"--max-rate", "1/s", "--min-rate", "2/s"}, {"--factor", "1"}, {"--probe-duration", "0s"}, {"--max-rate", "5000/s", "--probe-duration", "1m"}} {
		if code, _, _ := runCLI(context.Background(), append([]string{"calibrate", "--quiet", "-o", evidence}, bad...)...); code != ExitUsage {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

// TestRefillProbeRule: the main job's refill probe follows the default
// plans; a plan named by its flags keeps its meaning (no probe) unless
// --refill-rest is given; --refill-rest 0 turns it off; given where it
// cannot run, it is refused (exit 2) naming the flag.
func TestRefillProbeRule(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := []string{"--dry-run", "--out-dir", filepath.Join(dir, "c")}
	for _, c := range []struct {
		args  []string
		code  int
		probe bool
		say   string
	}{
		{nil, 0, true, "refill probe (group refill-probe): a rest of 20s"},
		{[]string{"--refill-rest", "0"}, 0, false, ""},
		{[]string{"--burst-size", "10"}, 0, false, ""},
		{[]string{"--size", "10"}, 0, false, ""}, // the old name names the plan too
		{[]string{"--rate", "2/s", "--duration", "5s"}, 0, false, ""},
		{[]string{"--rate", "2/s", "--duration", "5s", "--refill-rest", "10s"}, 0, true, "a rest of 10s"},
		{[]string{"--max-duration", "30s"}, 0, false, "refill probe: off: its 22s after the plan's 21s would pass the time cap of 30s"},
		{[]string{"--refill-rest", "20s", "--max-duration", "30s"}, ExitUsage, false, "--max-duration is 30s, but the plan and its refill probe span"},
		{[]string{"--refill-rest", "20s", "--group", "x"}, ExitUsage, false, "--refill-rest goes not with --group"},
		{[]string{"--refill-rest", "20s", "--skip-burst"}, ExitUsage, false, "--refill-rest needs the burst plan before it"},
		{[]string{"--refill-rest", "-1s"}, ExitUsage, false, "--refill-rest must not be negative"},
	} {
		code, stdout, stderr := runCLI(context.Background(), append(append([]string{"characterize"}, c.args...), out...)...)
		if code != c.code || strings.Contains(stdout, "refill probe (group") != c.probe || !strings.Contains(stdout+stderr, c.say) {
			t.Errorf("%v: exit %d (want %d), probe %v (want %v), want %q in:\n%s%s", c.args, code, c.code, !c.probe, c.probe, c.say, stdout, stderr)
		}
	}
}
