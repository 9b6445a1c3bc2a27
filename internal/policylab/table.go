package policylab

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/report"
)

// The texts policies.md and report.html share: the recommendation, the
// fairness line, the ranked tables and the method, each written once so
// the two never word or round a number differently.

// cell is a table cell: what it shows, and the number it shows as
// policies.csv writes it (report.html's data-value), if it is one.
type cell struct{ text, value string }

// table is a ranked table of one group.
type table struct {
	id   string
	head []string
	rows [][]cell
}

// rankedHead are the ranked tables' columns: the policy and the
// recommendation's steps, named (choose.go): (1) the share of the grid's
// conditions in which it is among the best equivalents, (2) its worst
// regret, the measure and its interval, (3) the load, (4) its gain over
// none at the given conditions; then the rest, the latency of the
// successes shown and never ranked on, and the goodput over the whole
// plan (attempts per success and early retries are in policies.csv).
var rankedHead = []string{
	"policy", "rank", "(1) best in", "(2) regret", "within SLO", "95% interval", "(3) attempts / request", "(4) vs none",
	"429s / request", "gave up locally", "success p50", "success p99", "steady", "goodput /s", "redirected", "caps",
}

// rankedTable is a group's ranking as a table; a tie shows "=" before its
// rank.
func rankedTable(g *verdictGroup) table {
	t := table{id: "ranking-" + g.id(), head: rankedHead}
	ref := g.reference()
	for i := range g.Ranked {
		t.rows = append(t.rows, rankedRow(&g.Ranked[i], g.recommended(i), g.conditions, ref))
	}
	return t
}

// coordinatedTable is a group's coordinated rows, ranked apart.
func coordinatedTable(g *verdictGroup) table {
	t := table{id: "coordinated-" + g.id(), head: rankedHead}
	ref := g.reference()
	for i := range g.Coordinated {
		t.rows = append(t.rows, rankedRow(&g.Coordinated[i], slices.Contains(g.CoordinatedPick, i), g.conditions, ref))
	}
	return t
}

// reference is the group's row of none at the given conditions (step 4's
// reference), or nil.
func (g *verdictGroup) reference() *Row {
	var rows []*Row
	for i := range g.Ranked {
		if r := &g.Ranked[i].Row; candidate(r) {
			rows = append(rows, r)
		}
	}
	return reference(rows)
}

func rankedRow(p *placed, recommended bool, conditions int, ref *Row) []cell {
	name := p.Policy
	if recommended {
		name += " (recommended)"
	}
	steady := "yes"
	if !p.Steady {
		steady = "no (" + pp(p.DriftPts) + ")"
	}
	holds, regret := cell{text: "—"}, cell{text: "—"}
	if p.Graded {
		n := int(math.Round(p.HoldsIn * float64(max(conditions, 1))))
		holds = cell{text: fmt.Sprintf("%d of %d", n, max(conditions, 1)), value: num.Decimal(p.HoldsIn, 3)}
		regret = number(p.WorstRegret, 2, " pts")
	}
	gain := cell{text: "—"}
	switch {
	case !retries(&p.Row):
		gain = cell{text: "no retry"}
	case ref != nil && p.Offered > 0:
		d := p.SuccessInSLOPct - ref.SuccessInSLOPct
		gain = cell{text: pp(d), value: num.Decimal(d, 2)}
	}
	return []cell{
		{text: name}, {text: p.RankLabel()}, holds, regret,
		number(p.SuccessInSLOPct, 1, "%"), {text: spread(p.CILow, p.CIHigh, 1, "%")},
		number(p.AttemptsPerRequest, 2, ""), gain, number(p.HTTP429PerRequest, 2, ""),
		{text: pct(share(p.GaveUpLocal, p.Offered)), value: num.Decimal(share(p.GaveUpLocal, p.Offered), 2)},
		number(p.SuccessP50MS, 0, " ms"), number(p.SuccessP99MS, 0, " ms"), {text: steady},
		number(p.GoodputPerS, 2, ""), count(p.Redirected),
		{text: caps(&p.Row)},
	}
}

