package policylab

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/num"
)

// The verdict reads a Sweep the way its documents' rule is stated: per
// load and fleet size, which policy to use, and whether each part of the
// rule held on these runs. It ranks by goodput (requests answered within
// their budget, per second), never by success alone, and a difference
// inside the repeats' spread is a tie, not an order.

// Tolerance is the relative difference below which two attempts-per-
// success or 429s-per-success figures are "no clear difference": the Row
// carries no spread for them, so the verdict asks for more than 5% before
// it calls one smaller.
const Tolerance = 0.05

// Group is one (load, clients) cell of the sweep, its rows ranked.
type Group struct {
	Load    string
	LoadX   float64
	Clients int
	// Ranked holds the group's rows best first: by goodput, a run of rows
	// whose goodput spreads overlap the first one's being a tie among
	// which fewer attempts per success come first.
	Ranked []Placed
	// Recommended indexes Ranked: the fair policy (Models == "", and no
	// Fallback: the recommendation is for one deployment) with the
	// highest goodput and, among the fair ones whose spread overlaps its
	// spread, the fewest attempts per success; -1 when no fair policy
	// succeeded at all.
	Recommended int
	// Ties are the fair policies whose goodput spread overlaps the
	// recommendation's (the candidates it was chosen from), in rank order.
	Ties []string
	// Findings are the documented rule's parts, in the order of Rules.
	Findings []Finding
	// Unfinished names the group's policies whose runs did not all finish
	// (an interrupted lab): then the group recommends nothing and judges
	// no part of the rule, since an unfinished policy might have led.
	Unfinished []string
}

// Placed is a row and its place in its group's ranking.
type Placed struct {
	Row
	// Rank is 1 for the first place; rows of one tie share the rank of
	// its first row (competition ranking: 1, =2, =2, 4).
	Rank int
	Tie  bool // tied with another row of the group
}

// RankLabel is the rank as the tables show it: "3", or "=3" in a tie.
func (p Placed) RankLabel() string {
	if p.Tie {
		return fmt.Sprintf("=%d", p.Rank)
	}
	return fmt.Sprint(p.Rank)
}

// Outcome is what a group's rows say about one part of the rule.
type Outcome int

// Outcomes of a Finding.
const (
	NotTested Outcome = iota // a policy the comparison needs did not run
	Confirmed
	Contradicted
	NoClearDifference // inside the spread (goodput) or the Tolerance
)

func (o Outcome) String() string {
	switch o {
	case Confirmed:
		return "confirmed"
	case Contradicted:
		return "contradicted"
	case NoClearDifference:
		return "no clear difference"
	}
	return "not tested"
}

// Finding is one part of the rule on one group: its outcome and a plain
// sentence with the numbers behind it.
type Finding struct {
	Rule     Rule
	Outcome  Outcome
	Sentence string
}

// Rule is one part of the documents' rule and the comparison that tests it.
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

// Judge groups the sweep's rows by (load, clients), in the order the
// rows first name them (then the unfinished cells), ranks each group,
// picks its recommendation and judges each part of the rule on it; a
// group with an unfinished cell gets neither.
func Judge(s Sweep) []Group {
	var groups []Group
	index := map[string]int{}
	group := func(load string, loadX float64, clients int) *Group {
		key := fmt.Sprintf("%s\x00%d", load, clients)
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			groups = append(groups, Group{Load: load, LoadX: loadX, Clients: clients})
		}
		return &groups[i]
	}
	for _, r := range s.Rows {
		g := group(r.Load, r.LoadX, r.Clients)
		g.Ranked = append(g.Ranked, Placed{Row: r})
	}
	for _, c := range s.Unfinished {
		g := group(c.Load, -1, c.Clients)
		g.Unfinished = append(g.Unfinished, c.Policy)
	}
	for i := range groups {
		g := &groups[i]
		rank(g.Ranked)
		g.Recommended = -1
		if len(g.Unfinished) > 0 {
			continue
		}
		g.Recommended, g.Ties = recommend(g.Ranked)
		for _, rule := range Rules {
			o, sentence := rule.judge(g)
			g.Findings = append(g.Findings, Finding{Rule: rule, Outcome: o, Sentence: sentence})
		}
	}
	return groups
}

