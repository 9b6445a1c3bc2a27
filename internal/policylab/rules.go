package policylab

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/internal/policy"
)

// rulePart is one part of the documents' rule and the comparison that tests
// it, on the verdict's own order (compare): the measure, the latency
// guard, the load, the p99 — never on 429s alone.
type rulePart struct {
	Key   string // "a" … "e"
	Title string // "one owner"
	judge func(g *verdictGroup) (findingOutcome, string)
}

// ruleParts are the documented rule's parts, in the documents' order.
var ruleParts = []rulePart{
	{"a", "one owner", judgeOneOwner},
	{"b", "honour the header", judgeHonor},
	{"c", "jitter de-synchronizes the fleet", judgeJitter},
	{"d", "redirect only when the latency budget requires it", judgeRedirect},
	{"e", "give up in a controlled way", judgeGiveUp},
}

// versus is the verdict's order between the rule's preferred row p and
// the other row o, as an Outcome.
func versus(p, o *Row) findingOutcome {
	switch c := compare(p, o); {
	case c < 0:
		return confirmed
	case c > 0:
		return contradicted
	}
	return noClearDifference
}

// against says what two rows measured, for a rule's sentence: "p: 33.2%
// within the SLO, 2.69 attempts per request, p99 2,481 ms; o: …".
func against(p, o *Row) string {
	return fmt.Sprintf("%s: %s; %s: %s", p.Policy, briefly(p), o.Policy, briefly(o))
}

func briefly(r *Row) string {
	return fmt.Sprintf("%s within the SLO, %s attempts per request, p99 %s", pct(r.SuccessInSLOPct), ratio(r.AttemptsPerRequest), millis(r.SuccessP99MS))
}

func absent(names ...string) (findingOutcome, string) {
	return notTested, strings.Join(names, " and ") + " did not run."
}

// where is the group's best-ranked row whose traits meet want, or nil.
func (g *verdictGroup) where(want func(t policy.Traits) bool) *Row {
	for i := range g.Ranked {
		if want(g.Ranked[i].Traits) {
			return &g.Ranked[i].Row // Ranked is best first
		}
	}
	return nil
}

// The rows the rules compare, by what the policies do.
var (
	// stackedSDK models an application's retries around an SDK's: two
	// nested owners.
	stackedSDK = func(t policy.Traits) bool { return t.Owners > 1 }
	// plainHonour honours the header, its jitter aside, and adds nothing;
	// withoutJitter is one of them that draws no jitter.
	plainHonour   = func(t policy.Traits) bool { return t.PlainHonour() && t.Attempts > 1 }
	withoutJitter = func(t policy.Traits) bool { return plainHonour(t) && t.Jitter == 0 }
	withJitter    = func(t policy.Traits) bool { return plainHonour(t) && t.Jitter > 0 }
	// ignoresAdvice waits its own backoff under the fair caps.
	ignoresAdvice = func(t policy.Traits) bool { return t.Advice == policy.IgnoreAdvice && t.Models == "" }
	// redirectsLate redirects only when the wait does not fit the budget,
	// and adds nothing else; redirectsFirst on the first refusal.
	redirectsLate = func(t policy.Traits) bool {
		return t.Redirect == policy.RedirectWhenLate && !t.Extras && t.Advice == policy.HonourAdvice && t.Models == ""
	}
	redirectsFirst = func(t policy.Traits) bool { return t.Redirect == policy.RedirectFirst }
)

// judgeOneOwner: the same client with one owner and with two nested
// owners, the attempts per request the same (the one owner has the
// nested pair's product: stacked's 4 calls of 3 attempts against
// sdk-one-owner's 12), so that what differs is the number of owners, not
// the attempt budget.
func judgeOneOwner(g *verdictGroup) (findingOutcome, string) {
	stacked := g.where(stackedSDK)
	var one *Row
	if stacked != nil {
		s := stacked.Traits
		one = g.where(func(t policy.Traits) bool {
			return t.Owners == 1 && t.Models != "" && t.Attempts*t.Calls == s.Attempts*s.Calls &&
				t.Advice == s.Advice && t.Jitter == s.Jitter && t.Redirect == s.Redirect && t.Extras == s.Extras
		})
	}
	if one == nil || stacked == nil {
		return absent(missing(map[string]*Row{"the same client with its attempts in one owner (sdk-one-owner)": one, "an application's retries around an SDK's (stacked)": stacked})...)
	}
	s := stacked.Traits
	return versus(one, stacked), fmt.Sprintf("the same client with one owner of %d attempts (%s) against two nested owners, %d calls of %d (%s): %s.",
		one.Traits.Attempts, one.Policy, s.Calls, s.Attempts, stacked.Policy, against(one, stacked))
}

