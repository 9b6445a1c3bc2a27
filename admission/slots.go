package admission

import (
	"sync"
	"time"
)

// DefaultSlotWidth is the spacing Slots gives refused requests when
// NewSlots is given 0: 100 ms, the slot width of the cross-worker cooldown
// coordinator in the research the design documents cite.
const DefaultSlotWidth = 100 * time.Millisecond

// Slots de-synchronizes the retries of a fleet: every Transport given the
// same *Slots (Policy.Slots) takes a distinct retry time after a refusal.
// A leaky bucket advises each refused client the time the next single
// request fits, so clients told alike come back together and all but one
// are refused again; jitter of 20% spreads a 100 ms wait over only 20 ms.
// With Slots, the i-th request refused while earlier ones wait retries at
// its advised time plus i × width: retry times at least width apart,
// never earlier than advised.
//
// It is safe for concurrent use; its state is one time.
type Slots struct {
	width time.Duration

	mu   sync.Mutex
	next time.Time // the earliest free slot
}

// NewSlots returns Slots width apart (DefaultSlotWidth when width is 0;
// a negative width is 0, which makes Slots plain honouring).
func NewSlots(width time.Duration) *Slots {
	if width == 0 {
		width = DefaultSlotWidth
	}
	return &Slots{width: max(width, 0)}
}

// take returns the wait from now to the slot of a retry that would go
// after wait: at now+wait, or at the next free slot if that is later.
func (s *Slots) take(now time.Time, wait time.Duration) time.Duration {
	return s.takeAt(now.Add(wait), s.width).Sub(now)
}

// takeAt takes the slot of a retry that could go at at: at, or the next
// free slot if that is later; the next free slot becomes it plus width
// (Coordinator.Slot).
func (s *Slots) takeAt(at time.Time, width time.Duration) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next.After(at) {
		at = s.next
	}
	s.next = at.Add(width)
	return at
}
