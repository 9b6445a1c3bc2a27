package sim

import (
	"context"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/sleep"
)

// Clock is the simulator's notion of time. Every decision of the model
// (drain, windows, latency) reads it, so tests inject a clock of their
// own (the package's tests a manual one) and script arrivals to the
// nanosecond instead of sleeping.
type Clock interface {
	// Now returns the current model time.
	Now() time.Time
	// Sleep waits d of model time, or until ctx is done (then it returns
	// ctx.Err()).
	Sleep(ctx context.Context, d time.Duration) error
}

// scaledClock is the runtime clock run scale times faster: model time
// advances scale seconds per wall second, so a run can play a minute of
// traffic in six seconds at TimeScale 10. It waits through sleep.For, so
// under testing/synctest it runs on the bubble's fake clock.
type scaledClock struct {
	start time.Time // wall time at creation; monotonic reading included
	scale float64
}

func newScaledClock(scale float64) *scaledClock {
	if scale <= 0 {
		scale = 1
	}
	return &scaledClock{start: time.Now(), scale: scale}
}

func (c *scaledClock) Now() time.Time {
	if c.scale == 1 {
		return time.Now()
	}
	elapsed := time.Since(c.start)
	return c.start.Add(time.Duration(float64(elapsed) * c.scale))
}

// Sleep waits d of model time, d/scale on the runtime clock.
func (c *scaledClock) Sleep(ctx context.Context, d time.Duration) error {
	return sleep.For(ctx, time.Duration(float64(d)/c.scale))
}
