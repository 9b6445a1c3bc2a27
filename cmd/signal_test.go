package cmd

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/policylab"
	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/report"
)

// TestMain lets a test re-run this binary as the real ptuprobe (with real
// signal handling) when PTUPROBE_AS_MAIN is set.
func TestMain(m *testing.M) {
	if os.Getenv("PTUPROBE_AS_MAIN") == "1" {
		os.Args = append([]string{"ptuprobe"}, strings.Fields(os.Getenv("PTUPROBE_ARGS"))...)
		code := Execute()
		if f := os.Getenv("PTUPROBE_PEAK_RSS_FILE"); f != "" {
			writePeakRSS(f)
		}
		os.Exit(code)
	}
	// A key for the named targets (loopback simulators, which take any)
	// of tests that run in parallel, so cannot t.Setenv: they name it with
	// --api-key-env testKeyEnv.
	os.Setenv(testKeyEnv, "test-key")
	// The same for the tests that watch a key for leaks.
	os.Setenv(canaryKeyEnv, canaryKey)
	testkit.WaitBound(4) // they wait on subprocesses, simulators and timers more than they compute
	// Their reports' PNG charts at 24 dpi, a sixteenth of the pixels:
	// rasterizing and compressing them at 96 was half this package's CPU
	// (report's own tests draw them at full size).
	report.SetPNGResolutionForTests(24)
	// The labs on the wall clock run phases of labPhase, not the second
	// a user's are at least: their tests check what the lab writes.
	policylab.SetMinDurationForTests(labPhase)
	// Their whole reports and simulated runs allocate much and keep
	// little: the collector was a tenth of this package's CPU (issue 39).
	testkit.LessGC()
	os.Exit(m.Run())
}

// labPhase is the shortest lab phase this package's tests run (TestMain).
const labPhase = 250 * time.Millisecond

// testKeyEnv holds a key in every test of this package (TestMain).
const testKeyEnv = "PTUPROBE_TEST_KEY"

// canaryKeyEnv holds canaryKey in every test of this package (TestMain):
// the tests that look for it in what a run wrote name it with
// --api-key-env, and so run in parallel.
const canaryKeyEnv = "PTUPROBE_TEST_CANARY_KEY"

// TestSIGINTKeepsEveryCompletedRow sends a real SIGINT to a running
// schedule: exit 130, and every request the target answered is in the file.
func TestSIGINTKeepsEveryCompletedRow(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			var answered atomic.Int64
			twenty := make(chan struct{}) // closed at the 20th answer
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("retry-after-ms", "9")
				w.WriteHeader(429)
				if answered.Add(1) == 20 {
					close(twenty)
				}
			}))
			defer srv.Close()
			out := filepath.Join(t.TempDir(), "results.csv")
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			// A grace of a minute: every request in flight at the signal
			// is answered (at once) within it, however loaded the machine.
			cmd.Env = append(os.Environ(), "PTUPROBE_AS_MAIN=1",
				"PTUPROBE_ARGS=schedule --url "+srv.URL+" --rate 200/s --duration 30s --grace 1m -o "+out+" --quiet")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			exited := startChild(t, cmd)
			// Some traffic, then interrupt.
			select {
			case <-twenty:
			case err := <-exited:
				t.Fatalf("exited (%v) before 20 answers; stderr %q", err, stderr.String())
			case <-hangGuard(t):
				cmd.Process.Kill()
				t.Fatal("no 20 answers near the test binary's deadline")
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := waitExit(t, cmd, exited, sig.String()+" to a schedule")
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != ExitInterrupted {
				t.Fatalf("exit %v, want 130; stderr %q", err, stderr.String())
			}
			recs := readResults(t, out)
			if got, want := int64(len(recs)), answered.Load(); got != want || got < 20 {
				t.Fatalf("%d rows for %d answered requests", got, want)
			}
			if !strings.Contains(stderr.String(), "interrupted:") || !strings.Contains(stdout.String(), "requests:") {
				t.Fatalf("stdout %q stderr %q", stdout.String(), stderr.String())
			}
		})
	}
}

// TestSignalEndsAnalyzeOnAPipe: analyze blocked on a pipe or a FIFO (in
// the open, which waits for a writer, or in a read) still ends on the first
// SIGINT or SIGTERM: exit 130, while every writer stays open. The FIFO the test opens for writing is how it knows analyze is past
// its signal set-up (the open returns once analyze has opened it).
func TestSignalEndsAnalyzeOnAPipe(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the runtime polls pipes and FIFOs on Linux; elsewhere (macOS: kqueue and FIFOs) a read cannot be expired")
	}
	cases := []struct {
		name string
		sig  syscall.Signal
		// args are analyze's inputs after the ready FIFO's place: "ready"
		// is the FIFO the test opens, "stdin" /dev/stdin, "unopened" a FIFO
		// no one writes.
		args  []string
		write string // what the test writes into ready and stdin, then holds
	}{
		{name: "opening a FIFO", sig: syscall.SIGTERM, args: []string{"ready", "unopened"}},
		{name: "reading a FIFO", sig: syscall.SIGINT, args: []string{"ready"}, write: "retry_after_ms\n5\n"},
		{name: "reading a pipe", sig: syscall.SIGINT, args: []string{"stdin", "ready"}, write: "retry_after_ms\n5\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ready, unopened := filepath.Join(dir, "ready"), filepath.Join(dir, "unopened")
			for _, p := range []string{ready, unopened} {
				if err := syscall.Mkfifo(p, 0o600); err != nil {
					t.Skipf("no FIFOs here: %v", err)
				}
			}
			args := []string{"analyze", "--out-dir", filepath.Join(dir, "report")}
			for _, a := range c.args {
				args = append(args, map[string]string{"ready": ready, "stdin": "/dev/stdin", "unopened": unopened}[a])
			}
			stdinR, stdinW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdinW.Close()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "PTUPROBE_AS_MAIN=1", "PTUPROBE_ARGS="+strings.Join(args, " "))
			var stdout, stderr bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, &stdout, &stderr
			exited := startChild(t, cmd)
			stdinR.Close()
			opened := make(chan *os.File, 1)
			go func() {
				if w, err := os.OpenFile(ready, os.O_WRONLY, 0); err == nil {
					opened <- w
				}
			}()
			var w *os.File
			select {
			case w = <-opened:
				defer w.Close()
			case err := <-exited:
				t.Fatalf("analyze exited (%v) before opening its input; stderr %q", err, stderr.String())
			case <-hangGuard(t):
				cmd.Process.Kill()
				t.Fatal("analyze never opened its input")
			}
			if c.write != "" {
				if _, err := io.WriteString(w, c.write); err != nil {
					t.Fatal(err)
				}
				if _, err := io.WriteString(stdinW, c.write); err != nil {
					t.Fatal(err)
				}
			}
			signaled := time.Now()
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			// Its writers stay open: only the signal ends it (one ignored
			// would hang, and fail at the hang guard).
			err = waitExit(t, cmd, exited, "analyze after "+c.sig.String()+", its writers open")
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != ExitInterrupted {
				t.Fatalf("exit %v, want 130; stderr %q", err, stderr.String())
			}
			if got := strings.Count(stderr.String(), "\n"); got != 1 || !strings.Contains(stderr.String(), "interrupted") {
				t.Fatalf("stderr %q, want one line saying it was interrupted", stderr.String())
			}
			if _, err := os.Stat(filepath.Join(dir, "report")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a report directory after an interrupt: %v", err)
			}
			t.Logf("%v ended analyze in %s", c.sig, time.Since(signaled).Round(time.Millisecond))
		})
	}
}