func judgeHonor(g *verdictGroup) (findingOutcome, string) {
	honor, blind := g.where(plainHonour), g.where(ignoresAdvice)
	if honor == nil || blind == nil {
		return absent(missing(map[string]*Row{"a policy that honours the header (honor)": honor, "one that ignores it (backoff, decorrelated, fixed:D, poll:D)": blind})...)
	}
	return versus(honor, blind), "the best policy that honours the header against the best that ignores it: " + against(honor, blind) + "."
}

func judgeJitter(g *verdictGroup) (findingOutcome, string) {
	plain := g.where(withoutJitter)
	var with []*Row
	var how []string
	for i := range g.Ranked {
		if r := &g.Ranked[i].Row; withJitter(r.Traits) {
			with = append(with, r)
			how = append(how, fmt.Sprintf("%s ×U[1, %s]", r.Policy, num.Decimal(1+r.Traits.Jitter, 2)))
		}
	}
	if plain == nil || len(with) == 0 {
		return absent(missing(map[string]*Row{"honouring without jitter (honor-no-jitter)": plain, "honouring with jitter (honor)": g.where(withJitter)})...)
	}
	// The best jitter tried: what jitter can do.
	best := slices.MinFunc(with, func(a, b *Row) int { return compare(a, b) })
	return versus(best, plain), fmt.Sprintf("jitter over the advised wait (%s) against none (%s), the best of them: %s.", strings.Join(how, ", "), plain.Policy, against(best, plain))
}

// redirectPrice is what rule (d) charges a redirected request, in
// requests answered within the SLO: the fallback (the simulator's
// standard deployment, with its own limits) is capacity paid per request,
// where the PTU deployment is paid for whether used or not. 0.5 is an
// assumption, not a price list's; the finding also gives the break-even
// price, at which the comparison would turn.
const redirectPrice = 0.5

// redirectMarginPts is the priced difference, in points, that counts as
// clear in rule (d) (its paired interval must exclude 0 too).
const redirectMarginPts = 1.0

// priced is each repeat's measure less redirectPrice × its share of
// requests redirected, in points (-1 with nothing offered).
func (r *Row) priced() []float64 {
	out := make([]float64, len(r.Measures))
	for k, m := range r.Measures {
		out[k] = -1
		if m.Offered > 0 {
			out[k] = m.InSLOPct() - redirectPrice*pctOf(m.Redirected, m.Offered)
		}
	}
	return out
}

// redirectedPct is the share of the window's requests redirected, over
// the repeats.
func (r *Row) redirectedPct() float64 {
	n := 0
	for _, m := range r.Measures {
		n += m.Redirected
	}
	return pctOf(n, r.Offered)
}

// pricedVersus is -1 when a's priced measure is clearly above b's, 1 when
// clearly below, 0 otherwise, and the mean difference.
func pricedVersus(a, b *Row) (int, float64) {
	d := paired(a.priced(), b.priced())
	switch {
	case !d.excludesZero() || math.Abs(d.mean) < redirectMarginPts:
		return 0, d.mean
	case d.mean > 0:
		return -1, d.mean
	}
	return 1, d.mean
}

