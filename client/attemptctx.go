package client

import (
	"context"
	"io"
	"reflect"
	"sync"
	"time"
)

// attemptCtx is one attempt's context: its parent's values, done when the
// parent is, when the attempt's timeout passes or when its response body
// is closed (it is that body, too). It does what context.WithTimeout and
// the body's cancel did, in one allocation and without a timer of its
// own: every attempt of a Target has the same timeout, so their deadlines
// come in the order the attempts start, and one timer (deadlines) serves
// them all. net/http's own context for the attempt, a child of this one,
// is tied to it through AfterFunc (context.WithCancelCause takes a
// parent's AfterFunc where it finds one) rather than a map of children.
// An open stream held some 1.1 KB of contexts and timers before
// (bench/README.md, memory per open stream).
type attemptCtx struct {
	parent context.Context
	// deadline is the attempt's, as a time after queue.base: 8 bytes
	// where a time.Time is 24, so that the context is an allocator size
	// class smaller (128 bytes, was 160), held for an open stream's life.
	deadline time.Duration
	queue    *deadlines
	prev     *attemptCtx // the queue's, under its lock
	next     *attemptCtx
	queued   bool
	body     io.ReadCloser
	unparent func() bool // ends the tie to the parent's cancel

	mu   sync.Mutex
	done chan struct{}
	err  error
	f    func()     // the first AfterFunc's, until it runs or is stopped
	more *[]*func() // the others', rarely any
}

// newAttemptCtx is an attempt of parent, its deadline d from now, queued on q.
func newAttemptCtx(parent context.Context, d time.Duration, q *deadlines) *attemptCtx {
	c := &attemptCtx{parent: parent, queue: q, done: make(chan struct{})}
	if err := parent.Err(); err != nil {
		c.err, c.deadline = err, time.Since(q.base)+d
		close(c.done)
		return c
	}
	watched := parent.Done() != nil && q.watch(parent)
	if parent.Done() != nil && !watched {
		c.unparent = context.AfterFunc(parent, c.parentDone)
	}
	q.push(c, d, watched)
	return c
}

func (c *attemptCtx) parentDone() { c.cancel(c.parent.Err()) }

func (c *attemptCtx) Deadline() (time.Time, bool) {
	deadline := c.queue.base.Add(c.deadline)
	if d, ok := c.parent.Deadline(); ok && d.Before(deadline) {
		return d, true
	}
	return deadline, true
}

func (c *attemptCtx) Done() <-chan struct{} { return c.done }

func (c *attemptCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *attemptCtx) Value(key any) any { return c.parent.Value(key) }

// AfterFunc is context.AfterFunc's for a child context of this one: f
// runs once in its own goroutine after the context is done, unless stop
// comes first.
func (c *attemptCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	if c.f == nil && (c.more == nil || len(*c.more) == 0) {
		c.f = f
		c.mu.Unlock()
		return c.stopFirst
	}
	p := &f
	if c.more == nil {
		c.more = new([]*func())
	}
	*c.more = append(*c.more, p)
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.more == nil {
			return false
		}
		for i, q := range *c.more {
			if q == p {
				*c.more = append((*c.more)[:i], (*c.more)[i+1:]...)
				return true
			}
		}
		return false
	}
}

func (c *attemptCtx) stopFirst() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return false
	}
	c.f = nil
	return true
}

// cancel ends the attempt with err (the first cancel's stays), runs what
// AfterFunc registered and leaves the queue and the parent.
func (c *attemptCtx) cancel(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	close(c.done)
	f, more := c.f, c.more
	c.f, c.more = nil, nil
	c.mu.Unlock()
	if f != nil {
		go f()
	}
	if more != nil {
		for _, p := range *more {
			go (*p)()
		}
	}
	c.queue.remove(c)
	if c.unparent != nil {
		c.unparent()
	}
}

// Read and Close make the context the attempt's response body: closing it
// ends the attempt.
func (c *attemptCtx) Read(p []byte) (int, error) { return c.body.Read(p) }

func (c *attemptCtx) Close() error {
	err := c.body.Close()
	c.cancel(context.Canceled)
	return err
}

// deadlines is the queue of a Target's attempts in the order of their
// deadlines (the order they started: one timeout for all), under one
// timer set for the first.
type deadlines struct {
	mu          sync.Mutex
	first, last *attemptCtx
	timer       *time.Timer
	now         func() time.Time // time.Now; a test's clock
	base        time.Time        // now() when the queue was made: the attempts' deadlines are times after it
	// The parent context watched once for every attempt of it (the
	// run's, in a run without a retry owner), rather than through an
	// AfterFunc of each attempt's own.
	watched context.Context
}

// watch reports whether q watches parent for its attempts: the first
// parent q is asked about, if it is a pointer (comparable: an attempt's
// parent is compared with it), from then on.
func (q *deadlines) watch(parent context.Context) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.watched == nil {
		if reflect.TypeOf(parent).Kind() != reflect.Pointer {
			return false
		}
		q.watched = parent
		context.AfterFunc(parent, q.watchedDone)
	}
	return q.watched == parent
}

// watchedDone ends the queued attempts of the watched parent, now done.
func (q *deadlines) watchedDone() {
	q.mu.Lock()
	var due *attemptCtx
	for c := q.first; c != nil; {
		next := c.next
		if c.parent == q.watched {
			q.unlink(c)
			c.next, due = due, c
		}
		c = next
	}
	err := q.watched.Err()
	q.mu.Unlock()
	for due != nil {
		c := due
		due, c.next = c.next, nil
		c.cancel(err)
	}
}

func newDeadlines() *deadlines { return &deadlines{now: time.Now, base: time.Now()} }

// push queues c, its deadline d from now; watched: its parent is the one
// q watches, which may have ended since c saw it.
func (q *deadlines) push(c *attemptCtx, d time.Duration, watched bool) {
	q.mu.Lock()
	if watched {
		if err := c.parent.Err(); err != nil {
			c.deadline = q.now().Sub(q.base) + d
			q.mu.Unlock()
			c.cancel(err)
			return
		}
	}
	c.deadline = q.now().Sub(q.base) + d
	c.queued = true
	c.prev = q.last
	if q.last != nil {
		q.last.next = c
	} else {
		q.first = c
		if q.timer == nil {
			q.timer = time.AfterFunc(d, q.expire)
		} else {
			q.timer.Reset(d)
		}
	}
	q.last = c
	q.mu.Unlock()
}

// remove takes c off the queue, if it is on it. The timer stays set for
// the deadline it had: at worst it fires for nothing and is set again.
func (q *deadlines) remove(c *attemptCtx) {
	q.mu.Lock()
	if c.queued {
		q.unlink(c)
	}
	q.mu.Unlock()
}

func (q *deadlines) unlink(c *attemptCtx) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		q.first = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		q.last = c.prev
	}
	c.prev, c.next, c.queued = nil, nil, false
}

// expire cancels the attempts whose deadline has passed and sets the
// timer for the next one's.
func (q *deadlines) expire() {
	q.mu.Lock()
	now := q.now().Sub(q.base)
	var due *attemptCtx
	for c := q.first; c != nil && c.deadline <= now; c = q.first {
		q.unlink(c)
		c.next, due = due, c // a list of their own, by next
	}
	if q.first != nil {
		q.timer.Reset(q.first.deadline - now)
	}
	q.mu.Unlock()
	for due != nil {
		c := due
		due, c.next = c.next, nil
		c.cancel(context.DeadlineExceeded)
	}
}
