package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestTraceWritesAnExecutionTrace: the hidden --trace writes an execution
// trace of the command (go tool trace reads it), as bench/stall.sh asks.
// Not parallel: a process has one trace at a time.
func TestTraceWritesAnExecutionTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.trace")
	if code, _, stderr := runCLI(context.Background(), "version", "--trace", path); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("go 1.")) || len(b) < 100 {
		t.Fatalf("%d bytes starting %q: not an execution trace", len(b), b[:min(len(b), 16)])
	}
}
