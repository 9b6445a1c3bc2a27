package policylab

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ptuprobe/ptuprobe/internal/policy"
)

// How a recommendation is chosen, per load, fleet size and cap, over the
// grid's conditions (grid.go; the given conditions alone without one):
//
//  1. per condition, the best equivalents: the eligible rows whose
//     measure is equivalent to the condition's best, tested (TOST: the
//     90% interval of the paired difference lies within ±equivalenceMargin
//     points), not assumed from a difference that is merely unclear;
//  2. the smallest worst-case regret: each row's largest shortfall, in
//     points, against the best of any condition (worst_regret_pct);
//  3. among the rows within equivalenceMargin of that which step 4's test
//     keeps, the fewest attempts per offered request (within
//     loadTolerance), then the simpler policy (simplicity);
//  4. a policy that retries is recommended only where it answers at least
//     retryGain points more than none at the given conditions, or is an
//     equivalent of none's with no more attempts per request: the test is
//     applied to each of step 3's rows, before step 3 picks the lightest,
//     so that a row that passes is never set aside for a lighter one that
//     fails. Where none of step 3's rows passes: none, or the lightest of
//     its equivalents with no more attempts per request.
//
// The measure counts every offered request: one refused, given up or
// answered past the SLO is a miss, so latency is judged over what was
// offered, never over the survivors.

// equivalenceMargin is the margin, in points of the measure, within which
// two rows are equivalent (TOST), and within which two worst-case regrets
// are the same.
const equivalenceMargin = 2.0

// retryGain is the gain over none, in points at the given conditions, a
// retrying policy must show to be recommended.
const retryGain = 2.0

// tQuantile95 is Student's t 95% quantile for 1 to 30 degrees of freedom:
// a two one-sided tests' 90% interval.
var tQuantile95 = [30]float64{
	6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812,
	1.796, 1.782, 1.771, 1.761, 1.753, 1.746, 1.740, 1.734, 1.729, 1.725,
	1.721, 1.717, 1.714, 1.711, 1.708, 1.706, 1.703, 1.701, 1.699, 1.697,
}

// tost is the 90% interval of the paired differences a[k] − b[k] (the
// two one-sided tests at 5%), repeats with an unknown value left out.
func tost(a, b []float64) interval {
	var d []float64
	for k := range min(len(a), len(b)) {
		if a[k] >= 0 && b[k] >= 0 {
			d = append(d, a[k]-b[k])
		}
	}
	iv := meanInterval(d)
	if iv.n < 2 {
		return iv
	}
	ss := 0.0
	for _, x := range d {
		ss += (x - iv.mean) * (x - iv.mean)
	}
	t := 1.645
	if iv.n-1 <= len(tQuantile95) {
		t = tQuantile95[iv.n-2]
	}
	h := t * math.Sqrt(ss/float64(iv.n-1)/float64(iv.n))
	iv.lo, iv.hi = iv.mean-h, iv.mean+h
	return iv
}

// equivalent reports whether a's and b's measures are equivalent: the
// 90% interval of their paired difference within ±equivalenceMargin
// (with at least two repeats; a row is equivalent to itself).
func equivalent(a, b *Row) bool {
	if a == b {
		return true
	}
	d := tost(a.shares(), b.shares())
	return d.n >= 2 && d.lo > -equivalenceMargin && d.hi < equivalenceMargin
}

// retries reports whether a row's policy retries at all.
func retries(r *Row) bool { return !(r.Traits.Attempts == 1 || r.MaxAttempts == 1) }

// eligible: a row the lab's fairness rules let it recommend for one
// deployment: under the fair caps (or a policy that never retries, whose
// caps are no advantage: none), without a second deployment's capacity.
// It is not a verdict; every none row is eligible.
func eligible(r *Row) bool {
	return !r.Fallback && (!r.OwnCaps || !retries(r))
}

// candidate: an eligible row with requests offered, which the choice
// weighs.
func candidate(r *Row) bool { return eligible(r) && r.Offered > 0 }

