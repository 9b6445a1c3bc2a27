package policylab

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ptuprobe/ptuprobe/internal/num"
)

// PrintTable prints the sweep for a terminal, at most 100 columns wide:
// for a partial sweep the line that says so, the Recommendation per
// (load, clients), one line with its numbers and
// one with the rule's outcomes, then a compact ranked table per group.
// policies.md holds the sentences behind the outcomes.
func PrintTable(w io.Writer, s Sweep) error {
	groups := Judge(s)
	var b strings.Builder
	if st := s.PartialStatus(); st != "" {
		b.WriteString(st + ": nothing is recommended where a policy's runs did not all finish\n\n")
	}
	b.WriteString("Recommendation (see policies.md for the reasons)\n")
	for i := range groups {
		g := &groups[i]
		r := g.Recommendation()
		if r == nil {
			fmt.Fprintf(&b, "  %s: none (%s)\n", g.Name(), g.noneReason())
			continue
		}
		var outcomes []string
		for _, f := range g.Findings {
			outcomes = append(outcomes, f.Rule.Key+" "+outcomeMark[f.Outcome])
		}
		fmt.Fprintf(&b, "  %s: %s  [rules %s]\n", g.Name(), r.Policy, strings.Join(outcomes, ", "))
		line := fmt.Sprintf("    %s/s goodput (%s of capacity), %s att/succ, %s 429/succ, p99 %s",
			num.Grouped(r.GoodputPerS, 2), pct(r.CapacitySharePct), ratio(r.AttemptsPerSuccess),
			ratio(r.HTTP429PerSuccess), millis(r.E2EP99MS))
		if len(g.Ties) > 0 {
			// The names when they fit the line, else how many.
			if named := line + "; tied: " + strings.Join(g.Ties, ", "); utf8.RuneCountInString(named) <= 100 {
				line = named
			} else {
				line += fmt.Sprintf("; %d tied", len(g.Ties))
			}
		}
		b.WriteString(line + "\n")
	}
	for i := range groups {
		g := &groups[i]
		width := len("policy")
		for j := range g.Ranked {
			width = max(width, len(g.Ranked[j].Policy)+1)
		}
		width = min(width, 33)
		fmt.Fprintf(&b, "\n%s\n%-4s %-*s %10s %7s %8s %8s %8s %11s\n", g.Name(), "rank", width, "policy",
			"goodput/s", "cap", "success", "att/succ", "429/succ", "e2e p99")
		for j := range g.Ranked {
			r := &g.Ranked[j]
			name := r.Policy
			if r.Models != "" {
				name += "*"
			}
			if r.Fallback {
				name += "+"
			}
			fmt.Fprintf(&b, "%-4s %-*s %10s %7s %8s %8s %8s %11s\n", r.RankLabel(), width, name,
				num.Grouped(r.GoodputPerS, 2), pct(r.CapacitySharePct), pct(r.SuccessPct),
				ratio(r.AttemptsPerSuccess), ratio(r.HTTP429PerSuccess), millis(r.E2EP99MS))
		}
	}
	if cs := Comparisons(s); len(cs) > 0 {
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
		"rules a–e (see policies.md): yes confirmed, NO contradicted, = no clear difference, - not tested\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// outcomeMark is an Outcome in the terminal's recommendation lines.
var outcomeMark = map[Outcome]string{Confirmed: "yes", Contradicted: "NO", NoClearDifference: "=", NotTested: "-"}

// noneReason says, within a terminal line, why a group recommends none.
func (g *Group) noneReason() string {
	if len(g.Unfinished) == 0 {
		return "no policy under the fair caps had a success"
	}
	if named := "interrupted: " + strings.Join(g.Unfinished, ", ") + " unfinished"; utf8.RuneCountInString(g.Name())+len("  : none ()")+utf8.RuneCountInString(named) <= 100 {
		return named
	}
	return fmt.Sprintf("interrupted: %d policies unfinished", len(g.Unfinished))
}
