package dispatch

import (
	"context"
	"syscall"
	"time"
	"unsafe"

	"github.com/ptuprobe/ptuprobe/internal/sleep"
)

// rawSlice is the last stretch of a wait, slept with nanosleep(2) while the
// goroutine keeps its P: a runtime timer wakes up to about a millisecond
// late, so a wait parks on a timer until rawSlice before its time and
// sleeps the rest precisely.
const rawSlice = 2 * time.Millisecond

// prSetTimerSlack is prctl(2)'s PR_SET_TIMERSLACK.
const prSetTimerSlack = 29

// newPreciseWait returns the engine's pacing wait, within a few
// microseconds rather than a runtime timer's millisecond. Go
// parks its timers in epoll_wait, whose timeout is in whole milliseconds:
// a 200 µs wait becomes a 1 ms one, so at 1,000 arrivals/s every send
// would be up to a millisecond late. Most of a long wait parks on a runtime
// timer (no thread, no P); the last rawSlice is a raw nanosleep that keeps
// the P, so waking costs no thread hand-off: an ordinary syscall hands the
// P to another thread and takes it back, and at thousands of arrivals a
// second that was much of the pacing loop's CPU. (A timerfd read through
// the network poller was tried too: it doubled the thread switches.)
// Before the nanosleep the thread's timer slack is set to 1 ns: the
// kernel lets a sleep of a thread with the default slack end up to 50 µs
// late, which was most of the median lateness (0.069 against 0.025 ms at
// 5,000/s, bench/README.md). A goroutine does not keep its thread, and
// reading which thread it is on costs a system call too, so the slack is
// set after a raw sleep that ended more than slackLate late, as one on a
// thread with the default slack does (at 300 µs, 90% of them 52–80 µs
// late, against 8–19 µs with a slack of 1 ns): one prctl(2) a thread,
// and one after a wake-up the machine's load made late, where setting it
// on every wait was one a request (bench/README.md, round 11). A cancel
// seen before the last stretch wins.
func newPreciseWait() (WaitFunc, func()) { return preciseWait, func() {} }

func preciseWait(ctx context.Context, t time.Time) bool {
	for {
		if ctx.Err() != nil {
			return false
		}
		d := time.Until(t)
		if d <= 0 {
			return true
		}
		if d > rawSlice {
			if sleep.For(ctx, d-rawSlice) != nil {
				return false
			}
			continue
		}
		ts := syscall.NsecToTimespec(int64(d))
		// EINTR: loop and recompute.
		syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
		if time.Since(t) > slackLate {
			syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)
		}
	}
}

// slackLate is how late a raw sleep ends before the thread's timer slack
// is set: past what a slack of 1 ns gives on an idle machine (8–19 µs at
// the 10th to 90th percentile), short of what the default 50 µs gives
// (52–80 µs).
const slackLate = 30 * time.Microsecond