// judgeRedirect: redirecting only when the wait does not fit the budget
// (budget) against never redirecting (honor) and redirecting on every
// refusal (redirect), each redirected request charged redirectPrice, on
// steady rows only (a row whose measure still drifts could rank
// otherwise). Confirmed when budget is clearly ahead of one and behind
// neither; contradicted when it is clearly behind either.
func judgeRedirect(g *verdictGroup) (findingOutcome, string) {
	late, first, never := g.where(redirectsLate), g.where(redirectsFirst), g.where(plainHonour)
	if late == nil || first == nil || never == nil {
		return absent(missing(map[string]*Row{"redirecting when the wait does not fit the budget (budget)": late, "redirecting on every refusal (redirect)": first, "never redirecting (honor)": never})...)
	}
	var unsteady []string
	for _, r := range []*Row{late, first, never} {
		if !r.Steady {
			unsteady = append(unsteady, r.Policy)
		}
	}
	if len(unsteady) > 0 {
		return notTested, fmt.Sprintf("the measure of %s still drifts in the window (not steady); the rule is judged on steady rows only, since a longer plan could turn it.", strings.Join(unsteady, " and "))
	}
	vsFirst, dFirst := pricedVersus(late, first)
	vsNever, dNever := pricedVersus(late, never)
	o := noClearDifference
	switch {
	case vsFirst > 0 || vsNever > 0:
		o = contradicted
	case vsFirst < 0 || vsNever < 0:
		o = confirmed
	}
	return o, fmt.Sprintf("each redirect priced at %s of a request answered (the fallback's capacity is its own, paid per request): %s %s within the SLO, %s redirected; %s %s, %s redirected; %s %s, never redirected. Priced, %s is %s points against %s (break-even at %s) and %s against %s (break-even at %s).",
		num.Decimal(redirectPrice, 2), late.Policy, pct(late.SuccessInSLOPct), pct(late.redirectedPct()), first.Policy, pct(first.SuccessInSLOPct), pct(first.redirectedPct()),
		never.Policy, pct(never.SuccessInSLOPct), late.Policy, signed(dFirst), first.Policy, breakEven(late, first), signed(dNever), never.Policy, breakEven(late, never))
}

// breakEven is the price per redirect at which a and b's priced measures
// would be equal: their difference in the measure over their difference
// in redirects ("none" when either difference makes no price turn it).
func breakEven(a, b *Row) string {
	dm, dr := a.SuccessInSLOPct-b.SuccessInSLOPct, a.redirectedPct()-b.redirectedPct()
	if dr == 0 || dm/dr < 0 {
		return "no price"
	}
	return num.Decimal(dm/dr, 2)
}

func signed(f float64) string {
	if f >= 0 {
		return "+" + num.Decimal(f, 2)
	}
	return num.Decimal(f, 2)
}

// maxLatePct is the most of a recommended policy's requests, in percent,
// that may end after the lab's budget — answered past it, or given up
// past it — for rule (e) to hold: 0.1 point.
const maxLatePct = 0.1

// judgeGiveUp: the recommendation gives up in a controlled way — no
// more than latePct of its requests end after the lab's budget, answered
// past it or given up past it — and the finding says how many it gave up
// locally within it. A policy that never retries (none) has nothing to
// give up, and judging it would compare it with itself: then the
// best-ranked eligible policy that retries is judged, the one a client
// that retries would take, and the sentence says so.
func judgeGiveUp(g *verdictGroup) (findingOutcome, string) {
	recs := g.Recommendations()
	if len(recs) == 0 {
		return notTested, "no policy is recommended."
	}
	var judged []*Row
	lead := ""
	for _, p := range recs {
		if retries(&p.Row) {
			judged = append(judged, &p.Row)
		}
	}
	if len(judged) == 0 {
		for i := range g.Ranked {
			if r := &g.Ranked[i].Row; candidate(r) && retries(r) {
				judged = append(judged, r)
				lead = fmt.Sprintf("%s, the recommendation, never retries: judged instead on the best-ranked policy that does, ", recs[0].Policy)
				break
			}
		}
	}
	if len(judged) == 0 {
		return notTested, fmt.Sprintf("%s, the recommendation, never retries, and no eligible policy that retries ran: nothing gives up.", recs[0].Policy)
	}
	o := confirmed
	var parts []string
	for _, p := range judged {
		late := 0
		for _, m := range p.Measures {
			late += m.Late
		}
		latePct := pctOf(late, p.Offered)
		if latePct > maxLatePct {
			o = contradicted
		}
		parts = append(parts, fmt.Sprintf("%s ended %s of its requests after the %s budget (answered or given up late; at most %s holds) and gave up %s locally within it",
			p.Policy, pct(max(latePct, 0)), budgetSecs(p), pct(maxLatePct), pct(share(p.GaveUpLocal, p.Offered))))
	}
	return o, lead + strings.Join(parts, "; ") + "."
}

// budgetSecs is a row's budget for a sentence: "30 s".
func budgetSecs(r *Row) string { return secs(r.Budget) }

// missing names the policies whose row is nil, in name order.
func missing(rows map[string]*Row) []string {
	var names []string
	for n, r := range rows {
		if r == nil {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}