// rank orders rows best first and sets their ranks. The row with the most
// goodput leads a tie of every following row whose spread overlaps its
// own; inside a tie, fewer attempts per success come first. The next tie
// starts at the first row outside it.
func rank(rows []Placed) {
	slices.SortStableFunc(rows, func(a, b Placed) int {
		if c := cmp.Compare(b.GoodputPerS, a.GoodputPerS); c != 0 {
			return c
		}
		return byCost(&a.Row, &b.Row)
	})
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && overlap(&rows[start].Row, &rows[end].Row) {
			end++
		}
		tie := rows[start:end]
		slices.SortStableFunc(tie, func(a, b Placed) int { return byCost(&a.Row, &b.Row) })
		for i := range tie {
			tie[i].Rank, tie[i].Tie = start+1, len(tie) > 1
		}
		start = end
	}
}

// byCost orders rows by attempts per success, fewest first, a row without
// a success last, then by name.
func byCost(a, b *Row) int {
	ca, cb := a.AttemptsPerSuccess, b.AttemptsPerSuccess
	if (ca < 0) != (cb < 0) {
		if ca < 0 {
			return 1
		}
		return -1
	}
	if c := cmp.Compare(ca, cb); c != 0 {
		return c
	}
	return strings.Compare(a.Policy, b.Policy)
}

// overlap: the goodput spreads of a and b share a value. Rows without a
// success never tie with rows that have one.
func overlap(a, b *Row) bool {
	if (a.Succeeded == 0) != (b.Succeeded == 0) {
		return false
	}
	return a.GoodputMin <= b.GoodputMax && b.GoodputMin <= a.GoodputMax
}

// recommend picks the recommendation among the fair rows of a ranked
// group, and the fair rows it tied with.
func recommend(ranked []Placed) (int, []string) {
	best := -1
	for i := range ranked {
		if eligible(&ranked[i].Row) && (best < 0 || ranked[i].GoodputPerS > ranked[best].GoodputPerS) {
			best = i
		}
	}
	if best < 0 {
		return -1, nil
	}
	var cands []int
	for i := range ranked {
		if eligible(&ranked[i].Row) && overlap(&ranked[best].Row, &ranked[i].Row) {
			cands = append(cands, i)
		}
	}
	// Fewest attempts per success; at equal cost, more goodput; then
	// the name.
	pick := slices.MinFunc(cands, func(i, j int) int {
		a, b := &ranked[i].Row, &ranked[j].Row
		if c := cmp.Compare(a.AttemptsPerSuccess, b.AttemptsPerSuccess); c != 0 {
			return c
		}
		if c := cmp.Compare(b.GoodputPerS, a.GoodputPerS); c != 0 {
			return c
		}
		return strings.Compare(a.Policy, b.Policy)
	})
	var ties []string
	for _, i := range cands {
		if i != pick {
			ties = append(ties, ranked[i].Policy)
		}
	}
	return pick, ties
}

// eligible: a row that can be recommended for one deployment: under the
// fair caps, without a second deployment's capacity, with a success.
func eligible(r *Row) bool { return r.Models == "" && !r.Fallback && r.Succeeded > 0 }

// Recommendation is the recommended row, or nil.
func (g *Group) Recommendation() *Placed {
	if g.Recommended < 0 {
		return nil
	}
	return &g.Ranked[g.Recommended]
}

// Name is the group as the outputs head it: "1.5x, 16 clients".
func (g *Group) Name() string {
	return fmt.Sprintf("%s, %d %s", g.Load, g.Clients, plural(g.Clients, "client", "clients"))
}

// row returns the group's row of the policy named name, or nil.
func (g *Group) row(name string) *Row {
	for i := range g.Ranked {
		if g.Ranked[i].Policy == name {
			return &g.Ranked[i].Row
		}
	}
	return nil
}

// RecommendationSentence says what the group recommends, with its numbers.
func (g *Group) RecommendationSentence() string {
	name, rest := g.recommendationParts()
	return name + rest
}

// recommendationParts are the recommendation's policy name and the rest
// of its sentence, for a writer that sets the name apart.
func (g *Group) recommendationParts() (name, rest string) {
	r := g.Recommendation()
	switch {
	case len(g.Unfinished) > 0:
		return "", fmt.Sprintf("Nothing recommended: the lab was interrupted before the runs of %s finished here, and an unfinished policy might have led.",
			strings.Join(g.Unfinished, ", "))
	case r == nil:
		return "", "No policy under the fair caps had a success: nothing to recommend."
	}
	rest = fmt.Sprintf(": goodput %s/s (%s of capacity), %s attempts and %s 429s per success, p99 %s of its successes, %s success.",
		num.Grouped(r.GoodputPerS, 2), pct(r.CapacitySharePct), ratio(r.AttemptsPerSuccess), ratio(r.HTTP429PerSuccess),
		millis(r.E2EP99MS), pct(r.SuccessPct))
	if len(g.Ties) > 0 {
		rest += fmt.Sprintf(" Tied on goodput (inside the spread) with %s; of these it needs the fewest attempts per success.", strings.Join(g.Ties, ", "))
	}
	return r.Policy, rest
}

