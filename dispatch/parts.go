package dispatch

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// waveBarrier holds each wave back until the previous one has completed,
// then shifts the rest of the plan so the wave starts gap later. Disabled,
// it shifts nothing. Only the pacing loop calls enter; workers call done.
type waveBarrier struct {
	enabled bool
	gap     time.Duration
	current int           // the wave being sent, or results.None
	shift   time.Duration // added to every offset from the current wave on
	pending sync.WaitGroup
}

// enter returns the shift for an arrival of wave planned at offset; when
// the arrival starts a new wave it first waits for the last one to
// complete. ok is false if ctx ended while waiting.
func (b *waveBarrier) enter(ctx context.Context, wave int, offset time.Duration, elapsed func() time.Duration) (shift time.Duration, ok bool) {
	if !b.enabled || wave == b.current {
		return b.shift, true
	}
	if b.current != results.None {
		done := make(chan struct{})
		go func() { b.pending.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			return 0, false
		}
		b.shift = elapsed() + b.gap - offset
	}
	b.current = wave
	return b.shift, true
}

func (b *waveBarrier) add() {
	if b.enabled {
		b.pending.Add(1)
	}
}

func (b *waveBarrier) done() {
	if b.enabled {
		b.pending.Done()
	}
}

// recorder writes completed Records to the Sink, one at a time, counts
// them, and remembers the first write error: once a row cannot be
// recorded, nothing more is sent.
type recorder struct {
	mu      sync.Mutex
	sink    Sink
	observe func(*results.Record)
	onFail  func() // called once, on the first failed write
	written int
	retries int
	err     error
	bad     atomic.Bool
}

// write records rec and reports whether recording still works. The Sink
// is called without a lock of the recorder's: results.Writer takes rows
// from many workers at once and writes those that complete together in
// one write(2).
func (r *recorder) write(rec *results.Record) bool {
	if err := r.sink.Write(rec); err != nil {
		r.mu.Lock()
		if r.err == nil {
			r.err = err
			r.bad.Store(true)
			if r.onFail != nil {
				r.onFail()
			}
		}
		r.mu.Unlock()
	} else {
		r.mu.Lock()
		r.written++
		r.mu.Unlock()
	}
	if r.observe != nil {
		r.observe(rec)
	}
	return !r.bad.Load()
}

func (r *recorder) retried() {
	r.mu.Lock()
	r.retries++
	r.mu.Unlock()
}

func (r *recorder) failed() bool { return r.bad.Load() }

func (r *recorder) failure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *recorder) counts() (retries, written int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.retries, r.written
}
