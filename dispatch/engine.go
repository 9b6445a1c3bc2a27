package dispatch

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// Pacer yields the arrivals of a plan in order: each arrival's intended
// offset from the run start and its burst wave (results.None when the
// shape has no waves). ok is false when the plan is exhausted. burst.Plan
// and schedule.Plan satisfy it without importing this package.
type Pacer interface {
	Next() (offset time.Duration, wave int, ok bool)
}

// Sender performs one attempt and fills the response fields of rec.
// target.Target satisfies it.
type Sender interface {
	Send(ctx context.Context, seq int, rec *results.Record)
}

// Sink receives each completed Record. results.Writer satisfies it.
type Sink interface {
	Write(rec *results.Record) error
}

// Defaults.
const (
	DefaultMaxInFlight = 256
	DefaultGrace       = 2 * time.Second
	DefaultMaxRequests = 10000
)

// Options configure a Run.
type Options struct {
	RunID string
	Shape string
	Group string
	// MaxInFlight bounds concurrent requests. An arrival that finds no free
	// slot waits for one and is recorded late; it is never dropped.
	MaxInFlight int
	// MaxRequests stops the run after this many sends (a safety cap).
	MaxRequests int
	// MaxDuration stops sending after this long (a safety cap); 0 = none.
	MaxDuration time.Duration
	// WaitWave makes wave w start WaveGap after wave w-1 has completed,
	// instead of at its planned offset.
	WaitWave bool
	WaveGap  time.Duration
	// Grace is how long in-flight requests may finish after the context
	// is canceled; what is still running then is recorded as canceled.
	Grace time.Duration
	// Clock is the time source; nil means the real clock.
	Clock Clock
	// Retry resends 429s after their advised wait; nil retries nothing.
	// Retries do not count against MaxRequests (MaxAttempts bounds them)
	// and do not start after the context is canceled.
	Retry *RetryPolicy
	// Observe is called once per completed Record, after the Sink, from
	// the request's goroutine (it must be safe for concurrent use).
	Observe func(*results.Record)
}

// Outcome says how a Run ended.
type Outcome struct {
	Sent        int // first attempts
	Retries     int // further attempts under the RetryPolicy
	Written     int
	Interrupted bool // the context was canceled before the plan finished
	CappedBy    string
}

