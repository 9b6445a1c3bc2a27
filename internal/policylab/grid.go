package policylab

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/ptuprobe/ptuprobe/internal/policy"
	"github.com/ptuprobe/ptuprobe/sim"
)

// The grid of what the user cannot know. A recommendation made at one
// set of conditions (the defaults, or what the flags fix) is only as good
// as those conditions are the user's: the cost of a refusal, how the
// requests arrive, the latency budget and the deployment's model are
// rarely known. Around the conditions given, the lab varies one unknown
// at a time (not a full factorial: about 8 conditions) and runs the
// finalists there — the policies not clearly beaten at the given
// conditions, with fewer repeats — or, with GridFull, every policy. A
// flag that fixes an unknown (Unknowns) removes it from the grid. The
// verdict (choose.go) then prefers the policy whose worst shortfall over
// the grid is smallest, and names the conditions where the choice flips.

// The grid's modes (Lab.Grid).
const (
	GridOff       = "off"       // the given conditions alone (the zero value too)
	GridFinalists = "finalists" // the policies not clearly beaten at the given conditions
	GridFull      = "full"      // every policy
)

// givenCondition names the conditions given, the first of the grid's.
const givenCondition = "given"

// gridRefusalCosts are the refusal costs the grid tries (sim's
// RefusalCost): free, 1% and 5% of a request.
var gridRefusalCosts = []float64{0, 0.01, 0.05}

// gridArrivals are the arrival processes the grid tries beside the given
// one (ParseArrival's grammar).
var gridArrivals = []string{arrivalPoisson, "gamma:2", arrivalWaves}

// gridModels are the simulator profiles the grid tries when the user gave
// none: the PTU model and the one fitted to the published waits.
var gridModels = []string{sim.ProfilePTU, "documents"}

// Unknowns says which of the grid's unknowns the user fixed (a flag:
// --sim-refusal-cost, --arrival, --retry-budget, --sim-profile): the
// grid does not vary those.
type Unknowns struct {
	RefusalCost, Arrival, Budget, Model bool
}

// condition is one point of the grid: its name, and how it changes a
// lab from the given conditions.
type condition struct {
	name  string
	apply func(*Lab) error
}

// gridRepeat is the repeats of a grid condition's runs: the fewest a
// difference has an interval from.
const gridRepeat = minRepeats

// gridOn reports whether the lab runs a grid: asked for, on the
// embedded simulator's virtual clock.
func (l *Lab) gridOn() bool {
	return (l.Grid == GridFinalists || l.Grid == GridFull) && l.Named == nil && l.Coordinate == nil
}

// conditions are the grid's points other than the given one, in order:
// the refusal costs, the arrivals, the budget, the model — each only
// when the user did not fix it and it differs from the given.
func (l *Lab) conditions() []condition {
	var out []condition
	if !l.Fixed.RefusalCost {
		for _, f := range gridRefusalCosts {
			if f == l.Sim.RefusalCost {
				continue
			}
			out = append(out, condition{fmt.Sprintf("refusal cost %s%%", trimFloat(100*f)), func(c *Lab) error {
				c.Sim.RefusalCost = f
				return nil
			}})
		}
	}
	if !l.Fixed.Arrival {
		for _, a := range gridArrivals {
			arr, err := ParseArrival(a)
			if err != nil || arr.Kind == l.Arrival.Kind && arr.CV == l.Arrival.CV {
				continue
			}
			out = append(out, condition{"arrivals " + a, func(c *Lab) error {
				c.Arrival = arr
				return nil
			}})
		}
	}
	if !l.Fixed.Budget && l.SLO > 0 && l.SLO != l.Budget {
		out = append(out, condition{"budget " + secs(l.SLO) + " (the SLO)", func(c *Lab) error {
			c.Budget = c.SLO
			return nil
		}})
	}
	if !l.Fixed.Model {
		given := l.Sim.ProfileSource
		if given == "" {
			given = l.Sim.Profile
		}
		for _, m := range gridModels {
			if m == given {
				continue
			}
			out = append(out, condition{"model " + m, func(c *Lab) error {
				p, _, err := sim.OpenBuiltin(m)
				if err != nil {
					return err
				}
				base := c.Sim
				next := p.Config
				next.Seed, next.TimeScale, next.Deployment, next.Tokens = base.Seed, base.TimeScale, base.Deployment, base.Tokens
				next.MaxKeys, next.RefusalCost, next.Clock = base.MaxKeys, base.RefusalCost, base.Clock
				next.ProfileSource = m
				c.Sim = next
				return nil
			}})
		}
	}
	return out
}

// trimFloat writes v with no trailing zeros: 1, 0.5.
func trimFloat(v float64) string { return fmt.Sprintf("%g", v) }

// finalists are, per load, the policies of the sweep's rows not clearly
// beaten in some group of that load (of the lab's cap or the SDKs'):
// neither clearly below the best on the measure, nor as good on it as
// another (at least its mean, or equivalent) and clearly heavier on the
// deployment than that one; and none, the reference every retrier is
// judged against. By name, in the lab's order.
func finalists(sw Sweep, specs []string) map[string][]string {
	keep := map[string]map[string]bool{}
	for _, g := range judge(sw) {
		var rows []*Row
		for i := range g.Ranked {
			if r := &g.Ranked[i].Row; candidate(r) {
				rows = append(rows, r)
			}
		}
		if keep[g.Load] == nil {
			keep[g.Load] = map[string]bool{}
		}
		for _, r := range undominated(notBeaten(rows)) {
			keep[g.Load][r.Name] = true
		}
	}
	out := map[string][]string{}
	for load, k := range keep {
		for _, n := range specs {
			if k[n] || n == "none" {
				out[load] = append(out[load], n)
			}
		}
	}
	return out
}

