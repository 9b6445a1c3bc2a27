package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/hostile"
	"github.com/ptuprobe/ptuprobe/results"
)

// maxRSS is the peak resident set every hardening case must stay under.
const maxRSS = 200 << 20

// mainRun is one run of the real ptuprobe (this test binary re-executed,
// see TestMain): its exit code, output, peak RSS, and how long it took to
// exit after the signal, if one was sent.
type mainRun struct {
	code           int
	stdout, stderr string
	rss            int64 // bytes
	afterSignal    time.Duration
}

// runMain runs ptuprobe with args. With sig != 0 it sends sig once ready,
// given the child's stderr so far, reports true and the child handles
// sig (polled every 10 ms, however long that takes), then waits for the
// exit, however long that takes (a hang fails at the hang guard), and
// notes how long it took, for the log: no test expects a time of it.
func runMain(t *testing.T, args []string, sig syscall.Signal, ready func(stderr string) bool) mainRun {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	peakFile := filepath.Join(t.TempDir(), "peak-rss")
	// The key: a named target is refused without one (the simulators
	// these runs aim at take any).
	cmd.Env = append(os.Environ(), "PTUPROBE_AS_MAIN=1", "PTUPROBE_ARGS="+strings.Join(args, " "), "PTUPROBE_PEAK_RSS_FILE="+peakFile, "AZURE_OPENAI_API_KEY=test-key")
	var stdout bytes.Buffer
	var stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	exited := startChild(t, cmd)
	var signaled time.Time
	if sig != 0 {
		if !waitUntil(t, cmd, exited, "ready for "+sig.String(), func() bool { return ready(stderr.String()) && handles(cmd.Process.Pid, sig) }) {
			err := <-exited
			t.Fatalf("exited (%v) before it was ready for %v; stderr %q", err, sig, clipArg(stderr.String()))
		}
		signaled = time.Now()
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
	}
	err := waitExit(t, cmd, exited, strings.Join(args, " "))
	r := mainRun{stdout: stdout.String(), stderr: stderr.String()}
	if !signaled.IsZero() {
		r.afterSignal = time.Since(signaled)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatal(err)
	}
	// The child's own high-water mark, which it writes as it exits. Not
	// its rusage: Linux carries the parent's peak into ru_maxrss across
	// the vfork and exec that start it, so under a large test process
	// (the race detector, many parallel tests) every child would report
	// the parent's peak.
	kb, err := readPeakRSS(peakFile)
	switch {
	case err == nil:
		r.rss = kb * 1024
	case cmd.ProcessState.ExitCode() == -1: // killed by a signal: it wrote nothing, and no peak is read
	case runtime.GOOS != "linux": // no /proc: the rusage, an upper bound
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.rss = ru.Maxrss // bytes on macOS
		}
	default:
		t.Fatalf("the child wrote no peak RSS (%v); stderr %q", err, clipArg(r.stderr))
	}
	return r
}

// writePeakRSS writes this process's peak resident set (VmHWM, in kB) to
// file: TestMain calls it as ptuprobe's main exits.
func writePeakRSS(file string) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			_ = os.WriteFile(file, []byte(strings.TrimSuffix(strings.TrimSpace(v), " kB")), 0o600)
			return
		}
	}
}

func readPeakRSS(file string) (int64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(b), 10, 64)
}

// silentTarget accepts connections and never answers; accepted counts
// them.
func silentTarget(t *testing.T) (url string, accepted *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted = new(atomic.Int64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			t.Cleanup(func() { c.Close() })
		}
	}()
	return "http://" + ln.Addr().String(), accepted
}

