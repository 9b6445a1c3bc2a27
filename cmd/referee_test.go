package cmd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRefereeExitCodes: a bad flag, no COMMAND, a COMMAND without -- and
// one that cannot start are usage errors (2), each one line; a command
// that sends nothing is graded, and fails the requests check (3).
func TestRefereeExitCodes(t *testing.T) {
	// Not parallel: a referee run ends, as escapees of its command, the
	// children of its process started while it ran (runsInFlight 1), and
	// in this test binary those are also a parallel test's redis-server
	// or re-run binary (TestPoliciesCoordinated's Redis was killed: EOF).
	// The package's parallel tests wait while a sequential one runs.
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) here")
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"referee"}, ExitUsage, "after --"},
		{[]string{"referee", "true"}, ExitUsage, "after --"},
		{[]string{"referee", "--scenario", "calm", "--", "true"}, ExitUsage, "--scenario"},
		{[]string{"referee", "--sim-dialect", "x", "--", "true"}, ExitUsage, "--sim-dialect"},
		{[]string{"referee", "--scenario", "headers-only", "--", "true"}, ExitUsage, "--sim-dialect"},
		{[]string{"referee", "--scenario", "headers-only", "--sim-dialect", "gemini", "--", "true"}, ExitUsage, "--scenario"},
		{[]string{"referee", "--pass-env", "OPENAI_API_KEY", "--", "true"}, ExitUsage, "--pass-env"},
		{[]string{"referee", "--owner-retries", "-1", "--", "true"}, ExitUsage, "--owner-retries"},
		{[]string{"referee", "--expect", "owners", "--", "true"}, ExitUsage, "--expect"},
		{[]string{"referee", "--timeout", "0s", "--", "true"}, ExitUsage, "--timeout"},
		{[]string{"referee", "--", filepath.Join(dir, "no-such-program")}, ExitUsage, "could not be started"},
		{[]string{"referee", "--out-dir", dir, "--", truePath}, ExitThreshold, "FAIL (requests)"},
	} {
		code, out, errOut := runCLI(t.Context(), tc.args...)
		// A command that started hears, first, which variables it was
		// not given (names only): the test's own PTUPROBE_TEST_KEY.
		errOut = withoutNotes(errOut)
		if code != tc.code || !strings.Contains(errOut, tc.msg) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want %d and one line with %q", tc.args, code, errOut, tc.code, tc.msg)
		}
		if tc.code == ExitThreshold && !strings.Contains(out, "early_returns") {
			t.Errorf("%v: no verdict table in %q", tc.args, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "referee.json")); err != nil {
		t.Error(err)
	}
}

// withoutNotes is stderr without the referee's notes on the environment.
func withoutNotes(stderr string) string {
	var kept []string
	for _, line := range strings.SplitAfter(stderr, "\n") {
		if !strings.HasPrefix(line, "referee: ") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "")
}

// TestRefereeHelpExamples: --help shows how to grade a Node app, a Python
// app and a Go test, and stays short.
func TestRefereeHelpExamples(t *testing.T) {
	t.Parallel()
	code, out, _ := runCLI(t.Context(), "referee", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"-- node app.js", "-- python app.py", "-- go test -count=1 ./..."} {
		if !strings.Contains(out, want) {
			t.Errorf("--help has no example %q", want)
		}
	}
	if n := strings.Count(out, "\n"); n > 80 {
		t.Errorf("--help is %d lines, want at most 80", n)
	}
}

// TestRefereeInterrupted: an interrupted referee exits 130 and writes the
// verdict of what the simulator saw, marked interrupted.
func TestRefereeInterrupted(t *testing.T) {
	// Not parallel: TestRefereeExitCodes says why.
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep(1) here")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh(1) here")
	}
	dir := t.TempDir()
	// The command marks that it runs, then sleeps a minute: the cancel
	// comes once the mark is there, however long that took.
	mark := filepath.Join(t.TempDir(), "running")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for ctx.Err() == nil {
			if _, err := os.Stat(mark); err == nil {
				cancel()
			}
			<-tick.C
		}
	}()
	code, out, errOut := runCLI(ctx, "referee", "--out-dir", dir, "--", sh, "-c", `: > "$0"; exec "$1" 60`, mark, sleep)
	b, rerr := os.ReadFile(filepath.Join(dir, "referee.json"))
	if code != ExitInterrupted || !strings.Contains(errOut, "interrupted") || !strings.Contains(out, "early_returns") || rerr != nil || !strings.Contains(string(b), `"interrupted": true`) {
		t.Errorf("exit %d, stderr %q, referee.json %s %v", code, errOut, b, rerr)
	}
}
