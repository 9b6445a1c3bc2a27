package report

import (
	"io"

	"github.com/ptuprobe/ptuprobe/analyze"
)

// HTMLFile is the report as one page.
const HTMLFile = "report.html"

// Setting is a flag given to the command that made a report, shown in
// report.html's settings section.
type Setting struct {
	Name  string // the flag as typed: "--burst-size"
	Value string // its value; empty when Withheld
	// Withheld: the flag was given but its value can name the target or
	// carry free text (an endpoint, a header, a label's raw name), so only
	// its name is shown.
	Withheld bool
}

// WriteHTML writes report.html: every table, chart and text of the report
// on one self-contained page (WritePage). Its numbers are the summary's,
// from the same tables; its charts are those of the report's files, drawn
// as SVG, the ECDF on both a linear and a log axis.
func WriteHTML(w io.Writer, a *analyze.Analysis, opts Options) error {
	p := &Page{
		Title:  "Advised waits after 429 — report",
		Lead:   summaryIntro,
		Footer: PublishedFooter(),
	}
	for _, section := range htmlSections {
		if s, ok := section(a, opts); ok {
			p.Sections = append(p.Sections, s)
		}
	}
	return WritePage(w, p)
}

// PublishedFooter is the closing line of a published page: what it holds.
func PublishedFooter() Text {
	return Plain("Written by ptuprobe. Like every file it publishes, this page holds labels, numbers and settings only: no key, host, deployment or model name, request id, prompt text or send time.")
}

// htmlSections build report.html's sections, in order; one that returns
// false is left out. A new table or chart is one more entry here.
var htmlSections = []func(a *analyze.Analysis, opts Options) (Section, bool){
	percentilesSection,
	requestsSection,
	baselineSection,
	goodputSection,
	tokensSection,
	throughputSection,
	readingSection,
	ecdfSection,
	histogramSection,
	groupsSection,
	overshootSection,
	flagsSection,
	originsSection,
	totalsSection,
	inputSection,
	timelineSection,
	func(_ *analyze.Analysis, opts Options) (Section, bool) {
		return SettingsSection(opts.Command, opts.Settings)
	},
}

func percentilesSection(a *analyze.Analysis, opts Options) (Section, bool) {
	s := Section{ID: "percentiles", Heading: "Percentiles of the advised wait", Blocks: []Block{{Table: percentileTable(a, opts.columns())}}}
	if note, ok := withheldNote(a); ok {
		s.Blocks = append(s.Blocks, Block{Para: note})
	}
	return s, true
}

func readingSection(a *analyze.Analysis, _ Options) (Section, bool) {
	return Section{ID: "reading", Heading: "Reading", Blocks: []Block{{Para: Plain(Reading(a))}}}, true
}

func ecdfSection(a *analyze.Analysis, opts Options) (Section, bool) {
	linear, log := opts, opts
	linear.LogX, log.LogX = false, true
	return Section{ID: "ecdf", Heading: "Empirical CDF", Blocks: []Block{
		{Figure: &Figure{
			Caption: "For each advised wait on the x axis, the share of 429s that advised that long or less: one curve per group (n in the legend) and all groups combined (dashed). Linear axis.",
			Draw:    func(w io.Writer, f ImageFormat) error { return WriteECDF(w, a, linear, f) },
		}},
		{Figure: &Figure{
			Caption: "The same on a log axis, where the short waits and a long tail both show.",
			Draw:    func(w io.Writer, f ImageFormat) error { return WriteECDF(w, a, log, f) },
		}},
	}}, true
}

func histogramSection(a *analyze.Analysis, opts Options) (Section, bool) {
	caption := "How many 429s advised each wait, all groups together, in linear bins."
	if opts.LogX {
		caption = "How many 429s advised each wait, all groups together, in log-spaced bins on a log axis."
	}
	return Section{ID: "histogram", Heading: "Histogram", Blocks: []Block{{Figure: &Figure{
		Caption: caption,
		Draw:    func(w io.Writer, f ImageFormat) error { return writeHistogram(w, a, opts, f) },
	}}}}, true
}

func groupsSection(a *analyze.Analysis, _ Options) (Section, bool) {
	return Section{ID: "groups", Heading: "429s per group", Blocks: []Block{
		{Table: groupCountsTable(a)}, {Para: groupCountsNote()},
	}}, true
}

func flagsSection(a *analyze.Analysis, _ Options) (Section, bool) {
	s := Section{ID: "flags", Heading: "Flags", Blocks: []Block{{Para: flagsIntro()}}}
	if items := flagItems(a); len(items) > 0 {
		s.Blocks = append(s.Blocks, Block{List: items})
	} else {
		s.Blocks = append(s.Blocks, Block{Para: Plain("None.")})
	}
	return s, true
}

func originsSection(a *analyze.Analysis, _ Options) (Section, bool) {
	return Section{ID: "origins", Heading: "Where the waits came from", Blocks: adviceOrigins(a)}, true
}

func totalsSection(a *analyze.Analysis, _ Options) (Section, bool) {
	s := Section{ID: "totals", Heading: "Totals", Blocks: []Block{{List: totalsItems(a)}}}
	for _, t := range totalsTables(a) {
		s.Blocks = append(s.Blocks, Block{Table: t})
	}
	return s, true
}

func inputSection(a *analyze.Analysis, _ Options) (Section, bool) {
	notes := inputNotes(a)
	if len(notes) == 0 {
		return Section{}, false
	}
	items := make([]Text, len(notes))
	for i, n := range notes {
		items[i] = Plain(n)
	}
	return Section{ID: "input", Heading: "Input", Blocks: []Block{{List: items}}}, true
}

func timelineSection(a *analyze.Analysis, opts Options) (Section, bool) {
	note, ok := timelineNote(a, opts)
	if !ok {
		return Section{}, false
	}
	return Section{ID: "timeline", Heading: "Not part of the sanitized set", Blocks: []Block{
		{Para: cat(note, Plain(" It is not on this page."))},
	}}, true
}

// SettingsSection is the section of a page that names the command that
// made it and the flags given to it (values of withheld flags left out);
// false when command is empty.
func SettingsSection(command string, settings []Setting) (Section, bool) {
	if command == "" {
		return Section{}, false
	}
	s := Section{ID: "settings", Heading: "Settings"}
	if len(settings) == 0 {
		s.Blocks = []Block{{Para: cat(Plain("Made by "), Code(command), Plain(" with every flag at its default ("), Code(command+" --help"), Plain(" lists them)."))}}
		return s, true
	}
	table := &Table{ID: "settings-table", Head: []Text{Plain("flag"), Plain("value")}}
	var withheld Text
	for _, st := range settings {
		if st.Withheld {
			if len(withheld) > 0 {
				withheld = append(withheld, Span{Text: ", "})
			}
			withheld = cat(withheld, Code(st.Name))
			continue
		}
		table.Rows = append(table.Rows, []Text{Code(st.Name), Plain(st.Value)})
	}
	s.Blocks = []Block{{Para: cat(Plain("Made by "), Code(command), Plain(" with the flags below; every other flag had its default ("), Code(command+" --help"), Plain(" lists them)."))}}
	if len(table.Rows) > 0 {
		s.Blocks = append(s.Blocks, Block{Table: table})
	}
	if len(withheld) > 0 {
		s.Blocks = append(s.Blocks, Block{Para: cat(Plain("Given, but not shown, as their values can name the target or carry free text: "), withheld, Plain("."))})
	}
	return s, true
}
