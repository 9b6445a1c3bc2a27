package campaign

import (
	"fmt"
	"math"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
)

// ProbeMargin is the share of the most first attempts a wave of the
// burst plan admitted that the refill probe's wave sends past it
// (RefillSizing). A rested deployment admits at most its bucket and its
// whole burst allowance, which is what the burst plan's first wave met
// when it refused any; after the rest the probe meets the bucket and
// only what of the allowance came back, so that many and a quarter
// more (at least 2) overrun both, and the probe's first send refused
// over 100% bounds the refill. Each refusal past it says nothing more
// and advises the same wait (one overshoot): served target a's probe
// of twice the most (78) refused 58 at 507 ms, 29% of its run's 429s,
// which moved its Overall p50 from 31 to 83 ms.
const ProbeMargin = 0.25

// ProbeFactor is how many times the burst plan's wave size the refill
// probe sends when a wave admitted every send: the bucket and the
// allowance were not found, so the probe is larger than any wave.
const ProbeFactor = 2

// RefillSizing sizes the main job's refill probe from the burst plan run
// before it: after the plans before it end, a rest of Rest, then one
// wave of the most first attempts a wave of the burst plan admitted
// (2xx) and ProbeMargin of it more (at least 2 more), or ProbeFactor ×
// the wave's Size when a wave admitted all of its sends or none
// admitted any. The rest is what the probe reads: a PTU deployment
// forfeits its burst allowance at a refusal and earns it back at
// allowance ÷ refill a second, so the sends the probe's wave admits over
// 100% say how much came back in the rest. With none back, the refill
// is at least Rest × allowance ÷ a send's cost; with k sends back, it
// lies within a factor (k+1) ÷ k. docs/fit.md has the numbers.
type RefillSizing struct {
	Rest time.Duration // the rest before the wave, from the plan before's last answer
	Size int           // the burst plan's wave size
}

// Most is the most requests the probe sends.
func (s RefillSizing) Most() int { return ProbeFactor * s.Size }

// MostRequests is Most (Sizer).
func (s RefillSizing) MostRequests() int { return s.Most() }

// Wave is the probe's wave size given the first attempts each wave of
// the burst plan admitted (by wave, from the first).
func (s RefillSizing) Wave(admitted []int) int {
	most := 0
	for _, a := range admitted {
		most = max(most, a)
	}
	if most == 0 || most >= s.Size {
		return s.Most()
	}
	return min(most+max(2, int(math.Ceil(ProbeMargin*float64(most)))), s.Most())
}

// Plan is the probe for the burst plan's admissions by wave.
func (s RefillSizing) Plan(admitted []int) (Plan, error) {
	return s.plan(s.Wave(admitted))
}

// RefillProbe is the main job's refill probe at its largest, sized by
// RunPlans from the burst plan before it (RefillSizing); rest must be
// positive and size at least 1.
func RefillProbe(rest time.Duration, size int) (Plan, error) {
	return RefillSizing{Rest: rest, Size: size}.plan(ProbeFactor * size)
}

func (s RefillSizing) plan(n int) (Plan, error) {
	switch {
	case s.Rest <= 0:
		return Plan{}, fmt.Errorf("refill probe: the rest must be positive, not %s", s.Rest)
	case s.Size < 1:
		return Plan{}, fmt.Errorf("refill probe: the wave size must be at least 1, not %d", s.Size)
	}
	p := Plan{
		Shape: results.ShapeBurst, Group: results.GroupRefillProbe, Pacer: &restThenWave{rest: s.Rest, size: n},
		Planned: n, Span: s.Rest, Slot: s.Rest, Sizing: s,
	}
	p.Description = fmt.Sprintf("refill probe (group %s): a rest of %s after the plans before it, then one wave of the most first attempts a burst wave admitted and %g%% more (%d when a wave admitted all or none did): at most %d requests",
		results.GroupRefillProbe, num.About(s.Rest), 100*ProbeMargin, s.Most(), s.Most())
	return p, nil
}

