package sim

import (
	"context"
	"sync"
	"time"
)

// ManualClock is a Clock that moves only when told to. Sleepers wake when
// Advance or Set carries the time past their deadline, so a test decides
// exactly when each simulated response completes.
type ManualClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []manualWaiter
	parked  chan struct{} // closed when a sleeper parks; nil until awaited
}

type manualWaiter struct {
	until time.Time
	ch    chan struct{}
}

// NewManualClock returns a ManualClock that reads start until moved.
func NewManualClock(start time.Time) *ManualClock {
	return &ManualClock{now: start}
}

// Now returns the clock's current time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (a negative d is ignored) and wakes
// the sleepers whose deadline has passed.
func (c *ManualClock) Advance(d time.Duration) {
	if d < 0 {
		return
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.wakeLocked()
	c.mu.Unlock()
}

// Set moves the clock to t. Moving it backwards is allowed (the model
// treats it as no time passing) so scripts can be written freely.
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.wakeLocked()
	c.mu.Unlock()
}

// Sleepers reports how many goroutines are waiting in Sleep.
func (c *ManualClock) Sleepers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

// AwaitSleepers blocks until at least n goroutines are waiting in Sleep,
// or ctx is done (then it returns ctx.Err()). Tests use it to know every
// handler has reached its latency wait before they move the clock: it
// wakes on each new sleeper, so it neither polls nor reads the wall clock.
func (c *ManualClock) AwaitSleepers(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		if len(c.waiters) >= n {
			c.mu.Unlock()
			return nil
		}
		if c.parked == nil {
			c.parked = make(chan struct{})
		}
		parked := c.parked
		c.mu.Unlock()
		select {
		case <-parked:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (c *ManualClock) wakeLocked() {
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.until.After(c.now) {
			close(w.ch)
			continue
		}
		kept = append(kept, w)
	}
	clear(c.waiters[len(kept):])
	c.waiters = kept
}

// Sleep blocks until the clock has been moved d past the current time or
// ctx is done.
func (c *ManualClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	c.mu.Lock()
	w := manualWaiter{until: c.now.Add(d), ch: make(chan struct{})}
	c.waiters = append(c.waiters, w)
	if c.parked != nil {
		close(c.parked)
		c.parked = nil
	}
	c.mu.Unlock()
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		for i, x := range c.waiters {
			if x.ch == w.ch {
				c.waiters = append(c.waiters[:i], c.waiters[i+1:]...)
				break
			}
		}
		c.mu.Unlock()
		return ctx.Err()
	}
}
