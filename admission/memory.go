package admission

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// MemoryOptions tune a MemoryCoordinator. The zero value is a store that
// answers at once and never fails.
type MemoryOptions struct {
	// Delay is what each call costs its caller, the round trip to a
	// store another process keeps (redisstate's script on a loopback
	// Redis: under 0.1 ms; across a network, a round trip more). Half
	// is slept on Clock before the call reaches the state, half after:
	// a call whose context ends in the first half changes nothing, one
	// that ends in the second has changed the state and loses its
	// answer, as a call to Redis whose deadline passes does. Zero costs
	// nothing; negative is an error.
	Delay time.Duration
	// Clock is what Delay is slept on, and Fail's time: the runtime
	// clock when nil, else the Transports' (the policy lab's virtual
	// clock).
	Clock Clock
	// Fail, when set, decides per call whether the store fails: a
	// non-nil error is the call's (after its Delay, the state not
	// changed), and the caller falls back to its in-process state, as
	// it does for a Redis that is down. now is Clock's time as the call
	// reaches the store, so an outage is a span of it. It is called by
	// concurrent calls at once.
	Fail func(now time.Time) error
}

// MemoryCoordinator is a Coordinator in process: the state a fleet of
// Transports in one process share (the clients of a simulated fleet, or
// services of one process) kept by the same code as each Transport's
// in-process state (the shared cooldown, Slots' next free slot, a Pace's
// AIMD), so that a decision through it is the one that state would make,
// and the one the Lua scripts of admission/redisstate make (a test drives
// one sequence of steps through both and compares every answer). What it
// adds is the price of sharing: each call costs MemoryOptions.Delay and
// may fail (MemoryOptions.Fail), and a call still ends by its context's
// deadline, as the Coordinator contract says.
//
// Transports of one process may simply share a *Slots or a *Pace; a
// MemoryCoordinator is for sharing what is a Transport's own (its
// cooldown), for the same state across Paces, and for measuring what
// coordination costs. It is safe for concurrent use.
type MemoryCoordinator struct {
	o     MemoryOptions
	clock Clock

	cool  cooldown
	slots Slots // its next free slot; the width is each call's
	mu    sync.Mutex
	pace  paceState

	calls, fallbacks atomic.Int64
}

var _ Coordinator = (*MemoryCoordinator)(nil)

// NewMemoryCoordinator returns a MemoryCoordinator with empty state, or
// an error naming the field of o out of range.
func NewMemoryCoordinator(o MemoryOptions) (*MemoryCoordinator, error) {
	if o.Delay < 0 {
		return nil, valid.Errorf("Delay", "must not be negative")
	}
	m := &MemoryCoordinator{o: o, clock: o.Clock}
	if m.clock == nil {
		m.clock = runtimeClock{}
	}
	return m, nil
}

// Calls is the number of calls made to the store.
func (m *MemoryCoordinator) Calls() int64 { return m.calls.Load() }

// Fallbacks is the number of calls that returned an error — Fail's, or
// their context's, ended before the Delay did — each a decision its
// caller took on its in-process state (redisstate.Coordinator's count).
func (m *MemoryCoordinator) Fallbacks() int64 { return m.fallbacks.Load() }

// Rate is the shared pace's rate, requests per second: 0 until its first
// refusal (Pace.Rate).
func (m *MemoryCoordinator) Rate() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pace.rate
}

// Close does nothing: a MemoryCoordinator holds no connection. It is
// there so that a caller can hold a MemoryCoordinator and a
// redisstate.Coordinator alike.
func (m *MemoryCoordinator) Close() error { return nil }

// Cooldown is Coordinator's: the Transport's cooldown.
func (m *MemoryCoordinator) Cooldown(ctx context.Context, until time.Time, source string) (end time.Time, endSource string, err error) {
	if err := m.call(ctx, func() { end, endSource = m.cool.extend(until, source) }); err != nil {
		return time.Time{}, "", err
	}
	return end, endSource, nil
}

// Slot is Coordinator's: Slots' arithmetic, width being each call's.
func (m *MemoryCoordinator) Slot(ctx context.Context, at time.Time, width time.Duration) (slot time.Time, err error) {
	if err := m.call(ctx, func() { slot = m.slots.takeAt(at, width) }); err != nil {
		return time.Time{}, err
	}
	return slot, nil
}

// Pace is Coordinator's: a Pace's state, one step.
func (m *MemoryCoordinator) Pace(ctx context.Context, s PaceStep) (res PaceResult, err error) {
	if s.Op < PaceReserve || s.Op > PaceRefused {
		return PaceResult{}, fmt.Errorf("admission: unknown pace step %d", s.Op)
	}
	err = m.call(ctx, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		res = m.pace.step(s)
	})
	if err != nil {
		return PaceResult{}, err
	}
	return res, nil
}

// call applies one call to the state, at the cost MemoryOptions set, and
// counts it.
func (m *MemoryCoordinator) call(ctx context.Context, apply func()) error {
	m.calls.Add(1)
	err := m.trip(ctx, apply)
	if err != nil {
		m.fallbacks.Add(1)
	}
	return err
}

// trip is one round trip: half the Delay there, the state's step (unless
// Fail fails it), half the Delay back; a context that ends on the way
// ends it.
func (m *MemoryCoordinator) trip(ctx context.Context, apply func()) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	there := m.o.Delay / 2
	if err := m.wait(ctx, there); err != nil {
		return err
	}
	var failed error
	if m.o.Fail != nil {
		failed = m.o.Fail(m.clock.Now())
	}
	if failed == nil {
		apply()
	}
	if err := m.wait(ctx, m.o.Delay-there); err != nil {
		return err
	}
	return failed
}

func (m *MemoryCoordinator) wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	return m.clock.Sleep(ctx, d)
}
