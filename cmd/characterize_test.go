package cmd

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCharacterizeSmallOnSimulator runs the main job with small plans on the
// embedded simulator and checks the report it leaves.
func TestCharacterizeSmallOnSimulator(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "report")
	args := []string{"characterize", "--out-dir", dir, "--quiet",
		"--burst-size", "30", "--burst-waves", "2", "--burst-gap", "100ms",
		"--rate", "160/s", "--duration", "250ms", "--sim-time-scale", "50"}
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

func TestCalibrateCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	evidence := filepath.Join(dir, "calibrate.csv")
	// 50 PTU sustain about 1.7 requests/s of the default request, 35/s at
	// 20× time: the grid's 80/s overruns the bucket within its probe.
	code, stdout, stderr := runCLI(context.Background(), "calibrate", "--quiet", "--sim-time-scale", "20", "--sim-ptu", "50",
		"--min-rate", "20/s", "--max-rate", "80/s", "--probe-duration", "300ms", "--depth", "1", "--pause", "50ms",
		"-o", evidence, "--results", filepath.Join(dir, "results.csv"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "admitted without 429s") || !strings.Contains(stdout, "verdict") {
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