// TestHardeningLimits runs the cases of the hardening issue as a user
// would meet them, each in a real process: one line and exit 2 for what is
// refused, exit 130 on the first signal (analyze reading a stream that
// never ends, whose only way out is the signal; a schedule whose requests
// never answer, each canceled at the end of the --grace, not at its
// --timeout), and never more than 200 MB resident.
func TestHardeningLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A results header followed by 64 MB with no newline.
	longLine := filepath.Join(dir, "long-line.csv")
	writeResultsFile(t, longLine, 0)
	f, _ := os.OpenFile(longLine, os.O_APPEND|os.O_WRONLY, 0)
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for range 64 {
		f.Write(chunk)
	}
	f.Close()
	silent, connected := silentTarget(t)
	// Events without end, to be interrupted: analyze is busy reading them
	// when the signal comes, and only the signal can end it.
	events, streamed := endlessEvents(t, dir)
	reportDir := filepath.Join(dir, "interrupted-report")
	huge, err := hostile.Start(hostile.Config{Mode: hostile.HugeHeader})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { huge.Close() })
	hugeOut := filepath.Join(dir, "huge.csv")

	tests := []struct {
		name  string
		args  []string
		sig   syscall.Signal
		code  int
		want  string // in stderr
		ready func(out string) bool
	}{
		{name: "body from /dev/zero", args: []string{"burst", "--api", "raw", "--url", silent, "--body", "@/dev/zero", "--quiet", "-o", filepath.Join(dir, "a.csv")},
			code: ExitUsage, want: "--body"},
		{name: "prompt of 2^40 tokens", args: []string{"burst", "--url", silent, "--prompt-tokens", "1099511627776", "--quiet", "-o", filepath.Join(dir, "b.csv")},
			code: ExitUsage, want: "--prompt-tokens"},
		{name: "results line without end", args: []string{"analyze", longLine, "--out-dir", filepath.Join(dir, "r1")},
			code: ExitUsage, want: "longer than"},
		// 64: unbounded, their headers would be 608 MB, three times the
		// bound (256 cost 0.6 s of a core for the same proof: issue 39).
		{name: "64 answers with a 9.5 MB header", args: []string{"burst", "--url", huge.URL(), "--burst-size", "64", "--quiet", "--allow-failures", "-o", hugeOut},
			code: 0},
		{name: "SIGINT during analyze", args: []string{"analyze", events, "--out-dir", reportDir},
			sig: syscall.SIGINT, code: ExitInterrupted, want: "interrupted", ready: func(string) bool { return streamed.Load() > 1<<20 }},
		{name: "SIGTERM with requests that never answer", args: []string{"schedule", "--url", silent, "--rate", "50/s", "--duration", "30s", "--quiet", "--grace", "100ms", "-o", filepath.Join(dir, "c.csv")},
			sig: syscall.SIGTERM, code: ExitInterrupted, want: "interrupted", ready: func(string) bool { return connected.Load() > 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runMain(t, tt.args, tt.sig, tt.ready)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d naming %q", r.code, clipArg(r.stderr), tt.code, tt.want)
			}
			if tt.code == ExitUsage && strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("stderr is not one line: %q", clipArg(r.stderr))
			}
			if r.rss > maxRSS {
				t.Errorf("peak RSS %d MB, want under %d MB", r.rss>>20, maxRSS>>20)
			}
			t.Logf("exit %d, peak RSS %d MB, %v after the signal", r.code, r.rss>>20, r.afterSignal)
			if tt.args[len(tt.args)-1] == hugeOut {
				recs := readResults(t, hugeOut)
				for _, rec := range recs {
					if rec.Error != results.ClassHeaders {
						t.Fatalf("a row with error %q, status %d; want every row %q", rec.Error, rec.Status, results.ClassHeaders)
					}
				}
				if len(recs) != 64 {
					t.Fatalf("%d rows for 64 requests", len(recs))
				}
			}
			if tt.args[0] == "schedule" {
				// The first signal ended the requests that never answer
				// after the grace, not at their --timeout (a minute).
				recs := readResults(t, tt.args[len(tt.args)-1])
				for _, rec := range recs {
					if rec.Error != results.ClassCanceled {
						t.Fatalf("a row with error %q; want every request canceled at the end of the grace", rec.Error)
					}
				}
				if len(recs) == 0 {
					t.Fatal("no row: the requests that never answered were not recorded")
				}
			}
			if tt.args[0] == "analyze" && tt.code == ExitInterrupted {
				if entries, _ := os.ReadDir(reportDir); len(entries) != 0 {
					t.Errorf("an interrupted analyze left %d files in its report directory", len(entries))
				}
			}
		})
	}
}

// TestKillNineLeavesWholeRows: rows are written in whole-line batches
// (group commit), so a run killed with SIGKILL mid-stream leaves a file of
// whole rows: every one reads back, none is cut. What the kill can lose is
// only rows whose write had not returned, which the run had not reported.
func TestKillNineLeavesWholeRows(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After-Ms", "17")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "results.csv")
	for range 3 {
		before := fileSize(out)
		r := runMain(t, []string{"schedule", "--url", srv.URL, "--rate", "3000/s", "--duration", "30s", "--max-requests", "100000", "--quiet", "-o", out},
			syscall.SIGKILL, func(string) bool { return fileSize(out) > before+1000 }) // killed once rows are being written
		if r.code != -1 {
			t.Fatalf("exit %d after SIGKILL", r.code)
		}
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := results.NewReader(f, out)
		if err != nil {
			t.Fatal(err)
		}
		rows := 0
		for {
			var rec results.Record
			err := rd.Read(&rec)
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("row %d: %v", rows+1, err)
				}
				break
			}
			if rec.Status != http.StatusTooManyRequests || rec.WaitMS != 17 {
				t.Fatalf("a row read back wrong: %+v", rec)
			}
			rows++
		}
		f.Close()
		if rd.Truncated() != 0 || rows == 0 {
			t.Fatalf("%d rows, a cut last line at %d", rows, rd.Truncated())
		}
		t.Logf("killed after %d whole rows", rows)
	}
}

// lockedBuffer is a bytes.Buffer a child process writes while the test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// fileSize is the size of the file at path, 0 when there is none.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// handles reports whether process pid has a handler installed for sig (on
// Linux, from /proc/PID/status's SigCgt): a signal sent before the child
// installed its handler would end it the default way, which tests nothing.
// Elsewhere, and for a signal no process can catch, true.
func handles(pid int, sig syscall.Signal) bool {
	if runtime.GOOS != "linux" || sig == syscall.SIGKILL || sig == syscall.SIGSTOP {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return true
	}
	for _, line := range strings.Split(string(b), "\n") {
		if mask, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64)
			return err == nil && m&(1<<(uint(sig)-1)) != 0
		}
	}
	return true
}

// endlessEvents is a FIFO in dir into which a goroutine writes events
// (source_group,retry_after_ms) for as long as a reader reads it, and
// the count of bytes written so far: once it passes the pipe's buffer,
// the reader is reading. The writer stops when the reader goes (EPIPE).
func endlessEvents(t *testing.T, dir string) (string, *atomic.Int64) {
	t.Helper()
	path := filepath.Join(dir, "events.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	var written atomic.Int64
	go func() {
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		buf := []byte("source_group,retry_after_ms\n")
		for i := 0; ; i++ {
			buf = append(buf, "g,"...)
			buf = strconv.AppendInt(buf, int64(i%20000), 10)
			buf = append(buf, '\n')
			if len(buf) < 64<<10 {
				continue
			}
			n, err := w.Write(buf)
			written.Add(int64(n))
			if err != nil {
				return
			}
			buf = buf[:0]
		}
	}()
	// A writer still waiting for a reader (the run failed before it
	// opened the FIFO) is let go.
	t.Cleanup(func() {
		if r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			r.Close()
		}
	})
	return path, &written
}
