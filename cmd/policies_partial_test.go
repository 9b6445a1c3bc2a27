package cmd

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/policylab"
)

// TestPoliciesInterruptedSayPartial: a lab interrupted (here before its
// first run) exits 130, prints its table opening with the partial line,
// and its one line on stderr says how many runs of how many finished.
func TestPoliciesInterruptedSayPartial(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := filepath.Join(t.TempDir(), "lab")
	code, stdout, stderr := runCLI(ctx, "policies", "--out-dir", dir, "--quiet",
		"--policy", "honor", "--policy", "pace", "--load", "1.5x", "--duration", "2s", "--repeat", "1", "--clients", "2")
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d: %s", code, ExitInterrupted, stderr)
	}
	// Two policies, each also under the SDKs' cap.
	if !strings.HasPrefix(stdout, "partial: interrupted after 0 of 4 runs") || !strings.Contains(stdout, "nothing recommended: interrupted: honor, pace unfinished") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if want := "partial: interrupted after 0 of 4 runs: the 0 rows completed are in " + dir + "\n"; !strings.HasSuffix(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr %q, want one line ending %q", stderr, want)
	}
}

// TestPoliciesWorkCap: the default lab's estimate, which --dry-run prints
// with the cap, is about a 45th of the default --max-work, as
// docs/policies.md says; a lab past the cap runs once --max-work is
// raised past its estimate.
func TestPoliciesWorkCap(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runCLI(context.Background(), "policies", "--dry-run")
	m := regexp.MustCompile(`work: at most ([0-9,]+) attempts on the simulator \(--max-work ([0-9,]+)\)`).FindStringSubmatch(stdout)
	if code != 0 || m == nil {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if m[1] != "7,082,955" || m[2] != "320,000,000" || policylab.DefaultMaxWork/7_082_955 != 45 {
		t.Errorf("default work %s of %s: want 7,082,955 of 320,000,000 (the docs' figures, a 45th)", m[1], m[2])
	}
	code, stdout, stderr = runCLI(context.Background(), "policies", "--dry-run", "--clients", "1024", "--load", "100x", "--repeat", "20", "--max-work", "534651480")
	if code != 0 || !strings.Contains(stdout, "work: at most 534,651,480 attempts on the simulator (--max-work 534,651,480)") {
		t.Errorf("raised --max-work: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