// prefer says whether the rule's preferred row p beats the other row o by
// the verdict's order: goodput first, a difference inside the spread being
// none, then attempts per success beyond the Tolerance.
func prefer(p, o *Row) Outcome {
	switch {
	case p.Succeeded == 0 && o.Succeeded == 0:
		return NoClearDifference
	case p.GoodputMin > o.GoodputMax:
		return Confirmed
	case o.GoodputMin > p.GoodputMax:
		return Contradicted
	}
	return lower(p.AttemptsPerSuccess, o.AttemptsPerSuccess)
}

// lower is Confirmed when the preferred figure p is lower than o by more
// than the Tolerance, Contradicted when higher by more, else no clear
// difference; -1 (no success) is the worst figure.
func lower(p, o float64) Outcome {
	switch {
	case p < 0 && o < 0:
		return NoClearDifference
	case p < 0:
		return Contradicted
	case o < 0:
		return Confirmed
	case p < o*(1-Tolerance):
		return Confirmed
	case p > o*(1+Tolerance):
		return Contradicted
	}
	return NoClearDifference
}

func absent(names ...string) (Outcome, string) {
	return NotTested, strings.Join(names, " and ") + " did not run."
}

func judgeOneOwner(g *Group) (Outcome, string) {
	sdk, stacked := g.row("sdk"), g.row("stacked")
	if sdk == nil || stacked == nil {
		return absent(missing(map[string]*Row{"sdk": sdk, "stacked": stacked})...)
	}
	o := prefer(sdk, stacked)
	return o, fmt.Sprintf("stacked owners cost %s the attempts per success of sdk (%s against %s) for %s success; goodput %s against %s/s.",
		times(stacked.AttemptsPerSuccess, sdk.AttemptsPerSuccess), ratio(stacked.AttemptsPerSuccess), ratio(sdk.AttemptsPerSuccess),
		pp(stacked.SuccessPct-sdk.SuccessPct), goodput(stacked), goodput(sdk))
}

// headerBlind are the policies that ignore the advised wait.
func headerBlind(name string) bool {
	return name == "backoff" || strings.HasPrefix(name, "fixed:") || strings.HasPrefix(name, "poll:")
}

func judgeHonor(g *Group) (Outcome, string) {
	honor := g.row("honor")
	var best *Row
	for i := range g.Ranked {
		if headerBlind(g.Ranked[i].Policy) {
			best = &g.Ranked[i].Row // Ranked is best first
			break
		}
	}
	switch {
	case honor == nil && best == nil:
		return absent("honor", "any of backoff, fixed:D, poll:D")
	case honor == nil:
		return absent("honor")
	case best == nil:
		return absent("any of backoff, fixed:D, poll:D")
	}
	o := prefer(honor, best)
	return o, fmt.Sprintf("honoring the header (honor) against the best policy that ignores it (%s): goodput %s against %s/s, attempts per success %s against %s.",
		best.Policy, goodput(honor), goodput(best), ratio(honor.AttemptsPerSuccess), ratio(best.AttemptsPerSuccess))
}

func judgeJitter(g *Group) (Outcome, string) {
	honor, plain := g.row("honor"), g.row("honor-no-jitter")
	if honor == nil || plain == nil {
		return absent(missing(map[string]*Row{"honor": honor, "honor-no-jitter": plain})...)
	}
	o := lower(honor.HTTP429PerSuccess, plain.HTTP429PerSuccess)
	if honor.HTTP429PerSuccess == 0 && plain.HTTP429PerSuccess == 0 {
		o = NoClearDifference
	}
	return o, fmt.Sprintf("jitter (honor against honor-no-jitter) changed 429s per success from %s to %s, goodput from %s to %s/s.",
		ratio(plain.HTTP429PerSuccess), ratio(honor.HTTP429PerSuccess), goodput(plain), goodput(honor))
}

