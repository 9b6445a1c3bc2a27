package dispatch

import (
	"context"
	"syscall"
	"time"
)

// preciseSlice bounds one nanosleep, so a canceled context is noticed
// within this long.
const preciseSlice = 20 * time.Millisecond

// WaitPrecise waits until t with nanosleep(2) rather than a runtime timer.
// The Go scheduler parks timers in epoll_wait, whose timeout is in whole
// milliseconds: a sub-millisecond wait becomes a 1 ms one, so at 1,000
// arrivals/s every send would be up to a millisecond late. nanosleep wakes
// within the kernel's timer slack (about 50 µs), and the runtime hands this
// goroutine's P to other work while it sleeps. A cancel that races the
// wake-up wins.
func WaitPrecise(ctx context.Context, t time.Time) bool {
	for {
		if ctx.Err() != nil {
			return false
		}
		d := time.Until(t)
		if d <= 0 {
			return true
		}
		d = min(d, preciseSlice)
		ts := syscall.NsecToTimespec(int64(d))
		_ = syscall.Nanosleep(&ts, nil) // EINTR: loop and recompute
	}
}
