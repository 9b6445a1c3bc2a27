package admission

import (
	"context"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/sleep"
)

// Clock is the time a Transport reads and waits on: Policy.Clock. The
// simulator's sim.Clock has the same methods, so one virtual clock can
// drive a Transport and the simulator it talks to (ptuprobe's policy lab
// does, to compare policies deterministically).
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Sleep waits d, or until ctx is done (then it returns ctx.Err()).
	Sleep(ctx context.Context, d time.Duration) error
}

// runtimeClock is the runtime clock: the default, and under
// testing/synctest a bubble's fake clock.
type runtimeClock struct{}

func (runtimeClock) Now() time.Time { return time.Now() }

func (runtimeClock) Sleep(ctx context.Context, d time.Duration) error { return sleep.For(ctx, d) }

// sleepUntil waits until t on c; false if ctx ended first.
func sleepUntil(ctx context.Context, c Clock, t time.Time) bool {
	return c.Sleep(ctx, t.Sub(c.Now())) == nil
}
