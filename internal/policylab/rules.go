package policylab

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/internal/policy"
)

// Rule is one part of the documents' rule and the comparison that tests
// it, on the verdict's own order (compare): the measure, the latency
// guard, the load, the p99 — never on 429s alone.
type Rule struct {
	Key   string // "a" … "e"
	Title string // "one owner"
	judge func(g *Group) (Outcome, string)
}

// Rules are the documented rule's parts, in the documents' order.
var Rules = []Rule{
	{"a", "one owner", judgeOneOwner},
	{"b", "honour the header", judgeHonor},
	{"c", "jitter de-synchronizes the fleet", judgeJitter},
	{"d", "redirect only when the latency budget requires it", judgeRedirect},
	{"e", "give up in a controlled way", judgeGiveUp},
}

// versus is the verdict's order between the rule's preferred row p and
// the other row o, as an Outcome.
func versus(p, o *Row) Outcome {
	switch c := compare(p, o); {
	case c < 0:
		return Confirmed
	case c > 0:
		return Contradicted
	}
	return NoClearDifference
}

// against says what two rows measured, for a rule's sentence: "p: 33.2%
// within the SLO, 2.69 attempts per request, p99 2,481 ms; o: …".
func against(p, o *Row) string {
	return fmt.Sprintf("%s: %s; %s: %s", p.Policy, briefly(p), o.Policy, briefly(o))
}

func briefly(r *Row) string {
	return fmt.Sprintf("%s within the SLO, %s attempts per request, p99 %s", pct(r.SuccessInSLOPct), ratio(r.AttemptsPerRequest), millis(r.SuccessP99MS))
}

func absent(names ...string) (Outcome, string) {
	return NotTested, strings.Join(names, " and ") + " did not run."
}

// where is the group's best-ranked row whose traits meet want, or nil.
func (g *Group) where(want func(t policy.Traits) bool) *Row {
	for i := range g.Ranked {
		if want(g.Ranked[i].Traits) {
			return &g.Ranked[i].Row // Ranked is best first
		}
	}
	return nil
}

// The rows the rules compare, by what the policies do.
var (
	// oneOwnerSDK models an SDK that owns its retries alone; stackedSDK an
	// application's retries around it.
	oneOwnerSDK = func(t policy.Traits) bool {
		return t.Models != "" && t.Owners == 1 && t.Attempts > 1 && t.Redirect == policy.NeverRedirect
	}
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
	// noRetry is a client that never retries.
	noRetry = func(t policy.Traits) bool { return t.Attempts == 1 && t.Redirect == policy.NeverRedirect }
)

func judgeOneOwner(g *Group) (Outcome, string) {
	sdk, stacked := g.where(oneOwnerSDK), g.where(stackedSDK)
	if sdk == nil || stacked == nil {
		return absent(missing(map[string]*Row{"a client with one retry owner (sdk)": sdk, "an application's retries around it (stacked)": stacked})...)
	}
	return versus(sdk, stacked), "one owner (" + sdk.Policy + ") against an application's retries around it (" + stacked.Policy + "): " + against(sdk, stacked) + "."
}

func judgeHonor(g *Group) (Outcome, string) {
	honor, blind := g.where(plainHonour), g.where(ignoresAdvice)
	if honor == nil || blind == nil {
		return absent(missing(map[string]*Row{"a policy that honours the header (honor)": honor, "one that ignores it (backoff, decorrelated, fixed:D, poll:D)": blind})...)
	}
	return versus(honor, blind), "the best policy that honours the header against the best that ignores it: " + against(honor, blind) + "."
}

func judgeJitter(g *Group) (Outcome, string) {
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

func judgeRedirect(g *Group) (Outcome, string) {
	late, first := g.where(redirectsLate), g.where(redirectsFirst)
	if late == nil || first == nil {
		return absent(missing(map[string]*Row{"redirecting when the wait does not fit the budget (budget)": late, "redirecting on every refusal (redirect)": first})...)
	}
	return versus(late, first), fmt.Sprintf("redirecting only when the wait does not fit the budget (%s) against on every refusal (%s): %s; redirected %s against %s of requests (the fallback's capacity is extra).",
		late.Policy, first.Policy, against(late, first), pct(share(late.Redirected, late.Requests)), pct(share(first.Redirected, first.Requests)))
}

// judgeGiveUp: the recommendation gives up in a controlled way when it
// leaves no more requests answered past their budget than a client that
// never waits (within 0.1 point), its give-ups local or refused, not late.
func judgeGiveUp(g *Group) (Outcome, string) {
	recs, none := g.Recommendations(), g.where(noRetry)
	switch {
	case len(recs) == 0:
		return NotTested, "no policy is recommended."
	case none == nil:
		return absent("a client that never retries (none)")
	}
	rec := &recs[0].Row
	recOver, noneOver := share(rec.OverBudget, rec.Requests), share(none.OverBudget, none.Requests)
	o := Confirmed
	if recOver > noneOver+0.1 {
		o = Contradicted
	}
	return o, fmt.Sprintf("%s left %s of its requests answered past their budget and gave up %s locally; %s left %s. %s.",
		rec.Policy, pct(recOver), pct(share(rec.GaveUpLocal, rec.Offered)), none.Policy, pct(noneOver), against(rec, none))
}

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