// simplicity orders policies from the simplest: none, honour, honour
// with jitter, then whatever adds state or a wait of its own (budgets,
// quotas, throttles, pacing, coordination, a second owner, a redirect),
// read from the policy's traits.
func simplicity(r *Row) int {
	t := r.Traits
	switch {
	case !retries(r):
		return 0
	case t.Extras || t.Owners > 1 || t.Redirect != policy.NeverRedirect || t.Advice != policy.HonourAdvice || r.Coordinated:
		return 3
	case t.Jitter > 0:
		return 2
	}
	return 1
}

// grade is a row's standing over the grid's conditions, under its group.
type grade struct {
	// Eligible: see eligible.
	Eligible bool
	// Graded: a candidate measured at every condition of the grid.
	Graded bool
	// HoldsIn is the fraction of the conditions in which the row is among
	// that condition's best equivalents; WorstRegret its largest
	// shortfall, in points, against a condition's best (both -1 when not
	// graded).
	HoldsIn, WorstRegret float64
}

// condView is one condition of the grid seen from one group: its
// candidates, its best, and its best's equivalents.
type condView struct {
	name string
	rows []*Row
	// coordinated are the condition's coordinated rows, graded against
	// the independent rows' best but never in rows.
	coordinated []*Row
	lead        *Row
	eq          []*Row
}

// row is the condition's row of the policy labelled policy, or nil.
func (c *condView) row(label string) *Row {
	for _, r := range append(slices.Clip(c.rows), c.coordinated...) {
		if r.Policy == label {
			return r
		}
	}
	return nil
}

// inGroup reports whether a row measured at a condition belongs to g:
// its load and fleet size, and its cap (a row with caps of its own is in
// both caps' groups).
func (g *verdictGroup) inGroup(r *Row) bool {
	return r.Load == g.Load && r.Clients == g.Clients && !r.Coordinated && (r.SDKCap == g.SDKCap || r.OwnCaps)
}

// views are the group's conditions: the given one (its Ranked rows), then
// each of the sweep's grid conditions, with their candidates.
func (g *verdictGroup) views(s *Sweep) []condView {
	given := condView{name: givenCondition}
	for i := range g.Ranked {
		if r := &g.Ranked[i].Row; candidate(r) {
			given.rows = append(given.rows, r)
		}
	}
	for i := range g.Coordinated {
		given.coordinated = append(given.coordinated, &g.Coordinated[i].Row)
	}
	out := []condView{given}
	for _, name := range s.Conditions {
		if name == givenCondition {
			continue
		}
		v := condView{name: name}
		for i := range s.Grid {
			gr := &s.Grid[i]
			if gr.Condition != name || !candidate(&gr.Row) {
				continue
			}
			if g.inGroup(&gr.Row) {
				v.rows = append(v.rows, &gr.Row)
			} else if c := gr.Row; c.Coordinated && c.Load == g.Load && c.Clients == g.Clients && (c.SDKCap == g.SDKCap || c.OwnCaps) {
				v.coordinated = append(v.coordinated, &gr.Row)
			}
		}
		out = append(out, v)
	}
	for i := range out {
		v := &out[i]
		if len(v.rows) == 0 {
			continue
		}
		v.lead = slices.MaxFunc(v.rows, func(a, b *Row) int { return cmp.Compare(a.SuccessInSLOPct, b.SuccessInSLOPct) })
		// MaxFunc keeps the first of equal rows: the lead is the first in
		// the rows' order among the highest.
		for _, r := range v.rows {
			if r.SuccessInSLOPct > v.lead.SuccessInSLOPct {
				v.lead = r
			}
		}
		v.eq = filter(v.rows, func(r *Row) bool { return equivalent(v.lead, r) })
	}
	return out
}

// grade fills each ranked (and coordinated) row's Grade from the
// group's conditions.
func (g *verdictGroup) grade(views []condView) {
	for i := range g.Ranked {
		gradeOne(&g.Ranked[i], views)
	}
	for i := range g.Coordinated {
		gradeOne(&g.Coordinated[i], views)
	}
}

