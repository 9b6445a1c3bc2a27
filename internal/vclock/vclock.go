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
	"container/heap"
	"context"
	"sync"
	"time"
)

// Loop is a virtual clock and the goroutines that run on it.
type Loop struct {
	now      time.Time
	seq      uint64
	queue    events
	baton    chan struct{} // the running goroutine gives it back here
	canceled error         // set once Run's context is done
}

// New returns a Loop whose clock reads start.
func New(start time.Time) *Loop {
	return &Loop{now: start, baton: make(chan struct{})}
}

// Now returns the virtual time.
func (l *Loop) Now() time.Time { return l.now }

// Go queues f to start at at (or at once, if at is not after Now). It may
// be called before Run or from a goroutine of the loop.
func (l *Loop) Go(at time.Time, f func()) {
	if at.Before(l.now) {
		at = l.now
	}
	l.push(&event{at: at, start: f})
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
	l.push(&event{at: l.now.Add(d), wake: wake})
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
	for l.queue.Len() > 0 {
		if l.canceled == nil && ctx.Err() != nil {
			l.canceled = ctx.Err()
		}
		e := heap.Pop(&l.queue).(*event)
		if e.at.After(l.now) && l.canceled == nil {
			l.now = e.at
		}
		switch {
		case e.start != nil && l.canceled != nil:
			continue
		case e.start != nil:
			go func() {
				defer func() { l.baton <- struct{}{} }()
				e.start()
			}()
		default:
			e.wake <- l.canceled
		}
		<-l.baton
	}
	return l.canceled
}

func (l *Loop) push(e *event) {
	l.seq++
	e.seq = l.seq
	heap.Push(&l.queue, e)
}

// event is a goroutine to start or a sleeper to wake.
type event struct {
	at    time.Time
	seq   uint64
	start func()
	wake  chan error
}

type events []*event

func (q events) Len() int { return len(q) }
func (q events) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q events) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *events) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *events) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return e
}

// Wall is Now: the loop's time is the wall time it stands for, so a
// simulator on the loop writes its absolute times (resets, dates) on it.
func (l *Loop) Wall() time.Time { return l.now }
