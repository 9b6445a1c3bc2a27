package cmd

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
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
	os.Exit(m.Run())
}

// TestSIGINTKeepsEveryCompletedRow sends a real SIGINT to a running
// schedule: exit 130, and every request the target answered is in the file.
func TestSIGINTKeepsEveryCompletedRow(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			var answered atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("retry-after-ms", "9")
				w.WriteHeader(429)
				answered.Add(1)
			}))
			defer srv.Close()
			out := filepath.Join(t.TempDir(), "results.csv")
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "PTUPROBE_AS_MAIN=1",
				"PTUPROBE_ARGS=schedule --url "+srv.URL+" --rate 200/s --duration 30s -o "+out+" --quiet")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Bounded wait for some traffic, then interrupt.
			deadline := time.Now().Add(20 * time.Second)
			for answered.Load() < 20 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
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
