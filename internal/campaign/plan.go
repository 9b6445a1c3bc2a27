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
}

// BurstPlan validates c and returns its plan.
func BurstPlan(c burst.Config, waitWave bool) (Plan, error) {
	if err := c.Validate(); err != nil {
		return Plan{}, fmt.Errorf("burst plan: %w", err)
	}
	return Plan{
		Shape: results.ShapeBurst, Group: results.GroupBurst, Pacer: burst.NewPlan(c),
		Planned: c.Total(), Span: c.Span(), WaitWave: waitWave, Gap: c.Gap, Slot: c.Span() + c.Gap,
	}, nil
}

// SchedulePlan validates c and returns its plan.
func SchedulePlan(c schedule.Config) (Plan, error) {
	if err := c.Validate(); err != nil {
		return Plan{}, fmt.Errorf("scheduled plan: %w", err)
	}
	return Plan{
		Shape: results.ShapeScheduled, Group: results.GroupScheduled, Pacer: schedule.NewPlan(c),
		Planned: c.Total(), Span: c.Duration(), Slot: c.Duration(),
	}, nil
}

// ReplayPlan is a trace's rows as a plan: row i sent at its offset (the
// trace already scaled and cut to its window), sized by the row (its
// prompt, its hash blocks, max_tokens its output × factor); duration,
// when positive, cuts it.
func ReplayPlan(t *trace.Trace, duration time.Duration, factor float64) (Plan, error) {
	shapes, err := TraceShapes(t, factor)
	if err != nil {
		return Plan{}, err
	}
	r, err := schedule.NewReplay(t.Offsets(), duration)
	if err != nil {
		return Plan{}, fmt.Errorf("replayed plan: %w", err)
	}
	span := r.Duration()
	return Plan{
		Shape: results.ShapeScheduled, Group: results.GroupScheduled, Pacer: r,
		Planned: r.Total(), Span: span, Slot: span, Shapes: shapes,
	}, nil
}
