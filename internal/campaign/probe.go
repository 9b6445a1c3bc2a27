package campaign

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
)

// ProbeSpacing is the time between the refill probe's sends: 40 a
// second, faster than the deployments the main job overruns drain (the
// served targets of bench/twin-unseen.sh drain 5 to 15 of its requests a
// second), so the probe fills the bucket in a second or less and the
// rest of the allowance's refill hardly moves meanwhile; and more than
// the 20 ms within which fit takes sends for one instant (its admitted
// first), so each send keeps its place.
const ProbeSpacing = 25 * time.Millisecond

// ProbeFactor bounds the refill probe: at most this many times the burst
// plan's wave size, more than a wave meets (a rested deployment admits
// at most its bucket and its whole allowance, which the first wave met).
const ProbeFactor = 2

// RefillProbe is the main job's refill probe: after the plans before it
// end, a rest, then sends ProbeSpacing apart, at most ProbeFactor × the
// burst plan's wave size, until the first refusal (429) comes back. A
// PTU deployment forfeits its burst allowance at a refusal and earns it
// back at allowance ÷ refill a second, so after the rest the probe's
// sends fill the drained bucket and then ride what of the allowance came
// back: the first refused over 100% tells how much (fit reads the
// refill from it: with none back, the refill is at least the rest ×
// allowance ÷ a send's cost; with k sends back, it lies within a factor
// (k+1) ÷ k). The sends after it would tell nothing more and would each
// advise the same wait (one overshoot): a wave of twice the most a burst
// wave admitted refused 58 at 507 ms on served target a, 29% of its
// run's 429s, and moved its Overall p50 from 31 to 83 ms; so the probe
// stops, refusing only what it sent before the first refusal came back.
// rest must be positive and size at least 1.
func RefillProbe(rest time.Duration, size int) (Plan, error) {
	switch {
	case rest <= 0:
		return Plan{}, fmt.Errorf("refill probe: the rest must be positive, not %s", rest)
	case size < 1:
		return Plan{}, fmt.Errorf("refill probe: the wave size must be at least 1, not %d", size)
	}
	n := ProbeFactor * size
	span := rest + time.Duration(n-1)*ProbeSpacing
	p := Plan{
		Shape: results.ShapeBurst, Group: results.GroupRefillProbe, Pacer: &probePacer{rest: rest, n: n},
		Planned: n, Span: span, Slot: span + ProbeSpacing,
	}
	p.Description = fmt.Sprintf("refill probe (group %s): a rest of %s after the plans before it, then requests %s apart until the first 429 comes back: at most %d requests, %s",
		results.GroupRefillProbe, num.About(rest), num.About(ProbeSpacing), n, num.About(span-rest))
	return p, nil
}

// probePacer is the probe's pacer: n sends ProbeSpacing apart from rest
// after the plan's start, ending once a refusal is seen (seeAnswer).
type probePacer struct {
	rest    time.Duration
	n, i    int
	refused atomic.Bool
}

func (p *probePacer) Next() (time.Duration, int, bool) {
	if p.i >= p.n || p.refused.Load() {
		return 0, 0, false
	}
	at := p.rest + time.Duration(p.i)*ProbeSpacing
	p.i++
	return at, 0, true
}

// seeAnswer is told every completed attempt of the plan (RunPlans).
func (p *probePacer) seeAnswer(rec *results.Record) {
	if rec.Status == 429 {
		p.refused.Store(true)
	}
}

// answerPacer is a pacer that ends on what the plan's answers say.
type answerPacer interface{ seeAnswer(*results.Record) }

// RefillChoice is how a main job asks for its refill probe
// (RefillProbe): the rest, and what decides whether the probe runs.
type RefillChoice struct {
	// Rest is the rest before the probe; 0 turns the probe off.
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
	// Start, Shard): each worker would stop at its own share's refusal.
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
// burst plan first), when its most fits in MaxRequests and its span in
// Budget. on is false when the probe is not run; note then says why when
// the caps, not the choice, left it off ("" otherwise). A probe Given
// that cannot run is a *valid.Error.
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
		return refuse("needs the burst plan before it: its wave size bounds the probe")
	case c.Fleet:
		return refuse("goes not with {Start} or {Shard}: each worker would stop at its own share's first refusal")
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
		return Plan{}, false, fmt.Sprintf("refill probe: off: its %d requests more than the plan's %d would pass the bound of %d", probe.Planned, planned, c.MaxRequests), nil
	case c.Budget > 0 && span >= c.Budget:
		if c.Given {
			return Plan{}, false, "", valid.Errorf("Budget", "is %s, but the plan and its refill probe span %s; raise it deliberately if you mean it", c.Budget, span)
		}
		return Plan{}, false, fmt.Sprintf("refill probe: off: its %s after the plan's %s would pass the time cap of %s", num.About(probe.Span), num.About(span-probe.Span), num.About(c.Budget)), nil
	}
	return probe, true, "", nil
}
