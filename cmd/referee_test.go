package cmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefereeExitCodes: a bad flag, no COMMAND, a COMMAND without -- and
// one that cannot start are usage errors (2), each one line; a command
// that sends nothing is graded, and fails the requests check (3).
func TestRefereeExitCodes(t *testing.T) {
	t.Parallel()
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
		{[]string{"referee", "--dialect", "x", "--", "true"}, ExitUsage, "--dialect"},
		{[]string{"referee", "--scenario", "headers-only", "--", "true"}, ExitUsage, "--dialect"},
		{[]string{"referee", "--expect", "owners", "--", "true"}, ExitUsage, "--expect"},
		{[]string{"referee", "--timeout", "0s", "--", "true"}, ExitUsage, "--timeout"},
		{[]string{"referee", "--", filepath.Join(dir, "no-such-program")}, ExitUsage, "could not be started"},
		{[]string{"referee", "--out-dir", dir, "--", truePath}, ExitThreshold, "FAIL (requests)"},
	} {
		code, out, errOut := runCLI(t.Context(), tc.args...)
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