// number is a cell of v with places decimals and a unit; -1 is "—".
func number(v float64, places int, unit string) cell {
	if v < 0 {
		return cell{text: "—"}
	}
	return cell{text: num.Grouped(v, places) + unit, value: num.Decimal(v, places)}
}

func count(n int) cell {
	return cell{text: num.Grouped(float64(n), 0), value: fmt.Sprint(n)}
}

func spread(lo, hi float64, places int, unit string) string {
	if lo < 0 || hi < 0 {
		return "—"
	}
	return num.Grouped(lo, places) + "–" + num.Grouped(hi, places) + unit
}

// caps says what a row was allowed: its attempts and budget, and the
// client it models when it is not under the fair caps.
func caps(r *Row) string {
	s := fmt.Sprintf("%d %s, %s", r.MaxAttempts, plural(r.MaxAttempts, "attempt", "attempts"), budgetText(r))
	if r.Models != "" {
		s = "models " + r.Models + ": " + s
	}
	if r.Fallback {
		s += ", and a fallback deployment"
	}
	return s
}

func budgetText(r *Row) string {
	if r.Budget <= 0 {
		return "no budget"
	}
	return num.Grouped(float64(r.Budget.Microseconds())/1000, 0) + " ms budget"
}

// markdown renders the table for policies.md.
func (t table) markdown() string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(t.head, " | ") + " |\n|" + strings.Repeat("---|", len(t.head)) + "\n")
	for _, row := range t.rows {
		b.WriteString("|")
		for _, c := range row {
			b.WriteString(" " + strings.ReplaceAll(c.text, "|", `\|`) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// page renders the table for report.html.
func (t table) page() *report.Table {
	out := &report.Table{ID: t.id}
	for _, h := range t.head {
		out.Head = append(out.Head, report.Plain(h))
	}
	for _, row := range t.rows {
		cells := make([]report.Text, len(row))
		for i, c := range row {
			cells[i] = report.Text{{Text: c.text, Value: c.value}}
		}
		out.Rows = append(out.Rows, cells)
	}
	return out
}

// findingLine is a finding as one line: "(a) one owner — confirmed: …".
func findingLine(f finding) string {
	return fmt.Sprintf("(%s) %s — %s: %s", f.Rule.Key, f.Rule.Title, f.Outcome, f.Sentence)
}

// fairness says that the comparison was fair, with the caps every fair
// policy had, and which policies model a named client with caps of their
// own. Should the fair policies' caps differ (a custom spec that sets its
// own), it says so instead.
func fairness(s Sweep) string {
	type capsOf struct {
		attempts int
		budget   string
	}
	var fair, modelled []string
	fairCaps := map[capsOf][]string{}
	var order []capsOf
	modelCaps := map[string]string{}
	for i := range s.Rows {
		r := &s.Rows[i]
		if r.Models != "" {
			if _, ok := modelCaps[r.Policy]; !ok {
				modelled = append(modelled, r.Policy)
				modelCaps[r.Policy] = fmt.Sprintf("%s (%s: %s)", r.Policy, r.Models, strings.TrimPrefix(caps(r), "models "+r.Models+": "))
			}
			continue
		}
		c := capsOf{r.MaxAttempts, budgetText(r)}
		if !slices.Contains(fair, r.Policy) {
			fair = append(fair, r.Policy)
		}
		if !slices.Contains(fairCaps[c], r.Policy) {
			if len(fairCaps[c]) == 0 {
				order = append(order, c)
			}
			fairCaps[c] = append(fairCaps[c], r.Policy)
		}
	}
	var b strings.Builder
	switch len(order) {
	case 0:
		b.WriteString("No policy ran under the fair caps.")
	case 1:
		fmt.Fprintf(&b, "The comparison is fair: every policy under the fair caps (%s) had the same latency budget per request (%s) and the same attempts cap (%d %s, the first included), on the same arrivals and seeds.",
			strings.Join(fair, ", "), strings.TrimSuffix(order[0].budget, " budget"), order[0].attempts, plural(order[0].attempts, "attempt", "attempts"))
	default:
		b.WriteString("The fair policies did not all have the same caps:")
		for i, c := range order {
			sep := ";"
			if i == len(order)-1 {
				sep = "."
			}
			fmt.Fprintf(&b, " %s had %d %s and %s%s", strings.Join(fairCaps[c], ", "), c.attempts, plural(c.attempts, "attempt", "attempts"), c.budget, sep)
		}
	}
	if s.Coordinated {
		b.WriteString(" A row marked" + coordinatedSuffix + " ran with the same caps and arrivals as the row of its policy, its clients sharing their retry owners' state through the --coordinate Redis; in the other rows each client kept its own, as separate processes do.")
	}
	if len(modelled) > 0 {
		var descs []string
		for _, n := range modelled {
			descs = append(descs, modelCaps[n])
		}
		fmt.Fprintf(&b, " Each of %s models a named client and keeps that client's caps: %s. They are shown for comparison and never recommended.",
			strings.Join(modelled, ", "), strings.Join(descs, "; "))
	}
	return b.String()
}

// method lists how the sweep was measured; esc makes the text a profile
// file brings safe where it is written.
func method(s Sweep, esc func(string) string) []string {
	repeats := 0
	if len(s.Rows) > 0 {
		repeats = s.Rows[0].Repeats
	}
	var capacity string
	if s.Capacity > 0 {
		capacity = fmt.Sprintf("Capacity: %s requests/s — %s. Past capacity no policy can have more than capacity ÷ offered rate of the offered requests answered (the ceiling each group states).",
			num.Grouped(s.Capacity, 3), s.CapacityFormula)
	} else {
		capacity = "Capacity: unknown (" + orNone(s.CapacityFormula) + ")."
	}
	clock := "Clock: deterministic — on the embedded simulator the rows are a function of the flags and the seed alone: the same flags give the same files on any machine."
	switch {
	case s.Coordinated && s.Limiter != "the named target":
		clock = "Clock: wall clock — with --coordinate the runs went in real time (Redis's expiries are wall time), each against a fresh embedded simulator on loopback, a few at a time: a rerun differs a little, and the files are not byte-reproducible."
	case !s.Deterministic:
		clock = "Clock: wall clock — against a real target the policies ran in turn in real time, so a rerun can differ by what the deployment served meanwhile."
	}
	caps := fmt.Sprintf("Caps: every fair policy had the lab's cap, %d attempts.", s.MaxAttempts)
	if s.SDKMaxAttempts > 0 {
		caps = fmt.Sprintf("Caps: every fair policy ran twice on the same arrivals, under the lab's cap (%d attempts) and under the SDKs' (%d), each with its own verdict: a persistent retrier's load follows its cap, so a verdict that changes with the cap is the cap's, not the policy's. A run under the SDKs' cap whose twin never took a request past %d attempts is that twin (the same decisions), not run again.",
			s.MaxAttempts, s.SDKMaxAttempts, s.SDKMaxAttempts)
	}
	return []string{
		fmt.Sprintf("Measure: of the requests that arrived in the steady-state window, the share answered 2xx within the SLO (%s; and within the budget), the mean over the repeats with its Student-t 95%% interval; a request given up locally (never answered) is a failure, counted apart. Then the load: attempts (and 429s) per offered request. Then the latency of the window's successes, arrival to answer.",
			millis(float64(s.SLO.Milliseconds()))),
		fmt.Sprintf("Steady state: each run's arrivals go on for %s before the window of %s measured and %s after it, so every measured request meets the load of a plan that neither starts nor ends. A row whose measure moved by %s points or more between the window's halves, clearly (its interval excludes 0), is not steady: a longer plan could rank it otherwise, so it is never recommended.",
			secs(s.Warmup), secs(s.Duration), secs(s.Tail), num.Decimal(steadyPts, 0)),
		"Arrivals: " + orNone(s.Arrival) + ".",
		fmt.Sprintf("Ranking: the tables follow the recommendation's steps. The rows measured at every condition of the grid come first, ranked on their worst-case regret (2); the others follow, ranked on their shortfall against the given conditions' best. Repeatedly, of the rows left, those within %s points of the smallest regret, of those the fewest attempts per offered request (within %s%%) (3), then the simpler policy; rows the steps do not tell apart share a rank (=), in the lab's order. Rows are compared repeat by repeat (every row's repeat k met the same arrivals and seeds). No step reads the latency of the successes: a refused, given-up or late request is a miss in the measure. The ranking orders the tables; the recommendation adds step (4), and a row tied with it that step (4) sets aside ranks after it.",
			num2(equivalenceMargin), num.Decimal(100*loadTolerance, 0)),
		fmt.Sprintf("Recommendation: every eligible policy is a candidate, none included (eligible: under the lab's caps, or never retrying; one deployment's capacity). Per load, fleet size and cap, in four named steps: (1) per condition, the best equivalents: the rows whose paired difference from the condition's best has its 90%% interval within ±%s points (TOST), tested rather than assumed; (2) the smallest worst-case regret, a row's largest shortfall against any condition's best; (3) among the rows within %s points of it that step (4)'s test keeps, the fewest attempts per offered request, then the simpler policy (none, honour, honour with jitter, then whatever adds state or a wait); (4) the test, applied to each of step (3)'s rows before (3) picks: a policy that retries is kept only where it answers at least %s points more than none at the given conditions, or is an equivalent of none's with no more attempts; where it keeps none of them, none or the lightest of its equivalents with no more attempts. The measure counts every offered request (a refused, given-up or late one is a miss): latency is judged over what was offered, never over the survivors. Nothing is recommended from fewer than %d repeats.",
			num2(equivalenceMargin), num2(equivalenceMargin), num2(retryGain), minRepeats),
		gridLine(s),
		caps,
		capacity,
		"Limiter: " + orNone(s.Limiter) + "." + profileLine(s, esc),
		fmt.Sprintf("Repeats: %d, seeds %d to %d.", repeats, s.Seed, s.Seed+int64(max(repeats, 1))-1),
		"Goodput (a column of the tables): requests answered 2xx within their budget per second of the whole plan, warm-up and tail included; attempts per success over the whole plan is in policies.csv. Shown for comparison with earlier labs, not ranked on: past capacity every policy that keeps the deployment busy delivers the same goodput.",
		clock,
	}
}

// profileLine says which profile the simulator ran and how well it fits
// its recorded run, with each group's KS (an untested one says so);
// empty without a profile. Every text of the file goes through esc.
func profileLine(s Sweep, esc func(string) string) string {
	if s.Profile == "" {
		return ""
	}
	if s.Fit == nil {
		return " Profile: " + esc(s.Profile) + " (no fit: its settings were not fitted to a run)."
	}
	var groups []string
	for _, g := range s.Fit.Groups {
		note := ""
		if g.HeldOut {
			note = ", held out"
		}
		if s.Fit.MinWaits > 0 && !g.Tested {
			note += ", untested"
		}
		groups = append(groups, fmt.Sprintf("%s KS %s%s", esc(g.Group), num.Decimal(g.KS, 3), note))
	}
	return fmt.Sprintf(" Profile: %s, fitted (%s model, by %s) to a recorded run: the fit is %s (%s): %s.",
		esc(s.Profile), esc(s.Fit.Model), esc(s.Fit.Source), esc(s.Fit.Quality), strings.Join(groups, ", "), esc(s.Fit.Why))
}

// secs is d in seconds for the method: "30 s".
func secs(d time.Duration) string { return num.Grouped(d.Seconds(), 2) + " s" }

func orNone(s string) string {
	if s == "" {
		return "not stated"
	}
	return s
}

// slug is a load as a file name or an id part: lower case, letters,
// digits and "." kept, anything else "-" ("8/s" is "8-s").
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// id names the group in report.html: "1-5x-16".
func (g *verdictGroup) id() string {
	id := strings.ReplaceAll(slug(g.Load), ".", "-") + "-" + fmt.Sprint(g.Clients)
	if g.SDKCap {
		id += fmt.Sprintf("-%da", g.MaxAttempts)
	}
	return id
}
