package client

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestAttemptCtxDeadlinesInOrder: attempts started a second apart, each
// with a 5 s timeout, end at their own deadlines under the queue's one
// timer, as context.WithTimeout's would; a child net/http would make
// (context.WithCancelCause) ends with them, with their error; an attempt
// whose body was closed leaves the queue.
func TestAttemptCtxDeadlinesInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newDeadlines()
		parent, cancelParent := context.WithCancel(context.Background())
		defer cancelParent()
		start := time.Now()
		var cs []*attemptCtx
		var kids []context.Context
		for i := range 3 {
			if i > 0 {
				time.Sleep(time.Second)
			}
			c := newAttemptCtx(parent, 5*time.Second, q)
			c.body = io.NopCloser(strings.NewReader(""))
			kid, cancelKid := context.WithCancelCause(c)
			defer cancelKid(nil)
			cs, kids = append(cs, c), append(kids, kid)
			if d, ok := c.Deadline(); !ok || !d.Equal(start.Add(time.Duration(i)*time.Second+5*time.Second)) {
				t.Fatalf("attempt %d: deadline %v, %v", i, d.Sub(start), ok)
			}
		}
		// The second's body is closed at 3 s: canceled, off the queue.
		time.Sleep(time.Second)
		if err := cs[1].Close(); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if !errors.Is(cs[1].Err(), context.Canceled) || !errors.Is(kids[1].Err(), context.Canceled) {
			t.Fatalf("closed: %v, its child %v", cs[1].Err(), kids[1].Err())
		}
		if got := queued(q); len(got) != 2 || got[0] != cs[0] || got[1] != cs[2] {
			t.Fatal("the closed attempt is still queued")
		}
		for i, at := range []time.Duration{5 * time.Second, 7 * time.Second} {
			c, kid := cs[2*i], kids[2*i]
			time.Sleep(at - time.Since(start) - time.Nanosecond)
			synctest.Wait()
			if c.Err() != nil || kid.Err() != nil {
				t.Fatalf("attempt %d done before its deadline: %v", 2*i, c.Err())
			}
			time.Sleep(time.Nanosecond)
			synctest.Wait()
			if c.Err() != context.DeadlineExceeded || kid.Err() != context.DeadlineExceeded || context.Cause(kid) != context.DeadlineExceeded {
				t.Fatalf("attempt %d at its deadline: %v, its child %v (%v)", 2*i, c.Err(), kid.Err(), context.Cause(kid))
			}
			select {
			case <-c.Done():
			default:
				t.Fatalf("attempt %d: Done not closed", 2*i)
			}
		}
		if len(queued(q)) != 0 {
			t.Fatal("queue not empty")
		}
		// The timer serves the next attempt after the queue emptied.
		c := newAttemptCtx(parent, 5*time.Second, q)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if c.Err() != context.DeadlineExceeded {
			t.Fatalf("after the queue emptied: %v", c.Err())
		}
	})
}

// TestAttemptCtxParent: the parent's cancel (Ctrl-C past the grace) ends
// an attempt and its child with context.Canceled; an attempt of a parent
// already done is done at once; a stopped AfterFunc does not run.
func TestAttemptCtxParent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newDeadlines()
		parent, cancelParent := context.WithCancel(context.WithValue(context.Background(), onWireKey{}, "v"))
		c := newAttemptCtx(parent, time.Minute, q)
		if c.Value(onWireKey{}) != "v" {
			t.Fatal("the parent's values are not the attempt's")
		}
		kid, cancelKid := context.WithCancel(c)
		defer cancelKid()
		// Another parent (a request's own, through a retry owner): not
		// the one the queue watches, tied by an AfterFunc of its own.
		other, cancelOther := context.WithCancel(context.Background())
		o := newAttemptCtx(other, time.Minute, q)
		if q.watched != parent || o.unparent == nil || c.unparent != nil {
			t.Fatal("the queue does not watch the first parent alone")
		}
		ran := false
		stop := c.AfterFunc(func() { ran = true })
		if !stop() || stop() {
			t.Fatal("stop: want true once")
		}
		cancelParent()
		synctest.Wait()
		if c.Err() != context.Canceled || kid.Err() != context.Canceled || ran {
			t.Fatalf("after the parent's cancel: %v, child %v, stopped func ran %v", c.Err(), kid.Err(), ran)
		}
		if got := queued(q); len(got) != 1 || got[0] != o || o.Err() != nil {
			t.Fatalf("the other parent's attempt: %v", o.Err())
		}
		cancelOther()
		synctest.Wait()
		if o.Err() != context.Canceled || len(queued(q)) != 0 {
			t.Fatalf("after its own parent's cancel: %v", o.Err())
		}
		late := newAttemptCtx(parent, time.Minute, q)
		if late.Err() != context.Canceled || len(queued(q)) != 0 {
			t.Fatalf("attempt of a canceled parent: %v", late.Err())
		}
		var after bool
		late.AfterFunc(func() { after = true })
		synctest.Wait()
		if !after {
			t.Fatal("AfterFunc on a done context did not run")
		}
	})
}

// TestAttemptCtxAfterFuncs: of the functions AfterFunc registered (the
// first in its own field, the rest behind a pointer), the ones not
// stopped run once at the attempt's end, the stopped ones never, and a
// stop after the end reports false.
func TestAttemptCtxAfterFuncs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newDeadlines()
		c := newAttemptCtx(context.Background(), time.Minute, q)
		c.body = io.NopCloser(strings.NewReader(""))
		var ran [4]int
		var stops [4]func() bool
		for i := range ran {
			stops[i] = c.AfterFunc(func() { ran[i]++ })
		}
		if !stops[2]() || stops[2]() {
			t.Fatal("stop of the third: want true once")
		}
		if !stops[0]() {
			t.Fatal("stop of the first: want true")
		}
		c.Close()
		synctest.Wait()
		if ran != [4]int{0, 1, 0, 1} {
			t.Fatalf("ran %v, want [0 1 0 1]", ran)
		}
		if stops[1]() || stops[3]() {
			t.Fatal("a stop after the end reported true")
		}
	})
}

// queued is q's attempts, first to last, and checks the links both ways.
func queued(q *deadlines) []*attemptCtx {
	q.mu.Lock()
	defer q.mu.Unlock()
	var cs []*attemptCtx
	var prev *attemptCtx
	for c := q.first; c != nil; prev, c = c, c.next {
		if c.prev != prev || !c.queued {
			panic("queue links broken")
		}
		cs = append(cs, c)
	}
	if q.last != prev {
		panic("queue's last is not its end")
	}
	return cs
}
