//go:build unix

package fdlimit

import (
	"syscall"
	"testing"
)

// TestRaiseNeverLowers: asking for less than the soft limit changes
// nothing; asking for more than the hard limit gets the hard limit at most.
func TestRaiseNeverLowers(t *testing.T) {
	var before syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &before); err != nil {
		t.Skip(err)
	}
	if got, ok := Raise(1); !ok || got != uint64(before.Cur) {
		t.Fatalf("Raise(1) = %d, %v; the soft limit was %d", got, ok, before.Cur)
	}
	got, ok := Raise(^uint64(0))
	if !ok || got < uint64(before.Cur) || got > uint64(before.Max) {
		t.Fatalf("Raise(max) = %d, %v; limits were %d/%d", got, ok, before.Cur, before.Max)
	}
}
