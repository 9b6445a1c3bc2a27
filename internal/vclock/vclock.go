// Package vclock runs goroutines on a virtual clock, one at a time, in an
// order fixed by their wake times alone, so a simulation of many clients
// against one server model gives the same result on any machine under any
// load. It is what testing/synctest does for tests, for a production run:
// internal/vrun (the only package that imports it) drives the admission
// library and the simulator with it, for the policy lab and fit.
//
// A Loop holds a queue of events (a goroutine to start, a sleeper to wake),
// ordered by time and then by the order they were queued. Run pops the
// earliest, moves the clock to it, hands it the baton and waits until that
// goroutine gives the baton back: by sleeping (Sleep queues its wake) or by
// returning. Exactly one goroutine of the loop runs at any moment, so the
// model's random draws and every shared state are touched in one order.
//
// The contract: a goroutine started by Go may block only in Sleep (and on
// locks that no other goroutine of the loop holds across a Sleep). A
// channel receive, a network read or the runtime clock would stall the
// loop; nothing of the loop reads the runtime clock.
package vclock

import (
	"context"
	"math"
	"sync"
	"time"
)

// Loop is a virtual clock and the goroutines that run on it.
type Loop struct {
	now time.Time
	// origin is the clock's first reading and at is now's offset from it:
	// events are ordered on offsets, integers, which compare in a fraction
	// of time.Time.Compare's cost (the loop orders every event of a run).
	origin   time.Time
	at       time.Duration
	seq      uint64
	queue    events
	baton    chan struct{} // the running goroutine gives it back here
	canceled error         // set once Run's context is done
	// idle are workers waiting for a function to run: a started function
	// runs on one of them when there is one, so a lab run's hundreds of
	// thousands of requests do not each start a goroutine and grow its
	// stack anew (a fifth of the lab's CPU before they were reused).
	// Touched only by the goroutine holding the baton.
	idle []chan func()
}

// New returns a Loop whose clock reads start.
func New(start time.Time) *Loop {
	return &Loop{now: start, origin: start, baton: make(chan struct{})}
}

// Now returns the virtual time.
func (l *Loop) Now() time.Time { return l.now }

// Go queues f to start at at (or at once, if at is not after Now). It may
// be called before Run or from a goroutine of the loop.
func (l *Loop) Go(at time.Time, f func()) {
	l.push(event{at: max(at.Sub(l.origin), l.at), start: f})
}

// Sleep waits d of virtual time. It must be called from a goroutine of the
// loop. ctx is not watched (nothing may wake the loop from outside): the
// loop's own cancellation, Run's context, ends every sleep early with its
// error, and a Sleep after that returns at once with it.
func (l *Loop) Sleep(_ context.Context, d time.Duration) error {
	if l.canceled != nil {
		return l.canceled
	}
	if d <= 0 {
		return nil
	}
	wake := wakes.Get().(chan error)
	l.push(event{at: l.after(d), wake: wake})
	l.baton <- struct{}{}
	err := <-wake
	wakes.Put(wake) // drained: the loop sends on it once
	return err
}

// wakes are sleepers' wake channels, reused: a lab run sleeps hundreds of
// thousands of times.
var wakes = sync.Pool{New: func() any { return make(chan error, 1) }}

// Run runs the queued events until none is left, then returns nil. When
// ctx ends first, every sleeper is woken with ctx's error, no goroutine
// not yet started is started, and Run returns ctx's error once the
// started ones have returned.
func (l *Loop) Run(ctx context.Context) error {
	defer l.stopWorkers()
	for len(l.queue) > 0 {
		if l.canceled == nil && ctx.Err() != nil {
			l.canceled = ctx.Err()
		}
		e := l.queue.pop()
		if e.at > l.at && l.canceled == nil {
			l.now, l.at = l.origin.Add(e.at), e.at
		}
		switch {
		case e.start != nil && l.canceled != nil:
			continue
		case e.start != nil:
			l.start(e.start)
		default:
			e.wake <- l.canceled
		}
		<-l.baton
	}
	return l.canceled
}

// start runs f on an idle worker, or on a new one when none is idle.
func (l *Loop) start(f func()) {
	if n := len(l.idle); n > 0 {
		w := l.idle[n-1]
		l.idle[n-1] = nil
		l.idle = l.idle[:n-1]
		w <- f
		return
	}
	w := make(chan func(), 1)
	w <- f
	go l.work(w)
}

// work runs the functions sent on w, one at a time, each holding the
// baton: once f returns the worker queues itself as idle, then gives the
// baton back (so the loop, which reads idle only while it holds the
// baton, sees it). It ends when w is closed.
func (l *Loop) work(w chan func()) {
	for f := range w {
		l.call(f, w)
	}
}

// call runs f, then gives the baton back; a panic in f gives it back too
// (the panic goes on and ends the program, as it would have on a
// goroutine of its own).
func (l *Loop) call(f func(), w chan func()) {
	done := false
	defer func() {
		if done {
			l.idle = append(l.idle, w)
		}
		l.baton <- struct{}{}
	}()
	f()
	done = true
}

// stopWorkers ends the idle workers: when Run returns, every worker is
// idle (a busy one would hold the baton or have a wake queued).
func (l *Loop) stopWorkers() {
	for i, w := range l.idle {
		close(w)
		l.idle[i] = nil
	}
	l.idle = l.idle[:0]
}

func (l *Loop) push(e event) {
	l.seq++
	e.seq = l.seq
	l.queue.push(e)
}

// after is the offset d after now, at most the largest offset (a sleep
// past some 292 years wakes there).
func (l *Loop) after(d time.Duration) time.Duration {
	if d > math.MaxInt64-l.at {
		return math.MaxInt64
	}
	return l.at + d
}

// event is a goroutine to start or a sleeper to wake, at an offset from
// the clock's start.
type event struct {
	at    time.Duration
	seq   uint64
	start func()
	wake  chan error
}

// before orders events by time, then by the order they were queued.
func (e *event) before(o *event) bool {
	if e.at != o.at {
		return e.at < o.at
	}
	return e.seq < o.seq
}

// events is a binary min-heap of events by value: no allocation per event
// and no interface call per comparison (the loop pops one event per start
// and per wake).
type events []event

func (q *events) push(e event) {
	*q = append(*q, e)
	h := *q
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].before(&h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *events) pop() event {
	h := *q
	n := len(h) - 1
	e := h[0]
	h[0] = h[n]
	h[n] = event{}
	h = h[:n]
	*q = h
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h[r].before(&h[c]) {
			c = r
		}
		if !h[c].before(&h[i]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	return e
}

// Wall is Now: the loop's time is the wall time it stands for, so a
// simulator on the loop writes its absolute times (resets, dates) on it.
func (l *Loop) Wall() time.Time { return l.now }
