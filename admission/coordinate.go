package admission

import (
	"context"
	"time"
)

// Coordinator keeps the state that retry owners share — the shared
// cooldown, Slots' next free slot and a Pace's rate and send slots — where
// owners in several processes can reach it (Policy.Coordinator), so a fleet
// that names one deployment learns it once instead of each process alone.
// Package admission/redisstate keeps it in Redis; a MemoryCoordinator
// keeps it in process, at a price it is given.
//
// Without a Coordinator that state is in process: each Transport's
// cooldown, each *Slots, each *Pace. That state stays, and is every
// decision's fallback: a method that returns an error (Redis down, slow,
// lost) leaves that decision to the in-process state, so a Coordinator
// can fail without failing a request. A method must return by its
// context's deadline, which the Transport sets to the request's budget
// (on the runtime clock); it is called on the request's goroutine, so it
// must be safe for concurrent use. What it answers does not hold a
// request past its budget either: a send slot granted too late for the
// answer to come within it is refused as the in-process Pace refuses it,
// a cooldown or retry slot past it is the give-up (or redirect) the
// in-process state would make.
type Coordinator interface {
	// Cooldown moves the shared cooldown's end to until when until is
	// later (a zero until only reads it), for advice from source (a
	// Decision's WaitSource), and returns the end as it then stands and
	// the source of the advice that set it (zero when there is none).
	Cooldown(ctx context.Context, until time.Time, source string) (end time.Time, endSource string, err error)
	// Slot takes the retry slot of a retry that could go at at: at, or
	// the next free slot when that is later; the next free slot becomes
	// the one returned plus width (Slots).
	Slot(ctx context.Context, at time.Time, width time.Duration) (time.Time, error)
	// Pace applies one step of a Pace to the pace's shared state (the
	// rate, the next send slot, the hold of the latest advised wait); see
	// PaceStep for each step's contract.
	Pace(ctx context.Context, step PaceStep) (PaceResult, error)
}

// PaceOp is a step of a Pace's shared state.
type PaceOp int

const (
	// PaceReserve takes the send slot of an attempt ready at Now: the
	// latest of Now, the hold and (once paced) the next slot. When
	// Deadline is set and the slot plus Margin (the time answers take) is
	// not before it, no slot is taken: OK is false and At is the slot it
	// would have had. Gen is the count of cuts the slot was taken under.
	PaceReserve PaceOp = iota + 1
	// PaceConfirm reports in OK whether no cut came since the slot At was
	// taken under Gen; if none did, the attempt goes in it.
	PaceConfirm
	// PaceAdmitted grows the rate for an attempt answered at Now without
	// a refusal, by Config.Increase a second since the last growth or cut.
	PaceAdmitted
	// PaceRefused cuts the rate by Config.Decrease for an attempt sent at
	// Sent in a slot taken under Gen and refused at Now advising Wait
	// (negative: none), once per congestion event, and holds every send
	// until Now + Wait. An attempt sent before the last cut, or in a slot
	// taken under fewer cuts than there are, is of an event already
	// counted: the second test holds when the fleet's clocks disagree by
	// more than a refusal takes to come back.
	PaceRefused
)

// PaceStep is one step of a Pace (Coordinator.Pace).
type PaceStep struct {
	Op       PaceOp
	Now      time.Time
	Sent     time.Time     // PaceAdmitted, PaceRefused: when the attempt was sent
	Wait     time.Duration // PaceRefused: the advised wait, negative for none
	Deadline time.Time     // PaceReserve: the request's budget's end, zero for none
	Margin   time.Duration // PaceReserve: the answer's expected time after its send
	Gen      uint64        // PaceConfirm, PaceRefused: the count of cuts the slot was taken under
	At       time.Time     // PaceConfirm: the slot taken
	Config   PaceConfig    // the Pace's settings
}

// PaceResult is what a PaceReserve or PaceConfirm step returns: zero for
// the other steps and for a confirm that fails.
type PaceResult struct {
	At  time.Time
	Gen uint64
	OK  bool
}

// coordinated calls f with the request's context bounded by its budget (on
// the runtime clock: another Clock's deadline means nothing to a context).
func (r *request) coordinated(f func(context.Context) error) error {
	ctx := r.ctx
	if _, runtime := r.t.clock.(runtimeClock); runtime && !r.deadline.IsZero() && !r.byContext {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, r.deadline)
		defer cancel()
	}
	return f(ctx)
}

// cooldownLeft is what remains of the shared cooldown at now and the
// source of the advice behind it: the later of the in-process end and the
// Coordinator's, the in-process one alone when the Coordinator fails.
func (r *request) cooldownLeft(now time.Time) (time.Duration, string) {
	left, source := r.t.cool.left(now)
	c := r.t.p.Coordinator
	if c == nil {
		return left, source
	}
	var end time.Time
	var src string
	if err := r.coordinated(func(ctx context.Context) (err error) {
		end, src, err = c.Cooldown(ctx, time.Time{}, "")
		return err
	}); err != nil {
		return left, source
	}
	if d := end.Sub(now); d > left {
		return d, src
	}
	return left, source
}

// extendCooldown moves the shared cooldown's end to until, in process and
// through the Coordinator.
func (r *request) extendCooldown(until time.Time, source string) {
	r.t.cool.extend(until, source)
	if c := r.t.p.Coordinator; c != nil {
		_ = r.coordinated(func(ctx context.Context) error {
			_, _, err := c.Cooldown(ctx, until, source)
			return err // the in-process cooldown holds it either way
		})
	}
}

// slot is the wait from now to the retry slot of a retry that would go
// after wait: through the Coordinator, else the in-process Slots.
func (r *request) slot(now time.Time, wait time.Duration) time.Duration {
	s := r.t.p.Slots
	if c := r.t.p.Coordinator; c != nil {
		var at time.Time
		if err := r.coordinated(func(ctx context.Context) (err error) {
			at, err = c.Slot(ctx, now.Add(wait), s.width)
			return err
		}); err == nil {
			return max(at.Sub(now), wait) // never before the advised time
		}
	}
	return s.take(now, wait)
}

// pace applies step to the Policy's Pace, through the Coordinator when
// there is one (the in-process state when it fails).
func (r *request) pace(step PaceStep) PaceResult {
	c := r.t.p.Coordinator
	if c == nil {
		return r.t.p.Pace.apply(nil, step)
	}
	var res PaceResult
	_ = r.coordinated(func(ctx context.Context) error {
		res = r.t.p.Pace.apply(func(s PaceStep) (PaceResult, error) { return c.Pace(ctx, s) }, step)
		return nil
	})
	return res
}
