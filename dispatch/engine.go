package dispatch

import (
	"context"
	"errors"
	"runtime"
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

// Request is one request a Sender performs: its sequence number in the
// plan and what its first attempt's row takes from the plan (Wave,
// IntendedMS, SentMS), with what every request of the run shares
// (*Shared: the run's start, its stop and its Row). A request holds these,
// not a Record, while it is open: the Sender builds each attempt's row
// when the attempt ends (First is the first attempt's as the plan fills
// it), so that an open stream holds no Record, and the Request passed by
// value down the Sender's calls stays small (the stack a stream's
// goroutine holds: bench/README.md, memory per open stream).
type Request struct {
	*Shared
	Seq        int
	Wave       int
	IntendedMS float64
	SentMS     float64
}

// Shared is what every Request of a run shares, by pointer: read only.
type Shared struct {
	// Start is the run's start, the zero of intended_ms and sent_ms.
	Start time.Time
	// Run is done when the run is canceled (its Err is context.Canceled)
	// or when Options.MaxDuration has passed since Start (its Deadline;
	// its Err is then context.DeadlineExceeded): a Sender starts no
	// attempt after it. An attempt already on the wire completes on the
	// context Send was given, which a cancel ends only after the grace.
	// An attempt that would go out past the deadline, the first one (a
	// request that waited for a worker) or a retry, is given up locally:
	// its row is not sent (results.DecisionGiveUpLocal, error class
	// results.ClassTimeout), so that every planned request has a row and
	// none is sent past the cap. client.Target.SendHead does so.
	Run context.Context
	// Row is the run's row, every request's first row starts from: its
	// identity fields (RunID, Shape, Group, Worker) and attempt 1 set, the
	// rest results.Blank's.
	Row results.Record
}

// First is the Record of req's first attempt as the plan fills it: Row
// with Seq, Wave, IntendedMS and SentMS set.
func (req *Request) First() results.Record {
	r := req.Row
	r.Seq, r.Wave, r.IntendedMS, r.SentMS = req.Seq, req.Wave, req.IntendedMS, req.SentMS
	return r
}

// Sender performs one request, every attempt its retry owner makes
// included, and hands each attempt's Record to record, in order, from the
// calling goroutine. The first carries Request.First()'s fields; a later
// one the same identity, the next Attempt, and its own IntendedMS and
// SentMS since Request.Start. client.Target does not satisfy it: its Send
// takes the request's fields apart, so that client need not import
// dispatch; internal/campaign's sender adapts one to the other.
type Sender interface {
	Send(ctx context.Context, req Request, record func(*results.Record))
}

// Sink receives each completed Record, from many workers at once: it must be
// safe for concurrent use, and must not keep rec past Write (a Sender may
// reuse it once it is recorded: client.Target.SendHead). results.Writer
// satisfies it.
type Sink interface {
	Write(rec *results.Record) error
}

// WaitFunc waits until t; it returns false if ctx ended first.
type WaitFunc func(ctx context.Context, t time.Time) bool

// Defaults.
const (
	DefaultMaxInFlight = 256
	DefaultGrace       = time.Second
	DefaultMaxRequests = 10000
)

// Options configure a Run.
type Options struct {
	RunID string
	Shape string
	Group string
	// MaxInFlight bounds the requests in progress: from a request's first
	// send to its last answer, retry waits included. An arrival that finds
	// no free slot waits for one and is recorded late; it is never dropped.
	// It is also the most goroutines a Run sends from.
	MaxInFlight int
	// MaxRequests stops the run at the plan's arrival of this index: it
	// bounds the plan, whoever sends it, so a Shard stops where the whole
	// plan would (after its share of the first MaxRequests arrivals).
	MaxRequests int
	// MaxDuration stops sending arrivals planned this long after the start
	// or later, and bounds every attempt, retries included: none is sent
	// this long after the start or later (Request.Run's deadline). 0
	// means no bound.
	MaxDuration time.Duration
	// WaitWave makes wave w start WaveGap after wave w-1 has completed,
	// instead of at its planned offset.
	WaitWave bool
	WaveGap  time.Duration
	// Grace is how long in-flight requests may finish after the context
	// is canceled; what is still running then is recorded as canceled.
	Grace time.Duration
	// Wait is how the pacing loop waits for an arrival's time; nil means a
	// precise wait (on Linux a raw nanosleep for the last 2 ms, see
	// newPreciseWait). Tests under
	// testing/synctest pass a runtime-timer wait (internal/sleep.Until).
	Wait WaitFunc
	// PaceWindow bounds how late an arrival may go so that the next one
	// goes with it, on one wake-up (each wake-up costs thread switches,
	// the pacing loop's and the target's). An arrival waits for the next
	// only when that one is due within PaceWindow, and only until the
	// next one's time: always when the next is due within half the mean
	// spacing of the arrivals lately (arrivals bunched closer than their
	// rate, a Poisson plan's), else only when neither of the two
	// arrivals before it was held. Arrivals evenly spaced within the
	// window then go two at their own time and the third with the one
	// after it, a spacing late: fewer than half are late, so the median
	// send lateness stays near an on-time send's, on two wake-ups in
	// three (less CPU: bench/README.md, round 14; a fixed window sent
	// arrivals 200 µs apart in threes, the first 500 µs late). A lone
	// arrival is never held; 0 paces every arrival on its own.
	PaceWindow time.Duration
	// PaceFixed makes PaceWindow a fixed window: an arrival waits for the
	// next whenever that one is due within PaceWindow, however evenly
	// spaced, so evenly spaced arrivals go in pairs, half of them up to a
	// spacing late, on half the wake-ups (less CPU: bench/README.md).
	PaceFixed bool
	// Observe is called once per completed Record, after the Sink, from
	// the request's goroutine (it must be safe for concurrent use, and
	// must not keep the Record past the call: see Sink).
	Observe func(*results.Record)
	// Start is the zero of the plan's offsets (and of intended_ms and
	// sent_ms): arrival i is sent at Start + offset(i). Zero means when Run
	// is called. Workers given one Start send one plan on one clock: a
	// Start ahead is a wait that a cancel ends, one already past sends
	// what is due at once, each recorded as late as it went.
	Start time.Time
	// Shard is the share of the plan this Run sends (Shard.Owns); every
	// arrival keeps its index in the whole plan as its seq and its offset,
	// and each Record names the shard (results.Record.Worker). The zero
	// Shard sends the whole plan.
	Shard Shard
}

// Cap names the safety cap that ended a Run early.
type Cap int

// Caps.
const (
	NoCap          Cap = iota
	CapMaxRequests     // Options.MaxRequests
	CapMaxDuration     // Options.MaxDuration
)

// Outcome says how a Run ended.
type Outcome struct {
	Sent        int // first attempts
	Retries     int // further attempts the Sender's retry owner made
	Written     int // rows the Sink accepted
	Interrupted bool
	// CappedBy is the cap that stopped the plan before its end, if any.
	CappedBy Cap
}

// ErrInterrupted is returned when the context was canceled mid-plan. Every
// request that was sent has still been recorded.
var ErrInterrupted = errors.New("interrupted")

// Run sends every arrival of p through s at its intended time on an
// absolute schedule (start + offset, so one late send never shifts the
// ones after it) and writes one Record per attempt to sink. It returns
// when every sent request has been recorded.
func Run(ctx context.Context, p Pacer, s Sender, sink Sink, o Options) (Outcome, error) {
	if o.Wait == nil {
		wait, release := newPreciseWait()
		defer release()
		o.Wait = wait
	}
	e := newEngine(s, sink, o)
	if e.start = o.Start; e.start.IsZero() {
		e.start = time.Now()
	}
	// Requests run on their own context: canceling the run stops sending
	// at once, but gives what is in flight Grace to complete.
	reqCtx, cancelReqs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelReqs()
	stopGrace := context.AfterFunc(ctx, func() {
		t := time.NewTimer(e.o.Grace)
		defer t.Stop()
		select {
		case <-t.C:
		case <-reqCtx.Done():
		}
		cancelReqs()
	})
	defer stopGrace()
	e.ctx, e.reqCtx, e.stop = ctx, reqCtx, ctx
	if o.MaxDuration > 0 {
		var stopSending context.CancelFunc
		e.stop, stopSending = context.WithDeadline(ctx, e.start.Add(o.MaxDuration))
		defer stopSending()
	}
	e.shared.Start, e.shared.Run = e.start, e.stop

	// A row that cannot be recorded stops the pacing at once.
	paceCtx, stopPacing := context.WithCancel(ctx)
	defer stopPacing()
	e.rec.onFail = stopPacing
	out := e.pace(paceCtx, p)
	e.inFlight.Wait()
	close(e.idle)
	if ctx.Err() != nil {
		// Also when the cancel came while the last requests (or their
		// retries) were running: what they left undone was cut.
		out.Interrupted = true
	}
	out.Retries, out.Written = e.rec.counts()
	if err := e.rec.failure(); err != nil {
		return out, err
	}
	if out.Interrupted {
		return out, ErrInterrupted
	}
	return out, nil
}

// engine is one Run: a pacing loop (pace) hands arrivals to workers, each
// of which runs one request's attempts (request); a wave barrier holds a
// wave back until the last one completed when WaitWave asks for it.
type engine struct {
	o      Options
	sender Sender
	start  time.Time
	ctx    context.Context // the run's: its cancel stops sending
	reqCtx context.Context // the requests': outlives a cancel by Grace
	stop   context.Context // Request.Run: the run's, ended at MaxDuration too

	workers  chan struct{} // one token per worker goroutine
	idle     chan arrival  // arrivals for idle workers
	inFlight sync.WaitGroup
	open     atomic.Int64 // requests in progress, for yield
	waves    waveBarrier
	rec      recorder
	record   func(*results.Record) // recordAttempt, bound once
	shared   Shared                // Request.Shared
	spacing  spacing               // of the arrivals lately, for the pace window
	// sinceHeld counts the arrivals since the last one held for the
	// next (the pace window's ration, heldEvery).
	sinceHeld int
}

// arrival is one request handed from the pacing loop to a worker.
type arrival struct {
	seq, wave int
	intended  time.Duration
}

func newEngine(s Sender, sink Sink, o Options) *engine {
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.MaxRequests <= 0 {
		o.MaxRequests = DefaultMaxRequests
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}

	e := &engine{
		o: o, sender: s,
		workers: make(chan struct{}, o.MaxInFlight),
		idle:    make(chan arrival),
		waves:   waveBarrier{enabled: o.WaitWave, gap: o.WaveGap, current: results.None},
		rec:     recorder{sink: sink, observe: o.Observe},
	}
	e.record = e.recordAttempt
	row := &e.shared.Row
	*row = results.Blank()
	row.RunID, row.Shape, row.Group, row.Worker = o.RunID, o.Shape, o.Group, o.Shard.String()
	row.Attempt = 1
	return e
}

// pace is the pacing loop: for each arrival, in order, it checks the caps,
// lets the wave barrier shift the plan, waits for the intended time and
// hands the arrival to a worker. An arrival the pace window holds for the
// next goes right after it, on the same wake-up. ctx ends on a cancel or
// a failed write.
func (e *engine) pace(ctx context.Context, p Pacer) Outcome {
	var out Outcome
	la := &lookahead{p: p, shard: e.o.Shard, limit: e.o.MaxRequests}
	var held arrival
	holding := false
	for !e.rec.failed() {
		seq, offset, wave, ok := la.next()
		if !ok {
			return out
		}
		if seq >= e.o.MaxRequests {
			out.CappedBy = CapMaxRequests
			return out
		}
		shift, ok := e.waves.enter(ctx, wave, offset, e.elapsed)
		if !ok {
			out.Interrupted = !e.rec.failed()
			return out
		}
		intended := offset + shift
		if e.o.MaxDuration > 0 && intended >= e.o.MaxDuration {
			out.CappedBy = CapMaxDuration
			return out
		}
		a := arrival{seq: seq, wave: wave, intended: intended}
		// The window is reckoned for every arrival, so that the mean
		// spacing is the plan's, whether the loop runs on time or not.
		at, hold := e.start.Add(intended), e.window(la, offset, wave)
		if hold > 0 && !holding && time.Now().Before(at) {
			held, holding = a, true
			e.sinceHeld = 0
			continue
		}
		e.sinceHeld++
		// The arrival on time first, its worker started (yield) before
		// the held one is handed off: a wake-up's second send waits for
		// the first's worker or for another thread, and the held arrival
		// is late already. (Handed off after the held one, the arrival
		// on time went 0.13 ms late at the median, a lone one 0.06:
		// bench/README.md, round 14.)
		if !e.o.Wait(ctx, at) || !e.send(ctx, a, &out) || holding && !e.send(ctx, held, &out) {
			out.Interrupted = !e.rec.failed()
			return out
		}
		holding = false
	}
	return out
}

// send hands a to a worker and lets it start (yield); false if ctx
// ended first.
func (e *engine) send(ctx context.Context, a arrival, out *Outcome) bool {
	if !e.handOff(ctx, a) {
		return false
	}
	out.Sent++
	e.yield()
	return true
}

// window is how much later than its time the arrival at offset may be
// sent so that the next arrival goes with it, on one wake-up: until the
// next one's time, when that falls within PaceWindow and either within
// half the mean spacing (arrivals bunched closer than their rate) or
// heldEvery arrivals after the last one held
// (arrivals evenly spaced; every time, when PaceFixed); else 0. A lone
// arrival is never held, nor one whose next is past a cap (it would not
// be sent), and waves waited for are never coalesced.
func (e *engine) window(la *lookahead, offset time.Duration, wave int) time.Duration {
	if e.o.PaceWindow <= 0 || e.o.WaitWave {
		return 0
	}
	nextSeq, next, nextWave, ok := la.peek()
	if !ok || nextWave != wave || next <= offset || nextSeq >= e.o.MaxRequests ||
		e.o.MaxDuration > 0 && next >= e.o.MaxDuration {
		return 0
	}
	gap := next - offset
	e.spacing.observe(gap)
	switch {
	case gap > e.o.PaceWindow:
		return 0
	case e.o.PaceFixed, gap <= e.spacing.mean/2, e.sinceHeld >= heldEvery-1:
		return gap
	}
	return 0
}

// heldEvery is how many arrivals one in goes with the next when they
// are evenly spaced within PaceWindow: after an arrival held for the
// next, that next one and the one after it each go at their time. Fewer
// than half the arrivals are late, so the median send lateness stays an
// on-time send's, and the wake-ups are two in three: each wake-up is a
// thread switch of the pacing loop's and, for the request it sends, one
// of the target's (at 2,000/s over HTTPS, 0.84-0.86x the CPU of a
// wake-up per arrival, the median lateness 1.4-1.5x, under half of
// vegeta's; at 5,000/s 0.85-0.88x, the median 0.044-0.054 -> 0.085 ms,
// over HTTPS above vegeta's 0.072: bench/README.md, round 14). A
// rationFloor that left arrivals under 400 µs apart each at its time
// was tried and dropped: the ration's CPU is most worth having at the
// highest rates, and the window (--pace-window) is the user's bound.
const heldEvery = 3

// spacing is the mean gap between consecutive arrivals, over about the
// last spacingSpan of them (an exponential moving average, the plain mean
// until then), in integer nanoseconds: the same plan gives the same
// windows on every run.
type spacing struct {
	mean time.Duration
	n    int
}

// spacingSpan is how many arrivals the mean spacing follows: enough to
// smooth a Poisson plan's gaps, few enough to follow a phase's new rate
// within a few dozen arrivals.
const spacingSpan = 32

func (s *spacing) observe(gap time.Duration) {
	s.n = min(s.n+1, spacingSpan)
	s.mean += (gap - s.mean) / time.Duration(s.n)
}

// yieldBelow is how few requests in progress let the pacing loop yield
// its thread to the worker it just handed an arrival to.
const yieldBelow = 256

// yield lets the worker just handed an arrival start the request on this
// thread now, rather than wait for another thread to take it (lower
// lateness, fewer switches) — while few requests are in progress. With
// thousands in progress (open streams) many goroutines are runnable at
// once, and runtime.Gosched puts the loop behind all of them on the global
// run queue: at 15,000 open streams and 1,000 arrivals a second, sends
// went seconds late (p50 4.2 s against 0.25 s yielding only below this,
// on a loaded machine: bench/README.md, bench/streams.sh).
func (e *engine) yield() {
	if e.open.Load() < yieldBelow {
		runtime.Gosched()
	}
}

// lookahead is a Pacer read one arrival of the shard ahead: it numbers
// the plan's arrivals and skips those of other shards, up to limit (the
// index where the caller stops).
type lookahead struct {
	p     Pacer
	shard Shard
	limit int
	index int // of the plan's next arrival
	has   bool
	seq   int
	off   time.Duration
	wave  int
	ok    bool
}

func (l *lookahead) peek() (seq int, off time.Duration, wave int, ok bool) {
	for !l.has {
		l.off, l.wave, l.ok = l.p.Next()
		l.seq = l.index
		l.index++
		l.has = !l.ok || l.shard.Owns(l.seq) || l.seq >= l.limit
	}
	return l.seq, l.off, l.wave, l.ok
}

func (l *lookahead) next() (seq int, off time.Duration, wave int, ok bool) {
	seq, off, wave, ok = l.peek()
	l.has = false
	return seq, off, wave, ok
}

// handOff gives a to an idle worker, or starts a worker when fewer than
// MaxInFlight exist, waiting for either; false if ctx ended first. A
// worker holds one request at a time and keeps its grown stack for the
// next, so at most MaxInFlight requests are in progress and at most
// MaxInFlight goroutines send. A cancel seen before the hand-off wins:
// nothing is sent after it.
func (e *engine) handOff(ctx context.Context, a arrival) bool {
	if ctx.Err() != nil {
		return false
	}
	e.inFlight.Add(1)
	e.open.Add(1)
	e.waves.add()
	// An idle worker first: select picks at random among ready cases, and
	// starting a worker while one idles would grow the pool to MaxInFlight
	// goroutines (each growing its own stack, each scanned by every GC).
	select {
	case e.idle <- a:
		return true
	default:
	}
	select {
	case e.idle <- a:
		return true
	case e.workers <- struct{}{}:
		go e.worker(a)
		return true
	case <-ctx.Done():
		e.waves.done()
		e.open.Add(-1)
		e.inFlight.Done()
		return false
	}
}

func (e *engine) worker(a arrival) {
	defer func() { <-e.workers }()
	for ok := true; ok; a, ok = <-e.idle {
		e.request(a)
		e.waves.done()
		e.open.Add(-1)
		e.inFlight.Done()
	}
}

// request hands one request to the Sender, which records each of its
// attempts; its worker is held until the last. sent_ms is stamped as the
// request leaves, so a send that waited for a worker is recorded late.
// Retries are the Sender's (its retry owner's): they run on the requests'
// context, which a cancel ends after Grace, and none goes past
// MaxDuration (Request.Run, done then: a request that leaves its worker
// past it is not sent, its row a local give-up).
//
// The worker's stack is what an open stream holds beyond its heap: this
// frame and the Sender's stay small (no Record: the Sender builds each
// row when its attempt ends), so that the worker's deepest path fits its
// first 4 KiB stack instead of doubling it. That path is the reading of
// an answer's advice once its body has ended (client's captureHeaders,
// retryafter's parse under it); it, the send through net/http's
// Transport and a stream's read each have some 384 bytes or more to spare
// (internal/campaign's TestOpenStreamStack guards it; bench/README.md,
// round 11, memory a stream).
func (e *engine) request(a arrival) {
	e.sender.Send(e.reqCtx, Request{Shared: &e.shared, Seq: a.seq, Wave: a.wave, IntendedMS: ms(a.intended), SentMS: ms(e.elapsed())}, e.record)
}

// recordAttempt writes one attempt's row (a Sender's record function,
// e.record).
func (e *engine) recordAttempt(r *results.Record) {
	if r.Attempt > 1 {
		e.rec.retried()
	}
	e.rec.write(r)
}

func (e *engine) elapsed() time.Duration { return time.Since(e.start) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
