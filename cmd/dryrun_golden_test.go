package cmd

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestDryRunsAsBefore: every dry run prints what it printed when cmd
// still put the plans in words itself (the golden files were written by
// the tree before campaign.Job.Describe, campaign.Target.Kind and
// writePlan): the target's kind in each of its forms, the plans, the
// tokens, the SLO, the retries, the results, calibrate's and capacity's
// plans. A dry run writes nothing, so the output paths are relative.
func TestDryRunsAsBefore(t *testing.T) {
	t.Setenv(testKeyEnv, "k")
	tests := []struct {
		name string
		args []string
	}{
		{"burst-sim", []string{"burst", "--dry-run", "--burst-spread", "2s", "--burst-gap", "5s", "--burst-waves", "2", "-o", "out/b.csv", "--slo", "ttft=2s", "--max-attempts", "3"}},
		{"schedule-azure", []string{"schedule", "--dry-run", "--phase", "up:10s@1/s-3/s", "--phase", "hold:5s@4/s", "-o", "out/s.csv", "--endpoint", "http://127.0.0.1:9", "--deployment", "d", "--api-key-env", "PTUPROBE_TEST_KEY", "--slo", "e2e=5s"}},
		{"characterize-documents", []string{"characterize", "--dry-run", "--burst-size", "2", "--burst-waves", "1", "--rate", "2/s", "--duration", "3s", "--out-dir", "out/c", "--sim-profile", "documents", "--policy", "honor"}},
		{"schedule-raw", []string{"schedule", "--dry-run", "--rate", "2/s", "--duration", "5s", "-o", "out/r.csv", "--url", "http://127.0.0.1:9/x", "--body", "{}", "--api-key-env", "PTUPROBE_TEST_KEY"}},
		{"schedule-url", []string{"schedule", "--dry-run", "--rate", "2/s", "--duration", "5s", "-o", "out/u.csv", "--url", "http://127.0.0.1:9/v1"}},
		{"schedule-openai", []string{"schedule", "--dry-run", "--rate", "2/s", "--duration", "5s", "-o", "out/o.csv", "--api", "openai", "--url", "http://127.0.0.1:9/v1", "--api-key-env", "PTUPROBE_TEST_KEY", "--tokenizer", "cl100k_base"}},
		{"calibrate-azure", []string{"calibrate", "--dry-run", "--min-rate", "1/s", "--max-rate", "4/s", "--probe-duration", "2s", "--depth", "1", "--pause", "1s", "-o", "out/cal.csv", "--endpoint", "http://127.0.0.1:9", "--deployment", "d", "--api-key-env", "PTUPROBE_TEST_KEY"}},
		{"calibrate-sim", []string{"calibrate", "--dry-run", "--min-rate", "0.5/s", "--max-rate", "8/s", "-o", "out/cal.csv"}},
		{"capacity-sim", []string{"capacity", "--dry-run", "--out-dir", "out/cap", "--slo", "ttft=2s"}},
		{"capacity-azure", []string{"capacity", "--dry-run", "--out-dir", "out/cap", "--endpoint", "http://127.0.0.1:9", "--deployment", "d", "--api-key-env", "PTUPROBE_TEST_KEY", "--max-requests", "500", "--max-time", "10m"}},
	}
	for _, tt := range tests {
		code, stdout, stderr := runCLI(context.Background(), tt.args...)
		want, err := os.ReadFile(filepath.Join("testdata", "dryrun", tt.name+".golden"))
		if err != nil {
			t.Fatal(err)
		}
		if code != 0 || stdout != string(want) {
			t.Errorf("%s: exit %d, stderr %q, stdout\n%s\nwant\n%s", tt.name, code, stderr, stdout, want)
		}
	}
}