func judgeRedirect(g *Group) (Outcome, string) {
	budget, redirect := g.row("budget"), g.row("redirect")
	if budget == nil || redirect == nil {
		return absent(missing(map[string]*Row{"budget": budget, "redirect": redirect})...)
	}
	var o Outcome
	switch {
	case budget.SuccessPctMin > redirect.SuccessPctMax:
		o = Confirmed
	case redirect.SuccessPctMin > budget.SuccessPctMax:
		o = Contradicted
	case share(budget.Redirected, budget.Requests) < share(redirect.Redirected, redirect.Requests)*(1-Tolerance):
		o = Confirmed // the same success for fewer redirects
	default:
		o = NoClearDifference
	}
	return o, fmt.Sprintf("redirecting only when the wait does not fit the budget (budget) against redirecting on every refusal (redirect): success %s against %s, p99 %s against %s, redirected %s against %s of requests.",
		pct(budget.SuccessPct), pct(redirect.SuccessPct), millis(budget.E2EP99MS), millis(redirect.E2EP99MS),
		pct(share(budget.Redirected, budget.Requests)), pct(share(redirect.Redirected, redirect.Requests)))
}

func judgeGiveUp(g *Group) (Outcome, string) {
	rec, none := g.Recommendation(), g.row("none")
	switch {
	case rec == nil:
		return NotTested, "no policy is recommended."
	case none == nil:
		return absent("none")
	case rec.Policy == "none":
		return NotTested, "the recommendation is none itself."
	}
	recOver, noneOver := share(rec.OverBudget, rec.Requests), share(none.OverBudget, none.Requests)
	// Controlled: the recommendation leaves no more requests past their
	// budget than a client that never waits (within 0.1 pp).
	o := Confirmed
	if recOver > noneOver+0.1 {
		o = Contradicted
	}
	return o, fmt.Sprintf("%s left %s of its requests answered past their budget and gave up %s; none: %s and %s.",
		rec.Policy, pct(recOver), pct(share(rec.GaveUp, rec.Requests)), pct(noneOver), pct(share(none.GaveUp, none.Requests)))
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

// share is n ÷ of as a percentage; 0 when of is 0.
func share(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// The sentences' number formats. -1, an unknown value, shows as "—".

func pct(v float64) string {
	if v < 0 {
		return "—"
	}
	return num.Decimal(v, 1) + "%"
}

func pp(v float64) string {
	s := num.Decimal(v, 1)
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s + " pp"
}

func ratio(v float64) string {
	if v < 0 {
		return "—"
	}
	return num.Decimal(v, 2)
}

func times(a, b float64) string {
	if a < 0 || b <= 0 {
		return "— ×"
	}
	return num.Decimal(a/b, 2) + "×"
}

func goodput(r *Row) string { return num.Grouped(r.GoodputPerS, 2) }

func millis(v float64) string {
	if v < 0 {
		return "—"
	}
	return num.Grouped(v, 0) + " ms"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// The ambition (issue 19) for a load past capacity: the recommendation
// delivers at least AmbitionSharePct of capacity as goodput with at most
// AmbitionAttemptsPerSuccess attempts per success, within a budget of at
// most AmbitionBudget, and no retry came back before its advised wait.
const (
	AmbitionSharePct           = 95
	AmbitionAttemptsPerSuccess = 1.2
	AmbitionBudget             = 30 * time.Second
)

// Reaches says whether r meets the ambition.
func Reaches(r *Row) bool {
	return r.CapacitySharePct >= AmbitionSharePct && r.AttemptsPerSuccess >= 0 && r.AttemptsPerSuccess <= AmbitionAttemptsPerSuccess &&
		r.Budget > 0 && r.Budget <= AmbitionBudget && r.EarlyRetries == 0
}

// AmbitionSentence says whether the group's recommendation meets the
// ambition and, when it does not, how far every fair policy got; false
// for a group under capacity, without a known capacity, or unfinished.
func (g *Group) AmbitionSentence() (string, bool) {
	if g.LoadX <= 1 || len(g.Ranked) == 0 || g.Ranked[0].CapacitySharePct < 0 || len(g.Unfinished) > 0 {
		return "", false
	}
	got := func(r *Row) string {
		return fmt.Sprintf("%s %s at %s (%d early)", r.Policy, pct(r.CapacitySharePct), ratio(r.AttemptsPerSuccess), r.EarlyRetries)
	}
	if r := g.Recommendation(); r != nil && Reaches(&r.Row) {
		return "reached: " + got(&r.Row) + ".", true
	}
	var reach, each []string
	for i := range g.Ranked {
		r := &g.Ranked[i].Row
		if r.Models != "" {
			continue
		}
		if Reaches(r) {
			reach = append(reach, r.Policy)
		}
		each = append(each, got(r))
	}
	s := "not reached by the recommendation"
	if len(reach) > 0 {
		s += "; reached by " + strings.Join(reach, ", ") + ", with less goodput"
	}
	return s + ". Each fair policy's capacity share at its attempts per success: " + strings.Join(each, "; ") + ".", true
}
