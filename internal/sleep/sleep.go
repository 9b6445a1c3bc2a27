// Package sleep is ptuprobe's one cancellable wait on the runtime clock.
// Under testing/synctest the runtime clock is the bubble's fake clock, so
// code that waits through this package needs no clock of its own to be
// tested without sleeping.
package sleep

import (
	"context"
	"time"
)

// For waits d, or until ctx is done; it returns ctx's error in that case.
// A cancel that races the timer wins, so nothing starts after a cancel.
func For(ctx context.Context, d time.Duration) error {
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return ctx.Err()
}

// Until waits until t; false if ctx ended first.
func Until(ctx context.Context, t time.Time) bool {
	return For(ctx, time.Until(t)) == nil
}
