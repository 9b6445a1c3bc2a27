package policylab

import (
	"fmt"
	"io"

	"github.com/ptuprobe/ptuprobe/internal/num"
	"strings"
	"unicode/utf8"
)

// PrintTable prints the sweep for a terminal, at most 100 columns wide:
// for a partial sweep the line that says so, the Recommendation per
// (load, clients, cap), one line with its numbers
// and one with the rule's outcomes, then a compact ranked table per
// group. policies.md holds the sentences behind the outcomes.
func PrintTable(w io.Writer, s Sweep) error {
	groups := judge(s)
	var b strings.Builder
	if st := s.PartialStatus(); st != "" {
		b.WriteString(st + ": nothing is recommended where a policy's runs did not all finish\n\n")
	}
	b.WriteString("Recommendation (see policies.md for the reasons)\n")
	for i := range groups {
		g := &groups[i]
		recs := g.Recommendations()
		if len(recs) == 0 {
			fmt.Fprintf(&b, "  %s: nothing recommended: %s\n", g.Name(), g.noneReason())
			continue
		}
		var outcomes []string
		for _, f := range g.Findings {
			outcomes = append(outcomes, f.Rule.Key+" "+outcomeMark[f.Outcome])
		}
		pick := policyNames(recs)
		if len(recs) > 1 {
			pick = "no clear difference among " + pick
		}
		if named := fmt.Sprintf("  %s: %s", g.Name(), pick); utf8.RuneCountInString(named) <= 100 {
			b.WriteString(named)
		} else {
			fmt.Fprintf(&b, "  %s: %s and %d more, no clear difference", g.Name(), recs[0].Policy, len(recs)-1)
		}
		fmt.Fprintf(&b, "  [rules %s]\n", strings.Join(outcomes, ", "))
		r := recs[0]
		fmt.Fprintf(&b, "    %s within SLO (%s–%s), %s att/req, %s 429/req, p50 %s, p99 %s\n",
			pct(r.SuccessInSLOPct), pct(r.CILow), pct(r.CIHigh), ratio(r.AttemptsPerRequest), ratio(r.HTTP429PerRequest),
			millis(r.SuccessP50MS), millis(r.SuccessP99MS))
	}
	for i := range groups {
		g := &groups[i]
		printRanked(&b, g.Name(), g.Ranked)
		if len(g.Coordinated) > 0 {
			printRanked(&b, g.Name()+", coordinated (ranked apart)", g.Coordinated)
		}
	}
	if cs := comparisons(s); len(cs) > 0 {
		b.WriteString("\nCoordinated against alone (same arrivals and caps; alone, each client keeps its own state)\n")
		for _, c := range cs {
			a, o := &c.Alone, &c.Coordinated
			fmt.Fprintf(&b, "  %s: %s\n    429/succ %s -> %s, successes %d -> %d, client gap %s -> %s points%s\n", c.Name(), c.Verdict(),
				ratio(a.HTTP429PerSuccess), ratio(o.HTTP429PerSuccess), a.Succeeded, o.Succeeded,
				ratio10(a.ClientSpreadPts), ratio10(o.ClientSpreadPts), fellBack(o.Fallbacks, o.CoordinatorCalls))
		}
	}
	b.WriteString("\n* models a named client with caps of its own; never recommended.\n" +
		"+ redirects to a second deployment: capacity the others lack; not recommended for one deployment.\n" +
		"~ not steady: its measure still moved within the window; never recommended.\n" +
		"ranked by the recommendation's steps: regret is (2) the worst-case shortfall in points over\n" +
		"the grid (— not measured over it), then (3) att/req; rank 1 is the recommendation (4)\n" +
		"rules a–e (see policies.md): yes confirmed, NO contradicted, = no clear difference, - not tested\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// printRanked prints one ranked list: rank, policy, the measure and its
// interval, the load, the share given up locally and the latency.
func printRanked(b *strings.Builder, title string, rows []placed) {
	width := len("policy")
	for j := range rows {
		width = max(width, len(rows[j].Policy)+2)
	}
	width = min(width, 30)
	fmt.Fprintf(b, "\n%s\n%-4s %-*s %7s %7s %13s %7s %6s %9s %10s\n", title, "rank", width, "policy",
		"regret", "in SLO", "95% interval", "att/req", "local", "p50", "p99")
	for j := range rows {
		r := &rows[j]
		name := r.Policy
		if r.Models != "" && !eligible(&r.Row) {
			name += "*" // none models a client too, and is eligible
		}
		if r.Fallback {
			name += "+"
		}
		if !r.Steady {
			name += "~"
		}
		regret := "—"
		if r.Graded {
			regret = num.Decimal(r.WorstRegret, 1)
		}
		fmt.Fprintf(b, "%-4s %-*s %7s %7s %13s %7s %6s %9s %10s\n", r.RankLabel(), width, name,
			regret, pct(r.SuccessInSLOPct), spread(r.CILow, r.CIHigh, 1, "%"), ratio(r.AttemptsPerRequest),
			pct(share(r.GaveUpLocal, r.Offered)), millis(r.SuccessP50MS), millis(r.SuccessP99MS))
	}
}

// outcomeMark is an Outcome in the terminal's recommendation lines.
var outcomeMark = map[findingOutcome]string{confirmed: "yes", contradicted: "NO", noClearDifference: "=", notTested: "-"}

// noneReason says, within a terminal line, why a group recommends none.
func (g *verdictGroup) noneReason() string {
	if len(g.Unfinished) == 0 {
		return g.Why
	}
	if named := "interrupted: " + strings.Join(g.Unfinished, ", ") + " unfinished"; utf8.RuneCountInString(g.Name())+len("  : nothing recommended: ")+utf8.RuneCountInString(named) <= 100 {
		return named
	}
	return fmt.Sprintf("interrupted: %d policies unfinished", len(g.Unfinished))
}