// Run sends every arrival of p through s at its intended time on an
// absolute schedule (start + offset, so one late send never shifts the
// ones after it) and writes one Record per attempt to sink. It returns
// when every sent request has been recorded.
func Run(ctx context.Context, p Pacer, s Sender, sink Sink, o Options) (Outcome, error) {
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.MaxRequests <= 0 {
		o.MaxRequests = DefaultMaxRequests
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	clk := o.Clock
	if clk == nil {
		clk = realClock{}
	}
	// Requests run on their own context: canceling the run stops sending at
	// once, but gives what is in flight Grace to complete.
	reqCtx, cancelReqs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelReqs()
	stopGrace := context.AfterFunc(ctx, func() {
		t := clk.NewTimer(o.Grace)
		select {
		case <-t.C():
		case <-reqCtx.Done():
			t.Stop()
		}
		cancelReqs()
	})
	defer stopGrace()

	var (
		out      Outcome
		wg       sync.WaitGroup
		sinkMu   sync.Mutex
		sinkErr  error
		sinkBad  atomic.Bool // a failed write stops the sending
		slots    = make(chan struct{}, o.MaxInFlight)
		waveWG   sync.WaitGroup
		curWave  = results.None
		shift    time.Duration
		deadline time.Duration = o.MaxDuration
	)
	var retries atomic.Int64
	start := clk.Now()
	do := func(a attempt) {
		defer wg.Done()
		if o.WaitWave {
			defer waveWG.Done()
		}
		for n := 1; ; n++ {
			rec := results.Blank()
			rec.RunID, rec.Shape, rec.Group = o.RunID, o.Shape, o.Group
			rec.Seq, rec.Attempt, rec.Wave = a.seq, n, a.wave
			rec.IntendedMS = ms(a.intended)
			rec.SentMS = ms(a.sent)
			s.Send(reqCtx, a.seq, &rec)
			<-slots
			sinkMu.Lock()
			if err := sink.Write(&rec); err != nil && sinkErr == nil {
				sinkErr = err
				sinkBad.Store(true)
			} else if err == nil {
				out.Written++
			}
			sinkMu.Unlock()
			if o.Observe != nil {
				o.Observe(&rec)
			}
			delay, again := o.Retry.next(&rec, n)
			if !again || sinkBad.Load() {
				return
			}
			// A retry waits on a runtime timer, not nanosleep: many may
			// wait at once, and the jitter dwarfs a timer's millisecond.
			at := clk.Now().Add(delay)
			if !sleepUntil(ctx, clk, at) {
				return
			}
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			if ctx.Err() != nil {
				<-slots
				return
			}
			a.intended, a.sent = at.Sub(start), clk.Now().Sub(start)
			retries.Add(1)
		}
	}
	jobs := make(chan attempt)
	worker := func(a attempt) {
		for ok := true; ok; a, ok = <-jobs {
			do(a)
		}
	}
	wait := func(ctx context.Context, t time.Time) bool { return sleepUntil(ctx, clk, t) }
	if _, real := clk.(realClock); real {
		wait = sleepPrecise
	}
	for !sinkBad.Load() {
		if out.Sent >= o.MaxRequests {
			if _, _, more := p.Next(); more {
				out.CappedBy = "max-requests"
			}
			break
		}
		offset, wave, ok := p.Next()
		if !ok {
			break
		}
		if o.WaitWave && wave != curWave {
			if curWave != results.None {
				if !waitGroup(ctx, &waveWG) {
					out.Interrupted = true
					break
				}
				shift = clk.Now().Sub(start) + o.WaveGap - offset
			}
			curWave = wave
		}
		intended := offset + shift
		if deadline > 0 && intended >= deadline {
			out.CappedBy = "duration"
			break
		}
		if !wait(ctx, start.Add(intended)) {
			out.Interrupted = true
			break
		}
		select {
		case slots <- struct{}{}:
			if ctx.Err() != nil {
				<-slots
				out.Interrupted = true
			}
		case <-ctx.Done():
			out.Interrupted = true
		}
		if out.Interrupted {
			break
		}
		a := attempt{seq: out.Sent, wave: wave, intended: intended, sent: clk.Now().Sub(start)}
		out.Sent++
		wg.Add(1)
		if o.WaitWave {
			waveWG.Add(1)
		}
		// Hand the attempt to an idle worker, or start one: at most
		// MaxInFlight workers exist, and a worker keeps its grown stack for
		// the next request instead of growing a fresh goroutine's again.
		select {
		case jobs <- a:
		default:
			go worker(a)
		}
	}
	wg.Wait()
	close(jobs)
	if ctx.Err() != nil {
		// Also when the cancel came while the last requests (or their
		// retries) were still running: what they left undone was cut.
		out.Interrupted = true
	}
	out.Retries = int(retries.Load())
	if sinkErr != nil {
		return out, sinkErr
	}
	if out.Interrupted {
		return out, ErrInterrupted
	}
	return out, nil
}

// attempt is one send handed from the pacing loop to a worker.
type attempt struct {
	seq, wave      int
	intended, sent time.Duration
}

// ErrInterrupted is returned when the context was canceled mid-plan. Every
// request that was sent has still been recorded.
var ErrInterrupted = errors.New("interrupted")

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// sleepUntil waits for the clock to reach t; false if ctx ended first.
func sleepUntil(ctx context.Context, clk Clock, t time.Time) bool {
	d := t.Sub(clk.Now())
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := clk.NewTimer(d)
	select {
	case <-timer.C():
		// A cancel that raced the timer wins: no send after an interrupt.
		return ctx.Err() == nil
	case <-ctx.Done():
		timer.Stop()
		return false
	}
}

// waitGroup waits for wg; false if ctx ended first.
func waitGroup(ctx context.Context, wg *sync.WaitGroup) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}
