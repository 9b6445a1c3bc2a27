package dispatch

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestPreciseWaitSetsTheTimerSlack: a thread with the kernel's default
// timer slack (50 µs) has it set to 1 ns (PR_GET_TIMERSLACK, 30, reads it
// back) by the precise waits it runs, once one of them ends late, as the
// default slack makes most of them; a thread whose slack is already 1 ns
// keeps it.
func TestPreciseWaitSetsTheTimerSlack(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	slack := func() uintptr {
		s, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, 30, 0, 0)
		if errno != 0 {
			t.Skipf("PR_GET_TIMERSLACK: %v", errno)
		}
		return s
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 50_000, 0); errno != 0 {
		t.Skipf("PR_SET_TIMERSLACK: %v", errno)
	}
	for i := 0; i < 200 && slack() != 1; i++ {
		if !preciseWait(context.Background(), time.Now().Add(100*time.Microsecond)) {
			t.Fatal("the wait was cut")
		}
	}
	if s := slack(); s != 1 {
		t.Fatalf("timer slack %d ns after 200 precise waits, want 1", s)
	}
	if !preciseWait(context.Background(), time.Now().Add(100*time.Microsecond)) {
		t.Fatal("the wait was cut")
	}
	if s := slack(); s != 1 {
		t.Fatalf("timer slack %d ns after another wait, want 1", s)
	}
}