// gradeOne fills p's Grade: measured at every condition, its share of
// them among the best equivalents and its largest shortfall.
func gradeOne(p *placed, views []condView) {
	p.grade = grade{Eligible: eligible(&p.Row), HoldsIn: -1, WorstRegret: -1}
	if !candidate(&p.Row) {
		return
	}
	holds, regret, all := 0, 0.0, true
	for _, v := range views {
		r := v.row(p.Policy)
		if r == nil || v.lead == nil {
			all = false
			break
		}
		if slices.Contains(v.eq, r) || r.Coordinated && equivalent(v.lead, r) {
			holds++
		}
		regret = max(regret, v.lead.SuccessInSLOPct-r.SuccessInSLOPct)
	}
	if all {
		p.Graded, p.HoldsIn, p.WorstRegret = true, float64(holds)/float64(len(views)), regret
	}
}

// lightest is, of rows, the one with the fewest attempts per offered
// request — those within loadTolerance of the fewest count as as few —
// then the simplest, then the first.
func lightest(rows []*Row) *Row {
	if len(rows) == 0 {
		return nil
	}
	low := slices.MinFunc(rows, func(a, b *Row) int { return cmp.Compare(a.AttemptsPerRequest, b.AttemptsPerRequest) }).AttemptsPerRequest
	few := filter(rows, func(r *Row) bool { return r.AttemptsPerRequest <= low*(1+loadTolerance) })
	return slices.MinFunc(few, func(a, b *Row) int { return cmp.Compare(simplicity(a), simplicity(b)) })
}

// reference is a condition's row of none (or, without it, of an eligible
// policy that never retries): what a retrier must beat.
func reference(rows []*Row) *Row {
	var other *Row
	for _, r := range rows {
		if !retries(r) {
			if r.Name == "none" {
				return r
			}
			if other == nil {
				other = r
			}
		}
	}
	return other
}

// passes is step 4's test of one row at a condition whose reference is
// ref: a row that does not retry, that answers at least retryGain points
// more than ref, or that is ref's equivalent with no more attempts per
// request passes; it says which, or why not.
func passes(r, ref *Row) (bool, string) {
	switch {
	case !retries(r):
		return true, r.Policy + " does not retry: kept"
	case ref == nil:
		return true, r.Policy + " retries; none was not run, so it is not checked against none: kept"
	}
	gain := r.SuccessInSLOPct - ref.SuccessInSLOPct
	switch {
	case gain >= retryGain:
		return true, fmt.Sprintf("%s answers %s more than %s (at least %s): kept", r.Policy, pp(gain), ref.Policy, pp(retryGain))
	case equivalent(ref, r) && r.AttemptsPerRequest <= ref.AttemptsPerRequest:
		return true, fmt.Sprintf("%s retries and answers %s against %s, its equivalent with no more attempts per request (%s against %s): kept",
			r.Policy, pp(gain), ref.Policy, ratio(r.AttemptsPerRequest), ratio(ref.AttemptsPerRequest))
	}
	return false, fmt.Sprintf("%s retries and answers %s against %s (less than %s more): set aside", r.Policy, pp(gain), ref.Policy, pp(retryGain))
}

// gainOrNone is steps 3 and 4 at one condition whose rows are rows: of
// step 3's candidates cands, those step 4's test keeps (passes), and of
// them the lightest; when it keeps none, the reference, or the lightest
// of its equivalents with no more attempts per request. It returns the
// choice, the rows it was chosen among, and step 4's sentence.
func gainOrNone(cands, rows []*Row) (*Row, []*Row, string) {
	if len(cands) == 0 {
		return nil, nil, ""
	}
	ref := reference(rows)
	var kept []*Row
	var said []string
	for _, r := range cands {
		ok, why := passes(r, ref)
		if ok {
			kept = append(kept, r)
		}
		said = append(said, why)
	}
	why := strings.Join(said, "; ")
	if len(kept) > 0 {
		return lightest(kept), kept, why
	}
	alts := filter(rows, func(r *Row) bool {
		return r == ref || equivalent(ref, r) && r.AttemptsPerRequest <= ref.AttemptsPerRequest
	})
	alt := lightest(alts)
	return alt, alts, fmt.Sprintf("%s; none of them kept: the lightest of %s and its equivalents with no more attempts per request, %s", why, ref.Policy, alt.Policy)
}