// undominated are the rows no other row of rows beats on the load: one
// whose measure is at least as high (or equivalent) with clearly fewer
// attempts per offered request.
func undominated(rows []*Row) []*Row {
	return filter(rows, func(r *Row) bool {
		for _, q := range rows {
			if q == r || !(q.SuccessInSLOPct >= r.SuccessInSLOPct || equivalent(q, r)) {
				continue
			}
			if d := paired(r.loads(), q.loads()); d.excludesZero() && d.mean >= loadTolerance*q.AttemptsPerRequest {
				return false
			}
		}
		return true
	})
}

// notBeaten are the rows whose measure is not clearly below the highest
// (best's first step).
func notBeaten(rows []*Row) []*Row {
	if len(rows) == 0 {
		return nil
	}
	lead := slices.MaxFunc(rows, func(a, b *Row) int {
		if a.SuccessInSLOPct < b.SuccessInSLOPct {
			return -1
		}
		if a.SuccessInSLOPct > b.SuccessInSLOPct {
			return 1
		}
		return 0
	})
	return filter(rows, func(r *Row) bool {
		d := paired(lead.shares(), r.shares())
		return r == lead || !(d.excludesZero() && d.mean >= successTolerance*lead.SuccessInSLOPct)
	})
}

// runGrid runs the grid's conditions around the given sweep sw, each a
// lab of its own per load (the finalists, or every policy, gridRepeat
// repeats), all at once on the machine's cores (their runs share one
// token per core), and adds their rows to sw.Grid in the conditions'
// order. A condition the lab cannot play (its settings refused) is left
// out and named in sw.GridSkipped.
func runGrid(ctx context.Context, l Lab, sw *Sweep) error {
	var names []string
	for _, s := range l.Policies {
		names = append(names, s.Name)
	}
	perLoad := map[string][]string{}
	for _, ld := range l.Loads {
		perLoad[ld.Text] = names
	}
	if l.Grid != GridFull {
		perLoad = finalists(*sw, names)
	}
	sw.Conditions = []string{givenCondition}
	sw.GridMode = l.Grid
	type sub struct {
		cond int
		lab  Lab
		got  Sweep
		err  error
	}
	conds := l.conditions()
	skipped := make([]error, len(conds))
	var subs []*sub
	for i, c := range conds {
		for _, ld := range l.Loads {
			lab := l
			lab.Grid, lab.Progress, lab.Repeat, lab.Loads = GridOff, nil, min(gridRepeat, max(l.Repeat, 1)), []Load{ld}
			lab.Policies = slices.DeleteFunc(slices.Clone(l.Policies), func(s policy.Spec) bool { return !slices.Contains(perLoad[ld.Text], s.Name) })
			if len(lab.Policies) == 0 {
				continue
			}
			if err := c.apply(&lab); err != nil {
				skipped[i] = err
				break
			}
			if err := lab.Validate(); err != nil {
				skipped[i] = err
				break
			}
			subs = append(subs, &sub{cond: i, lab: lab})
		}
	}
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for _, s := range subs {
		if skipped[s.cond] != nil {
			continue
		}
		wg.Go(func() { s.got, s.err = runOnce(ctx, s.lab, sem) })
	}
	wg.Wait()
	for i, c := range conds {
		if skipped[i] != nil {
			sw.GridSkipped = append(sw.GridSkipped, c.name+": "+skipped[i].Error())
			continue
		}
		var rows []gridRow
		for _, s := range subs {
			if s.cond != i {
				continue
			}
			if s.err != nil {
				return s.err
			}
			for _, r := range s.got.Rows {
				rows = append(rows, gridRow{Condition: c.name, Row: r})
			}
		}
		sw.Conditions = append(sw.Conditions, c.name)
		sw.Grid = append(sw.Grid, rows...)
	}
	return nil
}

// gridRow is a row measured at one of the grid's conditions.
type gridRow struct {
	Condition string
	Row       Row
}

// gridLine is the method's line on the grid: its conditions, which
// policies ran there, and those left out.
func gridLine(s Sweep) string {
	if len(s.Conditions) == 0 {
		return "Grid: none (the given conditions alone; --grid off, or a lab on the wall clock): holds_in and worst_regret_pct are over the given conditions."
	}
	who := "the finalists (per load, the policies not clearly beaten at the given conditions, and none)"
	if s.GridMode == GridFull {
		who = "every policy"
	}
	line := fmt.Sprintf("Grid: around the given conditions, one unknown varied at a time (a flag that fixes one removes it): %s; %s ran there, %d repeats each. holds_in is the share of these conditions in which a row is among the best equivalents, worst_regret_pct its largest shortfall (policies-grid.csv).",
		strings.Join(s.Conditions, ", "), who, gridRepeat)
	if len(s.GridSkipped) > 0 {
		line += " Left out: " + strings.Join(s.GridSkipped, "; ") + "."
	}
	return line
}
