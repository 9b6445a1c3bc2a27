package testkit

import (
	"encoding/binary"
	"io"
	"os"
	"sync"
	"testing"
	"time"
)

// Stalls watches whether this process could run when it wanted to: a
// goroutine that sleeps stallTick at a time and writes the time of each
// wake into a pipe, and one that reads them. Each wake that came later
// than stallSlack past its sleep, and each read that came as late after
// its write, is a stall over that span: a loaded machine (other processes
// on the cores, a test binary's own busy goroutines) shows as stalls of
// timers, and a scheduler too busy to poll the network (a reader of a
// socket woken late while timers ran on time) as stalls of the pipe. A
// test that judges a timing asks Worst or Total for the span of what it
// judges, and judges only what the machine could have delivered, or
// bounds it by the stall it saw. It costs about a thousand wakes a
// second until the test ends.
type Stalls struct {
	mu    sync.Mutex
	spans []stall
	stop  chan struct{}
	done  chan struct{}
}

type stall struct{ from, to time.Time }

const (
	stallTick  = time.Millisecond
	stallSlack = 500 * time.Microsecond
)

// WatchStalls starts watching until t ends.
func WatchStalls(t testing.TB) *Stalls {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &Stalls{stop: make(chan struct{}), done: make(chan struct{})}
	read := make(chan struct{})
	go s.read(r, read)
	go s.tick(w, read)
	t.Cleanup(func() { close(s.stop); <-s.done })
	return s
}

// tick sleeps and writes each wake's time into w, until stop; then it
// closes w and waits for the reader.
func (s *Stalls) tick(w *os.File, read <-chan struct{}) {
	defer close(s.done)
	defer func() { w.Close(); <-read }()
	tick := time.NewTimer(stallTick)
	defer tick.Stop()
	due := time.Now().Add(stallTick)
	var b [8]byte
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
		now := time.Now()
		s.note(due, now)
		binary.LittleEndian.PutUint64(b[:], uint64(now.UnixNano()))
		if _, err := w.Write(b[:]); err != nil {
			return
		}
		due = now.Add(stallTick)
		tick.Reset(stallTick)
	}
}

// read reads the wakes' times from r until it ends.
func (s *Stalls) read(r *os.File, read chan<- struct{}) {
	defer close(read)
	defer r.Close()
	var b [8]byte
	for {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return
		}
		s.note(time.Unix(0, int64(binary.LittleEndian.Uint64(b[:]))), time.Now())
	}
}

// note records [due, now] as a stall when now is over stallSlack past due.
func (s *Stalls) note(due, now time.Time) {
	if now.Sub(due) <= stallSlack {
		return
	}
	s.mu.Lock()
	s.spans = append(s.spans, stall{due, now})
	s.mu.Unlock()
}

// Worst is the longest stall that overlapped [from, to]: how late a
// goroutine that wanted to run within it may have run.
func (s *Stalls) Worst(from, to time.Time) time.Duration {
	var worst time.Duration
	s.each(from, to, func(d time.Duration) { worst = max(worst, d) })
	return worst
}

// Total is the sum of the stalls that overlapped [from, to]: how much of
// it the process may have spent unable to run.
func (s *Stalls) Total(from, to time.Time) time.Duration {
	var total time.Duration
	s.each(from, to, func(d time.Duration) { total += d })
	return total
}

func (s *Stalls) each(from, to time.Time, f func(time.Duration)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sp := range s.spans {
		if sp.to.After(from) && sp.from.Before(to) {
			f(sp.to.Sub(sp.from))
		}
	}
}
