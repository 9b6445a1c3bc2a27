package policylab

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/report"
	"github.com/ptuprobe/ptuprobe/sim"
)

// The verdict reads a Sweep the way a user lives with a policy: per load,
// fleet size and cap, which policy answers the most offered requests
// within the SLO (a refused, given-up or late request is a miss: latency
// is judged over every offered request, never over the survivors), then
// which places the least load on the deployment. The recommendation and
// the ranked tables follow the four steps of choose.go. Two rows are
// compared repeat by repeat (every row's repeat k met the same arrivals
// and seeds): equivalence is tested (TOST), and a difference counts only
// when its 95% interval excludes 0 and it is big enough to matter
// (successTolerance, loadTolerance).

// Thresholds of a clear difference between two rows.
const (
	// successTolerance is the smallest difference in the measure that
	// counts, relative to the better row's (2% of it: 2 points at 100%,
	// 0.67 at 3x's ceiling of 33%), and only when its interval excludes 0.
	// Smaller differences move with the plan's length (docs/policies.md,
	// "Steady state"), and no user would trade load for them.
	successTolerance = 0.02
	// loadTolerance is the smallest relative difference in attempts per
	// offered request that counts (and only when its interval excludes 0).
	loadTolerance = 0.05
	// minRepeats is the fewest repeats a recommendation is made from: with
	// fewer, the interval of a difference is not worth its name.
	minRepeats = 3
)

// verdictGroup is one (load, clients, cap) cell of the sweep, its rows ranked.
type verdictGroup struct {
	Load    string
	LoadX   float64
	Clients int
	// MaxAttempts is the fair policies' cap in this group; SDKCap is true
	// for the group of the SDKs' cap (beside the lab's own).
	MaxAttempts int
	SDKCap      bool
	// Ranked holds the group's rows ranked (see rank); the coordinated
	// rows are ranked apart, in Coordinated.
	Ranked      []placed
	Coordinated []placed
	// Recommended indexes Ranked: the fair rows (under the lab's caps,
	// no fallback, steady, with a success) that no other fair row beats,
	// in rank order; several are "no clear difference among …"; none when
	// no row qualifies or the repeats are too few (Why says which).
	Recommended []int
	// CoordinatedPick likewise indexes Coordinated: what a fleet that can
	// share its state would use.
	CoordinatedPick []int
	Why             string
	// Steps name each step of the choice (choose.go), with its numbers;
	// Flips the grid's conditions whose own choice differs, and to what.
	Steps, Flips []string
	// conditions counts the conditions the choice weighed.
	conditions int
	// kept are the policies the choice was made among at the given
	// conditions (step 3's rows that step 4 kept, or none's fallbacks):
	// a row tied with the choice in the ranking is ranked with it only
	// if it is one of them.
	kept []string
	// unfit: nothing is recommended because of the profile's fit (Why
	// quotes it; policies.md escapes it).
	unfit bool
	// Findings are the documented rule's parts, in the order of Rules.
	Findings []finding
	// Unfinished names the group's policies whose runs did not all finish
	// (an interrupted lab): then the group recommends nothing and judges
	// no part of the rule, since an unfinished policy might have led.
	Unfinished []string
}

// placed is a row and its place in its group's ranking.
type placed struct {
	Row
	// Rank is 1 for the first place; rows that no row left beats share
	// the rank of their tier (competition ranking: 1, =2, =2, 4).
	Rank int
	Tie  bool // tied with another row of its tier
	// grade is its standing over the grid (choose.go).
	grade
}

// RankLabel is the rank as the tables show it: "3", or "=3" in a tie.
func (p placed) RankLabel() string {
	if p.Tie {
		return fmt.Sprintf("=%d", p.Rank)
	}
	return fmt.Sprint(p.Rank)
}

// findingOutcome is what a group's rows say about one part of the rule.
type findingOutcome int

// Outcomes of a Finding.
const (
	notTested findingOutcome = iota // a policy the comparison needs did not run
	confirmed
	contradicted
	noClearDifference
)

func (o findingOutcome) String() string {
	switch o {
	case confirmed:
		return "confirmed"
	case contradicted:
		return "contradicted"
	case noClearDifference:
		return "no clear difference"
	}
	return "not tested"
}

// finding is one part of the rule on one group: its outcome and a plain
// sentence with the numbers behind it.
type finding struct {
	Rule     rulePart
	Outcome  findingOutcome
	Sentence string
}

