package campaign

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/charplan"
	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
)

// RefillProbe is the main job's refill probe: after the plans before it
// end, a rest, then sends of a u-th of the job's request (its prompt and
// max_tokens ÷ u) charplan.ProbeSpacing ÷ u apart, at most u × charplan.ProbeFactor × the
// burst plan's wave size, until the first refusal (429) comes back; u is
// charplan.ProbeUnits, or fewer where the burst plan's first wave admitted more
// than charplan.ProbeSends ÷ charplan.ProbeUnits (charplan.ProbeUnitsFor). A target whose requests
// cannot be cut (a raw body, a prompts file) is sent the job's requests
// charplan.ProbeSpacing apart (u = 1). A PTU deployment forfeits its burst
// allowance at a refusal and earns it back at allowance ÷ refill a
// second, so after the rest the probe's sends fill the drained bucket and
// then ride what of the allowance came back: the first refused over
// 100% tells how much (fit reads the refill from it: with none back, the
// refill is at least the rest × allowance ÷ a send's cost; with k sends
// back, it lies within a factor (k+1) ÷ k). The sends after it would
// tell nothing more and would each advise the same wait (one overshoot):
// a wave of twice the most a burst wave admitted refused 58 at 507 ms on
// served target a, 29% of its run's 429s, and moved its Overall p50 from
// 31 to 83 ms; so the probe stops, refusing only what it sent before the
// first refusal came back. rest must be positive and size at least 1.
func RefillProbe(rest time.Duration, size int) (Plan, error) {
	switch {
	case rest <= 0:
		return Plan{}, fmt.Errorf("refill probe: the rest must be positive, not %s", rest)
	case size < 1:
		return Plan{}, fmt.Errorf("refill probe: the wave size must be at least 1, not %d", size)
	}
	pp := &probePacer{rest: rest, size: size, n: charplan.ProbeUnits * charplan.ProbeFactor * size, units: charplan.ProbeUnits}
	span := rest + time.Duration(pp.n-1)*pp.spacing()
	p := Plan{
		Shape: results.ShapeBurst, Group: results.GroupRefillProbe, Pacer: pp,
		Planned: pp.n, Span: span, Slot: span + pp.spacing(),
	}
	p.Description = fmt.Sprintf("refill probe (group %s): a rest of %s after the plans before it, then requests of a u-th of the job's prompt and max_tokens %s ÷ u apart until the first 429 comes back, u = %d ÷ what the burst plan's first wave admitted, from 1 to %d (%d if none; 1 if the whole wave, or with a raw body or a prompts file, which cannot be cut): at most %d requests, %s",
		results.GroupRefillProbe, num.About(rest), num.About(charplan.ProbeSpacing), charplan.ProbeSends, charplan.ProbeUnits, charplan.ProbeUnits, pp.n, num.About(span-rest))
	return p, nil
}

// probePacer is the probe's pacer: n sends spacing() apart from rest
// after the plan's start, ending once a refusal is seen (seeAnswer).
// whole turns it to the job's own requests: n ÷ units sends charplan.ProbeSpacing
// apart.
type probePacer struct {
	rest    time.Duration
	size    int // the burst plan's wave size
	n, i    int
	units   int
	refused atomic.Bool
}

func (p *probePacer) spacing() time.Duration { return charplan.ProbeSpacing / time.Duration(p.units) }

// cutTo sends units of a u-th of the job's request: n the bound for
// them (RunPlans, before the plan's first send).
func (p *probePacer) cutTo(u int) {
	p.n, p.units = u*charplan.ProbeFactor*p.size, u
}

// whole sends the job's own requests: a target whose requests cannot be
// cut.
func (p *probePacer) whole() { p.cutTo(1) }

// choose sets the units from the burst plan's first wave's admissions
// (counts, by wave: waveAdmissions; none known, the job's whole
// requests).
func (p *probePacer) choose(counts []int) {
	first := -1
	if len(counts) > 0 {
		first = counts[0]
	}
	p.cutTo(charplan.ProbeUnitsFor(first, p.size))
}

func (p *probePacer) Next() (time.Duration, int, bool) {
	if p.i >= p.n || p.refused.Load() {
		return 0, 0, false
	}
	at := p.rest + time.Duration(p.i)*p.spacing()
	p.i++
	return at, 0, true
}

// sender is s sending the probe's requests: the job's cut into units
// (probeShapes), or, where s cannot cut them (a raw body, a prompts
// file, a sender not the client's) or there is one unit, s itself with
// the pacer turned to the job's whole requests.
func (p *probePacer) sender(s dispatch.Sender) dispatch.Sender {
	if p.units > 1 {
		if c, ok := s.(interface {
			cut(units int) (dispatch.Sender, error)
		}); ok {
			if cs, err := c.cut(p.units); err == nil {
				return cs
			}
		}
	}
	p.whole()
	return s
}

// probeSender is s for plan p (RunPlans): for the refill probe, its
// units chosen from the burst plan's first wave (waves: nil, none
// counted) and s cutting the job's requests into them, and p with its
// Planned their most (u × charplan.ProbeFactor × the wave size).
func probeSender(p Plan, s dispatch.Sender, waves *waveAdmissions) (dispatch.Sender, Plan) {
	pp, ok := p.Pacer.(*probePacer)
	if !ok {
		return s, p
	}
	var counts []int
	if waves != nil {
		counts = waves.counts()
	}
	pp.choose(counts)
	s = pp.sender(s)
	p.Planned = pp.n
	return s, p
}

// probeShapes are the probe's requests: request seq of t with its
// prompt's text and its max_tokens ÷ units, at least 1 each.
type probeShapes struct {
	t     *client.Target
	units int
}

func (s probeShapes) Shape(seq int) client.Shape {
	prompt, maxTokens := s.t.Sizes(seq)
	return client.Shape{PromptTokens: max((prompt-s.t.ChatOverhead())/s.units, 1), MaxTokens: max(maxTokens/s.units, 1)}
}

// LargestPrompt bounds the prompts as the client checks them: the job's
// first request's, which its own checks held within the client's bound.
func (s probeShapes) LargestPrompt() int {
	prompt, _ := s.t.Sizes(0)
	return max(prompt-s.t.ChatOverhead(), 1)
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
