package policylab

import (
	"io"
	"strings"

	"github.com/ptuprobe/ptuprobe/report"
)

// scrollCue tells a phone's reader that a ranked table goes on sideways.
const scrollCue = "On a narrow screen each table scrolls sideways; the policy column stays in view, and the verdict's numbers (success within the SLO and its interval, attempts and 429s per request, the successes' latency) come first."

// writeHTML writes the lab's report.html on one self-contained page
// (report.WritePage), with the texts and numbers of policies.md: the
// partial line of an interrupted lab in the lead, the Recommendation per
// (load, clients, cap) first, then the ranked tables, the charts and the
// method, and the settings of the command.
func writeHTML(w io.Writer, s Sweep, setup Setup) error {
	groups := judge(s)
	rec := report.Section{ID: "recommendation", Heading: "Recommendation"}
	for i := range groups {
		g := &groups[i]
		rec.Blocks = append(rec.Blocks, report.Block{Para: report.Plain(g.Name() + " — " + g.RecommendationSentence())})
		for _, line := range []string{g.flipLine(), g.capLine(groups), g.coordinatedLine()} {
			if line != "" {
				rec.Blocks = append(rec.Blocks, report.Block{Para: report.Plain(line)})
			}
		}
		var list []report.Text
		for _, st := range g.Steps {
			list = append(list, report.Plain(st))
		}
		for _, f := range g.Findings {
			list = append(list, report.Plain(findingLine(f)))
		}
		rec.Blocks = append(rec.Blocks, report.Block{List: list})
	}
	rec.Blocks = append(rec.Blocks, report.Block{Para: report.Plain(fairness(s))})

	ranking := report.Section{ID: "ranking", Heading: "Ranking", Blocks: []report.Block{{Para: report.Plain(scrollCue)}}}
	for i := range groups {
		g := &groups[i]
		ranking.Blocks = append(ranking.Blocks,
			report.Block{Para: report.Plain(g.Name())},
			report.Block{Table: rankedTable(g).page()})
		if len(g.Coordinated) > 0 {
			ranking.Blocks = append(ranking.Blocks,
				report.Block{Para: report.Plain(g.Name() + ", coordinated (the fleet shares its retry owners' state), ranked apart")},
				report.Block{Table: coordinatedTable(g).page()})
		}
	}

	coordination := report.Section{ID: "coordination", Heading: "Coordinated against alone",
		Blocks: []report.Block{{Para: report.Plain(coordinationIntro + claimText + ".")}}}
	var compared []report.Text
	for _, l := range coordinationLines(s) {
		compared = append(compared, report.Plain(l))
	}
	coordination.Blocks = append(coordination.Blocks, report.Block{List: compared})

	charts := report.Section{ID: "charts", Heading: "Charts"}
	for _, c := range chartFiles(s, groups) {
		charts.Blocks = append(charts.Blocks, report.Block{Figure: &report.Figure{Caption: c.caption, Draw: c.draw}})
	}

	var items []report.Text
	for _, line := range method(s, report.OneLine) {
		items = append(items, report.Plain(line))
	}
	p := &report.Page{
		Title:    pageTitle,
		Lead:     report.Plain(strings.TrimSpace(partialNote(s) + " " + lead)),
		Footer:   report.PublishedFooter(),
		Sections: []report.Section{rec, ranking},
	}
	if len(compared) > 0 {
		p.Sections = append(p.Sections, coordination)
	}
	p.Sections = append(p.Sections, charts, report.Section{ID: "method", Heading: "Method", Blocks: []report.Block{{List: items}}})
	if sec, ok := report.SettingsSection(setup.Command, setup.Settings); ok {
		p.Sections = append(p.Sections, sec)
	}
	return report.WritePage(w, p)
}