// restThenWave is the probe's pacer: size sends at one instant, rest
// after the plan's start.
type restThenWave struct {
	rest    time.Duration
	size, i int
}

func (w *restThenWave) Next() (time.Duration, int, bool) {
	if w.i >= w.size {
		return 0, 0, false
	}
	w.i++
	return w.rest, 0, true
}

// RefillChoice is how a main job asks for its refill probe
// (RefillSizing): the rest, and what decides whether the probe runs.
type RefillChoice struct {
	// Rest is the rest before the probe's wave; 0 turns the probe off.
	Rest time.Duration
	// Given: the rest was asked for by name, so the probe follows any
	// burst plan, and a job it cannot follow is refused. Otherwise it
	// follows only the default plans (Named false) and is left off, with
	// a note, where the caps leave no room for it.
	Given bool
	// Named: the burst or the scheduled plan was given by its settings
	// (sizes, waves, gaps, phases, rates, a trace): the plan keeps the
	// meaning its settings give it, without a probe unless Given.
	Named bool
	// Fleet: the plans go on a common timeline or in shares (Options'
	// Start, Shard), which send a plan as given: the probe is sized by
	// this worker's own waves.
	Fleet bool
	// Group: every row's group label is set (Options.Group), which
	// would put the probe's rows in the burst plan's timeline.
	Group bool
	// Size is the burst plan's wave size.
	Size int
	// MaxRequests and Budget are the job's caps (Options').
	MaxRequests int
	Budget      time.Duration
}

// Probe is the refill probe to append to plans (which run before it, the
// burst plan first), when its most fits in MaxRequests and its rest in
// Budget. on is false
// when the probe is not run; note then says why when the caps, not the
// choice, left it off ("" otherwise). A probe Given that cannot run is a
// *valid.Error naming RefillRest.
func (c RefillChoice) Probe(plans []Plan) (p Plan, on bool, note string, err error) {
	if c.Rest < 0 {
		return Plan{}, false, "", valid.Errorf("RefillRest", "must not be negative (0 turns the probe off)")
	}
	if c.Rest == 0 || c.Named && !c.Given {
		return Plan{}, false, "", nil
	}
	refuse := func(why string) (Plan, bool, string, error) {
		if c.Given {
			return Plan{}, false, "", valid.Errorf("RefillRest", "%s", why)
		}
		return Plan{}, false, "", nil
	}
	switch {
	case len(plans) == 0 || plans[0].Shape != results.ShapeBurst:
		return refuse("needs the burst plan before it: its waves size the probe")
	case c.Fleet:
		return refuse("goes not with {Start} or {Shard}: each worker would size the probe by its own share's waves")
	case c.Group:
		return refuse("goes not with {Group}: the probe's rows need a group of their own")
	}
	probe, err := RefillProbe(c.Rest, c.Size)
	if err != nil {
		return Plan{}, false, "", valid.Errorf("RefillRest", "%v", err)
	}
	planned, span := 0, probe.Span
	for _, q := range plans {
		planned += q.Planned
		span += q.Span
	}
	switch {
	case c.MaxRequests > 0 && planned+probe.Planned > c.MaxRequests:
		if c.Given {
			return Plan{}, false, "", valid.Errorf("MaxRequests", "is %d, but the plan and its refill probe have %d requests; raise it deliberately if you mean it", c.MaxRequests, planned+probe.Planned)
		}
		return Plan{}, false, fmt.Sprintf("refill probe: off: %d requests more than the plan's %d would pass the bound of %d", probe.Planned, planned, c.MaxRequests), nil
	case c.Budget > 0 && span >= c.Budget:
		if c.Given {
			return Plan{}, false, "", valid.Errorf("Budget", "is %s, but the plan and its refill probe's rest span %s; raise it deliberately if you mean it", c.Budget, span)
		}
		return Plan{}, false, fmt.Sprintf("refill probe: off: its rest of %s after the plan's %s would pass the time cap of %s", num.About(c.Rest), num.About(span-c.Rest), num.About(c.Budget)), nil
	}
	return probe, true, "", nil
}
