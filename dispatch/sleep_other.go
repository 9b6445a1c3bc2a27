//go:build !linux

package dispatch

import (
	"context"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/sleep"
)

// WaitPrecise waits until t with a runtime timer where nanosleep(2) is not
// available through package syscall.
func WaitPrecise(ctx context.Context, t time.Time) bool {
	return sleep.Until(ctx, t)
}