// choose picks the group's recommendation over its conditions (the four
// steps), sets Steps to name each and Flips to the conditions whose own
// choice differs; it returns the pick's index in Ranked, or -1 and why.
func (g *verdictGroup) choose(views []condView) (int, string) {
	ranked := g.Ranked
	g.conditions = len(views)
	if len(ranked) > 0 && ranked[0].Repeats < minRepeats {
		return -1, fmt.Sprintf("%d %s: a recommendation needs at least %d, so that a difference has an interval (--repeat).",
			ranked[0].Repeats, plural(ranked[0].Repeats, "repeat", "repeats"), minRepeats)
	}
	var graded []*Row
	at := map[*Row]int{}
	for i := range ranked {
		if ranked[i].Graded {
			graded = append(graded, &ranked[i].Row)
			at[&ranked[i].Row] = i
		}
	}
	if len(graded) == 0 {
		return -1, "no policy under the fair caps (on one deployment) measured at every condition to recommend."
	}
	var eqs []string
	for _, v := range views {
		var n []string
		for _, r := range v.eq {
			n = append(n, r.Policy)
		}
		eqs = append(eqs, v.name+": "+strings.Join(n, ", "))
	}
	g.Steps = append(g.Steps, "(1) best equivalents per condition (TOST ±"+num2(equivalenceMargin)+" points): "+strings.Join(eqs, "; "))
	regret := func(r *Row) float64 { return ranked[at[r]].WorstRegret }
	least := slices.MinFunc(graded, func(a, b *Row) int { return cmp.Compare(regret(a), regret(b)) })
	g.Steps = append(g.Steps, fmt.Sprintf("(2) smallest worst-case regret: %s, %s points", least.Policy, num2(regret(least))))
	near := filter(graded, func(r *Row) bool { return regret(r) <= regret(least)+equivalenceMargin })
	final, kept, why := gainOrNone(near, views[0].rows)
	g.kept = nil
	for _, r := range kept {
		g.kept = append(g.kept, r.Policy)
	}
	three := fmt.Sprintf("(3) within %s points of it: %s; ", num2(equivalenceMargin), policyLabels(near))
	if slices.Contains(near, final) {
		three += fmt.Sprintf("of those step (4) keeps, the fewest attempts per request, then the simpler: %s (%s attempts per request)", final.Policy, ratio(final.AttemptsPerRequest))
	} else {
		three += "step (4) keeps none of them"
	}
	g.Steps = append(g.Steps, three)
	g.Steps = append(g.Steps, "(4) against none at the given conditions, on each of step (3)'s rows: "+why)
	if !final.Steady {
		return -1, fmt.Sprintf("the measure of %s (%s between the window's halves) still moved within the window, and it is the choice: a longer --duration could rank it otherwise.", final.Policy, pp(final.DriftPts))
	}
	for _, v := range views[1:] {
		if v.lead == nil {
			continue
		}
		local, _, _ := gainOrNone(v.eq, v.rows)
		if local != nil && local.Policy != final.Policy {
			g.Flips = append(g.Flips, fmt.Sprintf("%s: %s", v.name, local.Policy))
		}
	}
	i, ok := at[final]
	if !ok { // the reference was not graded: find it among the ranked
		for k := range ranked {
			if &ranked[k].Row == final {
				i, ok = k, true
			}
		}
	}
	if !ok {
		return -1, "the choice was not among the rows ranked."
	}
	return i, ""
}

// policyLabels are rows' policies, comma-separated.
func policyLabels(rows []*Row) string {
	var n []string
	for _, r := range rows {
		n = append(n, r.Policy)
	}
	return strings.Join(n, ", ")
}

// num2 writes v with up to 2 decimals.
func num2(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}

// flipLine names the grid's conditions under which the recommendation
// flips, and to what; "" without a recommendation or a grid.
func (g *verdictGroup) flipLine() string {
	if len(g.Recommended) == 0 || g.conditions < 2 {
		return ""
	}
	if len(g.Flips) == 0 {
		return "It holds under every condition of the grid."
	}
	return "It flips under " + strings.Join(g.Flips, "; ") + "."
}
