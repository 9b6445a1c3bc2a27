//go:build !linux

package dispatch

import (
	"context"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/sleep"
)

// newPreciseWait returns a runtime-timer wait where a raw nanosleep is not
// available.
func newPreciseWait() (WaitFunc, func()) { return coarseWait, func() {} }

// coarseWait waits on a runtime timer: within about a millisecond.
func coarseWait(ctx context.Context, t time.Time) bool { return sleep.Until(ctx, t) }
