package campaign

import (
	"fmt"
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/dispatch"
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
}

// BurstPlan validates c and returns its plan.
func BurstPlan(c burst.Config, waitWave bool) (Plan, error) {
	if err := c.Validate(); err != nil {
		return Plan{}, fmt.Errorf("burst plan: %w", err)
	}
	return Plan{
		Shape: results.ShapeBurst, Group: results.GroupBurst, Pacer: burst.NewPlan(c),
		Planned: c.Total(), Span: c.Span(), WaitWave: waitWave, Gap: c.Gap,
	}, nil
}

// SchedulePlan validates c and returns its plan.
func SchedulePlan(c schedule.Config) (Plan, error) {
	if err := c.Validate(); err != nil {
		return Plan{}, fmt.Errorf("scheduled plan: %w", err)
	}
	return Plan{
		Shape: results.ShapeScheduled, Group: results.GroupScheduled, Pacer: schedule.NewPlan(c),
		Planned: c.Total(), Span: c.Duration(),
	}, nil
}