// judge groups the sweep's rows by (load, clients, cap), in the order the
// rows first name them (the lab's cap, then the SDKs'; then the
// unfinished cells), ranks each group, picks its recommendation and
// judges each part of the rule on it; a group with an unfinished cell
// gets neither. A row with caps of its own (a modelled client) is in both
// caps' groups.
func judge(s Sweep) []verdictGroup {
	var groups []verdictGroup
	index := map[string]int{}
	group := func(load string, loadX float64, clients int, sdkCap bool) *verdictGroup {
		key := fmt.Sprintf("%s\x00%d\x00%t", load, clients, sdkCap)
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			attempts := s.MaxAttempts
			if sdkCap {
				attempts = s.SDKMaxAttempts
			}
			groups = append(groups, verdictGroup{Load: load, LoadX: loadX, Clients: clients, MaxAttempts: attempts, SDKCap: sdkCap})
		}
		return &groups[i]
	}
	add := func(r Row, sdkCap bool) {
		g := group(r.Load, r.LoadX, r.Clients, sdkCap)
		if r.Coordinated {
			g.Coordinated = append(g.Coordinated, placed{Row: r})
		} else {
			g.Ranked = append(g.Ranked, placed{Row: r})
		}
	}
	for _, r := range s.Rows {
		if !r.SDKCap {
			add(r, false)
		}
	}
	if s.SDKMaxAttempts > 0 {
		for _, r := range s.Rows {
			if r.SDKCap || r.OwnCaps {
				add(r, true)
			}
		}
	}
	for _, c := range s.Unfinished {
		g := group(c.Load, -1, c.Clients, c.SDKCap)
		g.Unfinished = append(g.Unfinished, c.Policy)
	}
	// The lab's cap's groups first, then the SDKs'.
	slices.SortStableFunc(groups, func(a, b verdictGroup) int { return cmp.Compare(bool01(a.SDKCap), bool01(b.SDKCap)) })
	for i := range groups {
		g := &groups[i]
		g.grade(g.views(&s))
		rank(g.Ranked)
		rank(g.Coordinated)
		if len(g.Unfinished) > 0 {
			g.Why = fmt.Sprintf("the lab was interrupted before the runs of %s finished here, and an unfinished policy might have led.",
				strings.Join(g.Unfinished, ", "))
			continue
		}
		views := g.views(&s) // the rows moved: their views again
		if i, why := g.choose(views); i >= 0 {
			g.Recommended = []int{g.lead(i)}
		} else {
			g.Why = why
		}
		g.CoordinatedPick = g.coordinationPays()
		if !s.Fit.Recommends() {
			g.Recommended, g.CoordinatedPick = nil, nil
			g.Why, g.unfit = unfit(s, report.OneLine), true
		}
		for _, rule := range ruleParts {
			o, sentence := rule.judge(g)
			g.Findings = append(g.Findings, finding{Rule: rule, Outcome: o, Sentence: sentence})
		}
	}
	return groups
}

// unfit is why nothing is recommended from a profile whose fit is not
// good: poor, the lab would be answering for another deployment;
// insufficient, the run held too few refusals to tell whether it does.
// The profile's name and its fit's text come from a file: esc makes them
// safe where they are written (one line; escaped for Markdown).
func unfit(s Sweep, esc func(string) string) string {
	how := "fits its recorded run poorly"
	if s.Fit.Quality == sim.FitInsufficient {
		how = "was fitted to too few refusals to be judged (insufficient)"
	}
	return fmt.Sprintf("the simulator's profile %s %s (%s): nothing is recommended from it.", esc(s.Profile), how, esc(s.Fit.Why))
}

// compare is the order of two rows at the given conditions, for the
// rules' findings: negative when a is clearly better, positive when b is,
// 0 for no clear difference. It is best of the pair (best).
func compare(a, b *Row) int {
	pair := []*Row{a, b}
	top := best(pair)
	switch {
	case len(top) == 2:
		return 0
	case top[0] == a:
		return -1
	}
	return 1
}

// best is the rows with no clear difference from the best of rows at the
// given conditions, in two steps, each keeping the rows with no clear
// difference from the step's best:
//  1. the measure: the rows whose measure is not clearly below the
//     highest one's (paired over the repeats: a difference of at least
//     successTolerance whose interval excludes 0);
//  2. the load: of those, the rows whose attempts per offered request are
//     not clearly above the lowest (loadTolerance, interval excluding 0).
//
// The measure counts every offered request, so no step reads the latency
// of the survivors. What is left is a tie, in the rows' order.
func best(rows []*Row) []*Row {
	if len(rows) <= 1 {
		return rows
	}
	keep := notBeaten(rows)
	light := slices.MinFunc(keep, func(a, b *Row) int { return cmp.Compare(a.AttemptsPerRequest, b.AttemptsPerRequest) })
	return filter(keep, func(r *Row) bool {
		d := paired(r.loads(), light.loads())
		return r == light || !(d.excludesZero() && d.mean >= loadTolerance*light.AttemptsPerRequest)
	})
}

