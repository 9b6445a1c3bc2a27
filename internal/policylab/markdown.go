package policylab

import (
	"io"
	"strings"

	"github.com/ptuprobe/ptuprobe/report"
)

// MarkdownFile is the lab's reading: the recommendation, the ranked
// tables and the method.
const MarkdownFile = "policies.md"

// pageTitle heads policies.md and report.html.
const pageTitle = "Client policies under a fair budget"

// lead says what the lab compared, before its verdict.
const lead = "The same plan (the same arrivals, the same seeds, the same budget and attempts cap) sent through every client policy, at each load and fleet size. " +
	"A policy is ranked by what its users live with: the share of the offered requests answered within the SLO in the steady state, with its 95% interval over the repeats; then the load it places on the deployment per offered request; then how long its successes take. " +
	"A difference inside the interval is no difference. Descriptive of these runs, not a guarantee."

// writeMarkdown writes policies.md: for a partial sweep, the line that
// says so; a Recommendation per (load, clients, cap) with a sentence per
// part of the documented rule, the line that says the comparison was
// fair, a ranked table per group (the coordinated rows apart), the
// charts' files and the method.
func writeMarkdown(w io.Writer, s Sweep) error {
	groups := judge(s)
	var b strings.Builder
	b.WriteString("# " + pageTitle + "\n\n")
	if note := partialNote(s); note != "" {
		b.WriteString("**" + note + "**\n\n")
	}
	b.WriteString(lead + "\n\n## Recommendation\n")
	for i := range groups {
		g := &groups[i]
		name, rest := g.recommendationParts()
		if g.unfit {
			rest = "Nothing to recommend: " + unfit(s, report.MarkdownText)
		}
		if name != "" {
			name = "**" + name + "**"
		}
		b.WriteString("\n### " + g.Name() + "\n\n" + name + rest + "\n\n")
		for _, line := range []string{g.flipLine(), g.capLine(groups), g.coordinatedLine()} {
			if line != "" {
				b.WriteString(line + "\n\n")
			}
		}
		for _, st := range g.Steps {
			b.WriteString("- " + report.MarkdownText(st) + "\n")
		}
		for _, f := range g.Findings {
			b.WriteString("- " + findingLine(f) + "\n")
		}
	}
	b.WriteString("\n" + fairness(s) + "\n\n## Ranking\n")
	for i := range groups {
		g := &groups[i]
		b.WriteString("\n### " + g.Name() + "\n\n" + rankedTable(g).markdown())
		if len(g.Coordinated) > 0 {
			b.WriteString("\nCoordinated (the fleet shares its retry owners' state), ranked apart:\n\n" + coordinatedTable(g).markdown())
		}
	}
	if lines := coordinationLines(s); len(lines) > 0 {
		b.WriteString("\n## Coordinated against alone\n\n" + coordinationIntro + claimText + ".\n\n")
		for _, l := range lines {
			b.WriteString("- " + l + "\n")
		}
	}
	b.WriteString("\n## Charts\n\n")
	for _, c := range chartFiles(s, groups) {
		b.WriteString("- " + c.title + ": [PNG](" + c.base + ".png), [SVG](" + c.base + ".svg)\n")
	}
	b.WriteString("\n## Method\n\n")
	for _, line := range method(s, report.MarkdownText) {
		b.WriteString("- " + line + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
