package cmd

import (
	"os/exec"
	"testing"
	"time"
)

// hangMargin is how long before the test binary's deadline (-timeout) a
// wait gives up on a child process as hung, so that the test fails with
// its own words rather than the binary's panic.
const hangMargin = 20 * time.Second

// hangGuard fires hangMargin before the test binary's deadline; it never
// fires without one. It is no expectation of how long anything takes: a
// test waits on what it waits for (an exit, a channel, a file), however
// slow a loaded machine is, and only a hang reaches it.
func hangGuard(t *testing.T) <-chan time.Time {
	d, ok := t.Deadline()
	if !ok {
		return nil
	}
	return time.After(max(time.Until(d)-hangMargin, 0))
}

// startChild starts cmd and returns a channel that carries cmd.Wait's
// error once it exits.
func startChild(t *testing.T, cmd *exec.Cmd) chan error {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return exited
}

// waitExit waits for the child to exit, and kills it as hung at the
// hang guard.
func waitExit(t *testing.T, cmd *exec.Cmd, exited <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-exited:
		return err
	case <-hangGuard(t):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("%s: still running near the test binary's deadline: a hang", what)
		return nil
	}
}

// waitUntil polls cond every 10 ms until it holds, and reports false if
// the child exited first (its error is put back for waitExit). At the
// hang guard it fails the test.
func waitUntil(t *testing.T, cmd *exec.Cmd, exited chan error, what string, cond func() bool) bool {
	t.Helper()
	guard := hangGuard(t)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case err := <-exited:
			exited <- err
			return false
		case <-guard:
			cmd.Process.Kill()
			<-exited
			t.Fatalf("%s: never came, near the test binary's deadline", what)
		case <-tick.C:
		}
	}
	return true
}
