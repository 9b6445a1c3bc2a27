package schedule

import (
	"slices"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// MaxReplaySpan bounds a replayed trace's last offset: the longest trace
// read (internal/trace.MaxSpan, 400 days), not a scheduled plan's week.
const MaxReplaySpan = 400 * 24 * time.Hour

// Replay is a plan of given arrivals: a trace's offsets (internal/trace),
// sent in order. Rows at one instant are consecutive arrivals at the same
// offset, all of wave -1 (results.None) like every scheduled arrival: an
// absolute schedule sends them together, and the results keep waves for
// burst plans. Arrival i is the trace's row i, so a sender sizes request
// seq i by the trace's row i.
type Replay struct {
	at []time.Duration
	i  int
}

// NewReplay returns the plan of offsets (sorted, not negative), cut at
// duration: the arrivals before it (duration 0: every one). It checks
// what it is given: a *valid.Error names the problem.
func NewReplay(offsets []time.Duration, duration time.Duration) (*Replay, error) {
	if duration < 0 {
		return nil, valid.Errorf("Duration", "must not be negative")
	}
	if !slices.IsSorted(offsets) {
		return nil, valid.Errorf("Offsets", "are not sorted")
	}
	if len(offsets) > 0 && (offsets[0] < 0 || offsets[len(offsets)-1] > MaxReplaySpan) {
		return nil, valid.Errorf("Offsets", "must lie from 0 to %v", MaxReplaySpan)
	}
	n := len(offsets)
	if duration > 0 {
		n, _ = slices.BinarySearch(offsets, duration)
	}
	if n == 0 {
		return nil, &emptyPlanError{&valid.Error{Name: "Offsets", Reason: "hold no arrival before the end of the plan"}}
	}
	return &Replay{at: offsets[:n:n]}, nil
}

// Total is the number of arrivals of the plan.
func (p *Replay) Total() int { return len(p.at) }

// Duration is the plan's last offset.
func (p *Replay) Duration() time.Duration { return p.at[len(p.at)-1] }

// Next returns the next arrival; ok is false after the last.
func (p *Replay) Next() (offset time.Duration, wave int, ok bool) {
	if p.i >= len(p.at) {
		return 0, 0, false
	}
	p.i++
	return p.at[p.i-1], -1, true
}
