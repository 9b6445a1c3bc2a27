package testkit

import (
	"context"
	"sync"
)

// CancelAfter is a context whose Err turns to context.Canceled from its
// N-th call on (0-based): run with N = 0, 1, 2 … it cancels at each place
// the code looks at its context, in turn. It is safe for concurrent use
// (the files of a report are written at once, each looking at the
// context).
type CancelAfter struct {
	context.Context
	N     int
	mu    sync.Mutex
	calls int
}

// Err counts the call and is context.Canceled from the N-th on.
func (c *CancelAfter) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if c.calls > c.N {
		return context.Canceled
	}
	return nil
}

// Calls is how many times Err was called.
func (c *CancelAfter) Calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}
