//go:build !linux

package dispatch

import (
	"context"
	"time"
)

// sleepPrecise waits until t with a runtime timer where nanosleep(2) is not
// available through package syscall.
func sleepPrecise(ctx context.Context, t time.Time) bool {
	return sleepUntil(ctx, realClock{}, t)
}
