package campaign

import (
	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/schedule"
)

// MainPlans is the main job's plans before they are put in order: a
// burst plan, a scheduled plan (either may be left out), the refill
// probe's choice, and the job's caps. Plans puts them in the order
// characterize sends them.
type MainPlans struct {
	Burst *Plan        // nil: no burst plan
	Wave  burst.Config // the burst plan's settings (its waves' size and gap)
	// WaitWave: each wave waits for the one before it to end (burst's
	// own flag).
	WaitWave bool
	// Grow: the burst plan's waves grow to first contact
	// (GrowFirstContact): the default plan's, not a fleet's.
	Grow bool
	// Sched is nil without a scheduled plan; Schedule the settings it
	// was built from.
	Sched    *Plan
	Schedule schedule.Config
	// SizeRamp: the scheduled plan's ramp is sized by the burst plan's
	// waves (SizedByBurst): the default plans', not a fleet's.
	SizeRamp bool
	Refill   RefillChoice
	// MaxRequests and MaxInFlight are the job's caps.
	MaxRequests, MaxInFlight int
}

// Plans is the burst plan, the scheduled plan sized by its waves, and
// the refill probe after them when the choice has it on, the burst
// plan's waves grown within what the plans after it leave of the caps;
// with the probe's note (why it is off, or "").
func (m MainPlans) Plans() (plans []Plan, note string, err error) {
	if m.Burst != nil {
		plans = append(plans, *m.Burst)
	}
	if m.Sched != nil {
		plans = append(plans, *m.Sched)
	}
	probe, on, note, err := m.Refill.Probe(plans)
	if err != nil {
		return nil, "", err
	}
	room := m.MaxRequests
	if on {
		room -= probe.Planned
	}
	if m.SizeRamp && m.Burst != nil && m.Sched != nil {
		plans[1] = SizedByBurst(*m.Sched, m.Schedule, *m.Burst, m.Wave.Size, m.Wave.Gap, room)
	}
	if on {
		plans = append(plans, probe)
	}
	if m.Grow && m.Burst != nil {
		if plans[0], err = GrowFirstContact(m.Wave, m.WaitWave, plans[1:], m.MaxRequests, m.MaxInFlight); err != nil {
			return nil, "", err
		}
	}
	return plans, note, nil
}
