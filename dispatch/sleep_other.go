//go:build !linux

package dispatch

// newPreciseWait returns a runtime-timer wait where a raw nanosleep is not
// available.
func newPreciseWait() (WaitFunc, func()) { return coarseWait, func() {} }
