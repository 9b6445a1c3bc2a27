package dispatch

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestPreciseWaitSetsTheTimerSlack: the last stretch of a wait is slept
// with the thread's timer slack at 1 ns (PR_GET_TIMERSLACK, 30, reads it
// back), not the kernel's default 50 µs.
func TestPreciseWaitSetsTheTimerSlack(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if !preciseWait(context.Background(), time.Now().Add(100*time.Microsecond)) {
		t.Fatal("the wait was cut")
	}
	slack, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, 30, 0, 0)
	if errno != 0 {
		t.Skipf("PR_GET_TIMERSLACK: %v", errno)
	}
	if slack != 1 {
		t.Fatalf("timer slack %d ns after a precise wait, want 1", slack)
	}
}
