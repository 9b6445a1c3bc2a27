package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/results"
)

// writeResultsFile writes a results file with n rows and returns its bytes.
func writeResultsFile(t *testing.T, path string, n int) []byte {
	t.Helper()
	recs := make([]results.Record, n)
	for i := range recs {
		recs[i] = results.Blank()
		recs[i].RunID, recs[i].Shape, recs[i].Group, recs[i].Seq, recs[i].Attempt, recs[i].Status = "earlier1", results.ShapeBurst, results.GroupBurst, i, 1, 200
	}
	testkit.WriteResults(t, path, recs...)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNothingIsLostToABadFlag: a bad target or simulator flag, or an
// output that is not ours, is refused with exit 2 before any file is
// touched: the results of an earlier run, a foreign file, an evidence
// table or a results file named as calibrate's --output stay byte for byte.
func TestNothingIsLostToABadFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	earlier := filepath.Join(dir, "runs")
	os.MkdirAll(earlier, 0o755)
	resultsPath := filepath.Join(earlier, "results.csv")
	kept := writeResultsFile(t, resultsPath, 7)
	foreignDir := filepath.Join(dir, "foreign")
	os.MkdirAll(foreignDir, 0o755)
	foreign := filepath.Join(foreignDir, "results.csv")
	os.WriteFile(foreign, []byte("source,retry_after_ms\na,5\n"), 0o644)
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("my notes\n"), 0o644)

	tests := []struct {
		args []string
		want string // in the one line of stderr
	}{
		{[]string{"characterize", "--out-dir", earlier, "--url", "ftp://typo/x"}, "--url"},
		{[]string{"characterize", "--out-dir", earlier, "--sim-ptu", "0"}, "--sim-ptu"},
		{[]string{"characterize", "--out-dir", earlier, "--endpoint", "https://x.example", "--api-key-env", "PTUPROBE_SURELY_UNSET"}, "--api-key-env"},
		{[]string{"characterize", "--out-dir", earlier, "--fail-if", "p99>>1"}, "--fail-if"},
		{[]string{"characterize", "--out-dir", foreignDir, "--burst-size", "1", "--burst-waves", "1", "--rate", "1/s", "--duration", "1s"}, "not a ptuprobe results file"},
		{[]string{"burst", "-o", notes, "--burst-size", "1"}, "not a ptuprobe results file"},
		{[]string{"calibrate", "-o", resultsPath}, "not an evidence table"},
		{[]string{"calibrate", "-o", notes}, "not an evidence table"},
		{[]string{"calibrate", "-o", filepath.Join(dir, "both.csv"), "--results", filepath.Join(dir, ".", "both.csv")}, "name the same file"},
		{[]string{"calibrate", "--results", notes, "-o", filepath.Join(dir, "e.csv")}, "--results names"},
	}
	for _, tt := range tests {
		code, stdout, stderr := runCLI(context.Background(), append(tt.args, "--quiet")...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 2 and one line naming %q", tt.args, code, stderr, stdout, tt.want)
		}
	}
	if b, _ := os.ReadFile(resultsPath); !bytes.Equal(b, kept) {
		t.Error("an earlier run's results.csv was changed")
	}
	if b, _ := os.ReadFile(foreign); string(b) != "source,retry_after_ms\na,5\n" {
		t.Error("a foreign results.csv was changed")
	}
	if b, _ := os.ReadFile(notes); string(b) != "my notes\n" {
		t.Error("a file that is not ours was changed")
	}
	if _, err := os.Stat(filepath.Join(dir, "both.csv")); err == nil {
		t.Error("calibrate wrote a file it refused")
	}
}

// TestCalibrateKeepsItsOwnOutputOnly: calibrate writes over an evidence
// table of its own, and appends its probes' rows to a results file.
func TestCalibrateKeepsItsOwnOutputOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	evidence := filepath.Join(dir, "calibrate.csv")
	res := filepath.Join(dir, "results.csv")
	writeResultsFile(t, res, 3)
	args := []string{"calibrate", "--quiet", "--sim-time-scale", "50", "--min-rate", "20/s", "--max-rate", "40/s",
		"--probe-duration", "100ms", "--depth", "0", "--pause", "10ms", "-o", evidence, "--results", res}
	for run := 1; run <= 2; run++ {
		if code, _, stderr := runCLI(context.Background(), args...); code != 0 {
			t.Fatalf("run %d: exit %d: %s", run, code, stderr)
		}
	}
	recs := readResults(t, res)
	if len(recs) <= 3 || recs[0].RunID != "earlier1" {
		t.Fatalf("%d rows, first run id %q: the earlier rows must be kept and the probes' appended", len(recs), recs[0].RunID)
	}
}