func filter(rows []*Row, keep func(*Row) bool) []*Row {
	var out []*Row
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

func bool01(b bool) int {
	if b {
		return 1
	}
	return 0
}

// shares and loads are a row's measure and attempts per offered request,
// repeat by repeat (-1 for a repeat with nothing offered).
func (r *Row) shares() []float64 {
	out := make([]float64, len(r.Measures))
	for k, m := range r.Measures {
		out[k] = m.InSLOPct()
	}
	return out
}

func (r *Row) loads() []float64 {
	out := make([]float64, len(r.Measures))
	for k, m := range r.Measures {
		out[k] = m.AttemptsPerRequest()
	}
	return out
}

// rank orders rows by the recommendation's steps (choose.go), each row's
// regret being its worst over the grid (graded rows, step 2) or, for a
// row measured at the given conditions alone, its shortfall there against
// the given conditions' best candidate: the graded rows first, then the
// others; within each, repeatedly, of the rows left the ones within
// equivalenceMargin of the smallest regret, of those the fewest attempts
// per offered request (within loadTolerance), then the simplest policy.
// Rows the steps do not tell apart share a rank (=), in the lab's order.
// No step reads the survivors' latency.
func rank(rows []placed) {
	lead := -1.0
	for i := range rows {
		if r := &rows[i].Row; candidate(r) {
			lead = max(lead, r.SuccessInSLOPct)
		}
	}
	regret := func(p *placed) float64 {
		switch {
		case p.Graded:
			return p.WorstRegret
		case p.Offered == 0:
			return math.Inf(1)
		case lead < 0:
			return -p.SuccessInSLOPct
		}
		return lead - p.SuccessInSLOPct
	}
	out := make([]placed, 0, len(rows))
	for _, graded := range []bool{true, false} {
		var left []*placed
		for i := range rows {
			if rows[i].Graded == graded {
				left = append(left, &rows[i])
			}
		}
		for len(left) > 0 {
			least := slices.MinFunc(left, func(a, b *placed) int { return cmp.Compare(regret(a), regret(b)) })
			near := slices.DeleteFunc(slices.Clone(left), func(p *placed) bool { return !(regret(p) <= regret(least)+equivalenceMargin) })
			if len(near) == 0 { // regrets all infinite: nothing was offered
				near = left
			}
			low := slices.MinFunc(near, func(a, b *placed) int { return cmp.Compare(a.AttemptsPerRequest, b.AttemptsPerRequest) }).AttemptsPerRequest
			few := slices.DeleteFunc(near, func(p *placed) bool { return p.AttemptsPerRequest > max(low, low*(1+loadTolerance)) })
			simple := slices.MinFunc(few, func(a, b *placed) int { return cmp.Compare(simplicity(&a.Row), simplicity(&b.Row)) })
			tier := slices.DeleteFunc(few, func(p *placed) bool { return simplicity(&p.Row) != simplicity(&simple.Row) })
			start := len(out)
			for _, p := range tier {
				q := *p
				q.Rank, q.Tie = start+1, len(tier) > 1
				out = append(out, q)
			}
			left = slices.DeleteFunc(left, func(p *placed) bool { return slices.Contains(tier, p) })
		}
	}
	copy(rows, out)
}

// lead moves the recommendation, at i of Ranked, to the first place,
// with the rows the steps did not tell apart from it (its tier, =1, of
// the rows step 4 kept at the given conditions: g.kept): rank
// 1 is the choice of the four steps, the rest keep the order of steps 2
// and 3 (rank), ranked after it. It returns the recommendation's new
// index, 0.
func (g *verdictGroup) lead(i int) int {
	pick := g.Ranked[i]
	var first, rest []placed
	first = append(first, pick)
	for k, p := range g.Ranked {
		switch {
		case k == i:
		case p.Rank == pick.Rank && p.Tie && pick.Tie && slices.Contains(g.kept, p.Policy):
			first = append(first, p)
		default:
			rest = append(rest, p)
		}
	}
	for k := range first {
		first[k].Rank, first[k].Tie = 1, len(first) > 1
	}
	orig := make([]int, len(rest))
	for k := range rest {
		orig[k] = rest[k].Rank
	}
	for k := range rest {
		rest[k].Rank = len(first) + k + 1
		if k > 0 && orig[k] == orig[k-1] {
			rest[k].Rank = rest[k-1].Rank
		}
		rest[k].Tie = (k > 0 && orig[k] == orig[k-1]) || (k+1 < len(orig) && orig[k] == orig[k+1])
	}
	copy(g.Ranked, append(first, rest...))
	return 0
}

// coordinationPays indexes the coordinated rows that a fleet able to
// share its state should use: those that are among the verdict's best
// together with the independent recommendation (coordination costs a
// store; it is recommended only where it does at least as well).
func (g *verdictGroup) coordinationPays() []int {
	var pool []*Row
	for _, i := range g.Recommended {
		pool = append(pool, &g.Ranked[i].Row)
	}
	var at []int
	for i := range g.Coordinated {
		// Graded: measured at every condition of the grid, as every
		// recommended row must be (holds_in, worst_regret_pct).
		if r := &g.Coordinated[i].Row; eligible(r) && g.Coordinated[i].Graded {
			pool = append(pool, r)
			at = append(at, i)
		}
	}
	if len(at) == 0 || (len(g.Ranked) > 0 && g.Ranked[0].Repeats < minRepeats) {
		return nil
	}
	// Steps 2 and 3 over the recommendation and the coordinated rows: a
	// coordinated row is picked only where its worst regret is within the
	// margin of the smallest and it is the lightest, then the simplest (a
	// store makes it the less simple of equals: the recommendation stays).
	regret := func(r *Row) float64 {
		for i := range g.Coordinated {
			if &g.Coordinated[i].Row == r {
				return g.Coordinated[i].WorstRegret
			}
		}
		for _, i := range g.Recommended {
			if &g.Ranked[i].Row == r {
				return g.Ranked[i].WorstRegret
			}
		}
		return math.Inf(1)
	}
	least := slices.MinFunc(pool, func(a, b *Row) int { return cmp.Compare(regret(a), regret(b)) })
	near := filter(pool, func(r *Row) bool { return regret(r) <= regret(least)+equivalenceMargin })
	if len(near) == 0 {
		return nil
	}
	// Step 4, as choose applies it, on each of near's rows before the
	// lightest is taken: a coordinated retrier that neither answers
	// retryGain points more than none at the given conditions nor is
	// none's equivalent with no more attempts is not worth its store.
	var given []*Row
	for i := range g.Ranked {
		if r := &g.Ranked[i].Row; candidate(r) {
			given = append(given, r)
		}
	}
	ref := reference(given)
	near = filter(near, func(r *Row) bool { ok, _ := passes(r, ref); return ok })
	if len(near) == 0 {
		return nil
	}
	pick := lightest(near)
	var out []int
	for _, i := range at {
		if &g.Coordinated[i].Row == pick {
			out = append(out, i)
		}
	}
	return out
}

// Recommendations are the recommended rows, in rank order.
func (g *verdictGroup) Recommendations() []*placed {
	var out []*placed
	for _, i := range g.Recommended {
		out = append(out, &g.Ranked[i])
	}
	return out
}

// recommended reports whether the row at i of Ranked is recommended.
func (g *verdictGroup) recommended(i int) bool { return slices.Contains(g.Recommended, i) }

// Name is the group as the outputs head it: "1.5x, 16 clients", and
// ", 3 attempts" for the SDKs' cap.
func (g *verdictGroup) Name() string {
	s := fmt.Sprintf("%s, %d %s", g.Load, g.Clients, plural(g.Clients, "client", "clients"))
	if g.SDKCap {
		s += fmt.Sprintf(", the SDKs' cap (%d attempts)", g.MaxAttempts)
	}
	return s
}

// Ceiling is the most of the offered requests any policy can have
// answered past capacity (the capacity over the offered rate, in
// percent), -1 under capacity or when it is unknown.
func (g *verdictGroup) Ceiling() float64 {
	if g.LoadX <= 1 {
		return -1
	}
	return 100 / g.LoadX
}

// row returns the group's row of the policy named name, or nil.
func (g *verdictGroup) row(name string) *Row {
	for i := range g.Ranked {
		if g.Ranked[i].Policy == name {
			return &g.Ranked[i].Row
		}
	}
	return nil
}

// names are the policies of rows, comma-separated.
func policyNames(rows []*placed) string {
	var n []string
	for _, r := range rows {
		n = append(n, r.Policy)
	}
	return strings.Join(n, ", ")
}

// RecommendationSentence says what the group recommends, with its numbers.
func (g *verdictGroup) RecommendationSentence() string {
	name, rest := g.recommendationParts()
	return name + rest
}

// recommendationParts are the recommendation's policy names and the rest
// of its sentence, for a writer that sets the names apart.
func (g *verdictGroup) recommendationParts() (name, rest string) {
	recs := g.Recommendations()
	if len(recs) == 0 {
		return "", "Nothing to recommend: " + g.Why
	}
	r := recs[0]
	name, rest = r.Policy, ": "
	if len(recs) > 1 {
		name, rest = "No clear difference among "+policyNames(recs), ". The first, "+r.Policy+": "
	}
	rest += measureSentence(&r.Row) + "."
	if c := g.Ceiling(); c > 0 {
		rest += fmt.Sprintf(" Past capacity no policy can answer more than about %s of the offered requests.", pct(c))
	}
	return name, rest
}

// measureSentence is a row's measure in words.
func measureSentence(r *Row) string {
	return fmt.Sprintf("%s of offered requests answered within the SLO (95%% interval %s–%s), %s attempts and %s 429s per offered request, successes in %s (p50) and %s (p99)",
		pct(r.SuccessInSLOPct), pct(r.CILow), pct(r.CIHigh), ratio(r.AttemptsPerRequest), ratio(r.HTTP429PerRequest),
		millis(r.SuccessP50MS), millis(r.SuccessP99MS))
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

// twin is the group of the other cap for the same load and fleet size,
// or nil.
func (g *verdictGroup) twin(groups []verdictGroup) *verdictGroup {
	for i := range groups {
		o := &groups[i]
		if o.Load == g.Load && o.Clients == g.Clients && o.SDKCap != g.SDKCap {
			return o
		}
	}
	return nil
}

// picks are the recommended policies' names, in name order: what two
// verdicts are compared on.
func (g *verdictGroup) picks() []string {
	var n []string
	for _, r := range g.Recommendations() {
		n = append(n, r.Policy)
	}
	slices.Sort(n)
	return n
}

// SameUnderBothCaps reports whether the verdict at the lab's cap and at
// the SDKs' recommend the same policies; ok is false without a twin.
func (g *verdictGroup) SameUnderBothCaps(groups []verdictGroup) (same, ok bool) {
	t := g.twin(groups)
	if t == nil {
		return false, false
	}
	return slices.Equal(g.picks(), t.picks()), true
}

// common are the names in both a and b, in a's order.
func common(a, b []string) []string {
	var out []string
	for _, n := range a {
		if slices.Contains(b, n) {
			out = append(out, n)
		}
	}
	return out
}

// capLine says, for the group of the lab's cap, whether the SDKs' cap
// changes the verdict; "" for the SDKs' cap's group or without a twin.
func (g *verdictGroup) capLine(groups []verdictGroup) string {
	if g.SDKCap {
		return ""
	}
	t := g.twin(groups)
	if t == nil || len(g.Unfinished) > 0 || len(t.Unfinished) > 0 {
		return ""
	}
	if same, _ := g.SameUnderBothCaps(groups); same {
		return fmt.Sprintf("Under the SDKs' cap (%d attempts) the verdict is the same.", t.MaxAttempts)
	}
	if both := common(g.picks(), t.picks()); len(both) > 0 {
		return fmt.Sprintf("Under the SDKs' cap (%d attempts) the verdict agrees: %s recommended under both caps (%s under the SDKs').",
			t.MaxAttempts, strings.Join(both, ", "), strings.Join(t.picks(), ", "))
	}
	other := "nothing"
	if p := t.picks(); len(p) > 0 {
		other = strings.Join(p, ", ")
	}
	return fmt.Sprintf("Under the SDKs' cap (%d attempts) the verdict differs: %s. Here the attempts cap decides, not the policy alone.", t.MaxAttempts, other)
}

// coordinatedLine says what a fleet that shares its state would use; ""
// without coordinated rows.
func (g *verdictGroup) coordinatedLine() string {
	if len(g.Coordinated) == 0 {
		return ""
	}
	if len(g.CoordinatedPick) == 0 {
		var n []string
		for i := range g.Coordinated {
			n = append(n, g.Coordinated[i].Policy)
		}
		return "Sharing the fleet's state does not pay here: " + strings.Join(n, ", ") + ", ranked apart, does no better than the recommendation, for the cost of a shared store."
	}
	r := &g.Coordinated[g.CoordinatedPick[0]].Row
	return "A fleet that can share its retry owners' state (the coordinated rows, ranked apart): " + r.Policy + ", " + briefly(r) + "."
}
