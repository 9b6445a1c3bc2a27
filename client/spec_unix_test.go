//go:build unix

package client

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Special files are refused before they are opened: opening a FIFO with
// no writer would block for ever, and /dev/zero would be read until the
// limit.
func TestBodyFileSpecial(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{fifo, "/dev/zero", "/dev/null"} {
		t.Run(filepath.Base(name), func(t *testing.T) {
			t.Parallel()
			if _, err := os.Stat(name); err != nil {
				t.Skip(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := readBodyFile(name)
				done <- err
			}()
			select {
			case err := <-done:
				checkSettingError(t, err, "Body")
			case <-time.After(10 * time.Second): // only a failing test waits
				t.Fatalf("readBodyFile(%s) did not return", name)
			}
		})
	}
}
