package policylab

import (
	"io"

	"github.com/ptuprobe/ptuprobe/report"
)

// WriteHTML writes the lab's report.html: the ranked table, the
// simulator's counts, the reading and both charts on one self-contained
// page (report.WritePage), with the texts and numbers of policies.md.
func WriteHTML(w io.Writer, ms []Measure, lab Setup) error {
	ranked := Ranked(ms)
	p := &report.Page{
		Title:  "Client policies on the same traffic",
		Lead:   report.Plain(intro(lab)),
		Footer: report.PublishedFooter(),
		Sections: []report.Section{
			{ID: "policies", Heading: "Policies, ranked", Blocks: []report.Block{{Table: htmlTable("policy-table", tableHead, ranked, tableRow)}}},
		},
	}
	if witnessed(ms) {
		p.Sections = append(p.Sections, report.Section{ID: "witness", Heading: "What the simulator saw", Blocks: []report.Block{
			{Para: report.Inline(witnessIntro)},
			{Table: htmlTable("witness-table", witnessHead, ranked, witnessRow)},
		}})
	}
	p.Sections = append(p.Sections,
		report.Section{ID: "reading", Heading: "Reading", Blocks: []report.Block{{Para: report.Plain(Reading(ranked, lab))}}},
		report.Section{ID: "charts", Heading: "Charts", Blocks: []report.Block{
			{Figure: report.PolicyECDFFigure(curves(ms))},
			{Figure: report.PolicyTradeoffFigure(points(ms))},
		}},
	)
	if s, ok := report.SettingsSection(lab.Command, lab.Settings); ok {
		p.Sections = append(p.Sections, s)
	}
	return report.WritePage(w, p)
}

// htmlTable is a table of policies.md as a table of the page: the same
// cells, each shown as it is.
func htmlTable(id string, head []string, ranked []Measure, row func(*Measure) []string) *report.Table {
	t := &report.Table{ID: id}
	for _, h := range head {
		t.Head = append(t.Head, report.Plain(h))
	}
	for i := range ranked {
		var cells []report.Text
		for _, c := range row(&ranked[i]) {
			cells = append(cells, report.Plain(c))
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}
