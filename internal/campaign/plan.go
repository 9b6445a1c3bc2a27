package campaign

import (
	"fmt"
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/trace"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/schedule"
)

// Plan is one shape's validated plan, ready for the dispatch engine.
type Plan struct {
	Shape   string // results.ShapeBurst or results.ShapeScheduled
	Group   string // the default group label of the shape
	Pacer   dispatch.Pacer
	Planned int           // requests the plan sends (its mean, for Poisson)
	Span    time.Duration // planned time from the first send to the last
	// WaitWave and Gap: a burst wave waits for the last to complete.
	WaitWave bool
	Gap      time.Duration
	// Slot is the time the plan holds on a common timeline (Options.Start):
	// the next plan starts Slot after this one did. A burst holds one Gap
	// past its last send (where a next wave would go), a schedule its
	// duration.
	Slot time.Duration
	// Start is when RunPlans starts the plan on a common timeline, set for
	// Options.Watch; zero when the plan starts as the one before it ends.
	Start time.Time
	// Shapes, when set, sizes the plan's requests (a replayed trace's
	// rows, TraceShapes) instead of the target's sizes.
	Shapes client.Shaper
	// Sizing, when set, sizes a scheduled plan from the burst plan run
	// before it (RampSizing; RunPlans, when the run keeps no common
	// timeline and sends the whole plan).
	Sizing *RampSizing
	// Contact, when set, is the rule a burst plan's waves grow by
	// (FirstContact): Planned is its waves as given, Contact's
	// MostRequests the most it may send.
	Contact *Contact
	// Description is the plan in one line for a reader (a dry run): its
	// shape as configured, then what it needs — its requests, its peak
	// rate, its span. Planned and Span are those needs in numbers.
	Description string
}

// Most is the most requests p may send: Planned, or at its largest when
// its waves grow (Contact) or the burst plan before it sizes it (Sizing).
func (p Plan) Most() int {
	switch {
	case p.Contact != nil:
		return p.Contact.MostRequests()
	case p.Sizing != nil:
		_, n := p.Sizing.Most()
		return n
	}
	return p.Planned
}

// Bound is what a reader of p's progress counts to, as RunPlans starts
// it (Options.Watch: a ramp sized by then, the refill probe's units
// chosen): n its requests, and most true when n is a bound, not a count
// (a burst plan whose waves grow to first contact, at its largest; the
// refill probe, which ends at its first refusal).
func (p Plan) Bound() (n int, most bool) {
	if p.Contact != nil {
		return p.Contact.MostRequests(), true
	}
	_, probe := p.Pacer.(*probePacer)
	return p.Planned, probe
}

// Label names p for a reader of its progress: its shape, or "refill
// probe" for the refill probe (a burst plan's shape, a group of its own).
func (p Plan) Label() string {
	if _, probe := p.Pacer.(*probePacer); probe {
		return "refill probe"
	}
	return p.Shape
}

// BurstPlan validates c and returns its plan.
func BurstPlan(c burst.Config, waitWave bool) (Plan, error) {
	if err := c.Validate(); err != nil {
		return Plan{}, fmt.Errorf("burst plan: %w", err)
	}
	p := Plan{
		Shape: results.ShapeBurst, Group: results.GroupBurst, Pacer: burst.NewPlan(c),
		Planned: c.Total(), Span: c.Span(), WaitWave: waitWave, Gap: c.Gap, Slot: c.Span() + c.Gap,
	}
	p.Description = describeBurst(c, waitWave, p)
	return p, nil
}

// SchedulePlan validates c and returns its plan.
func SchedulePlan(c schedule.Config) (Plan, error) {
	if err := c.Validate(); err != nil {
		return Plan{}, fmt.Errorf("scheduled plan: %w", err)
	}
	p := Plan{
		Shape: results.ShapeScheduled, Group: results.GroupScheduled, Pacer: schedule.NewPlan(c),
		Planned: c.Total(), Span: c.Duration(), Slot: c.Duration(),
	}
	p.Description = describeSchedule(c, p)
	return p, nil
}

// Replay is how a trace is replayed (ReplayPlan).
type Replay struct {
	// Cut, when positive, cuts the replay at this time.
	Cut time.Duration
	// Factor: a row's max_tokens is its output × Factor.
	Factor float64
	// Window and Scale are the window the trace was cut to and the time
	// scale its offsets were multiplied by, as the user gave them, for
	// the plan's description ("" and "1": none).
	Window, Scale string
}

// ReplayPlan is a trace's rows as a plan: row i sent at its offset (the
// trace already scaled and cut to its window), sized by the row (its
// prompt, its hash blocks, max_tokens its output × r.Factor); r.Cut,
// when positive, cuts it.
func ReplayPlan(t *trace.Trace, r Replay) (Plan, error) {
	shapes, err := TraceShapes(t, r.Factor)
	if err != nil {
		return Plan{}, err
	}
	rp, err := schedule.NewReplay(t.Offsets(), r.Cut)
	if err != nil {
		return Plan{}, fmt.Errorf("replayed plan: %w", err)
	}
	span := rp.Duration()
	p := Plan{
		Shape: results.ShapeScheduled, Group: results.GroupScheduled, Pacer: rp,
		Planned: rp.Total(), Span: span, Slot: span, Shapes: shapes,
	}
	p.Description = describeReplay(t, r, p)
	return p, nil
}
