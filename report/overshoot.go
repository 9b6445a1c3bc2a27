package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/internal/num"
)

// The overshoot picture in words: summary.md's section and analysis.json's
// "overshoot", from analyze.Overshoot. Every sentence describes what was
// observed in these runs, never how the service works.

// weakRho is the |ρ| under which waits are said to show no relation to a
// measure (Cohen's "small", 0.1); from it to analyze.LineFitsRho they rose
// or fell "slightly".
const weakRho = 0.1

// measure is one of a GroupLoad's three Trends as a reader is told it.
type measure struct {
	key   string // the JSON key
	name  string // "offered requests/s"
	what  string // "offered load", the phrase of a sentence
	none  string // the sentence when no 429 carries the measure
	unit  string // the slope's unit, after "ms per "
	scale float64
	trend func(*analyze.GroupLoad) *analyze.Trend
	value func(float64) string // a value of the measure, for reading
}

// measures are the three, in the order they are published. A slope
// against tokens/s is given per 1,000 tokens/s, so that two decimals keep
// its digits.
var measures = []measure{
	{"requests_per_sec", "offered requests/s", "offered load", "no 429 was placed", "req/s", 1,
		func(g *analyze.GroupLoad) *analyze.Trend { return &g.Requests },
		func(v float64) string { return Grouped(v) + " req/s" }},
	{"tokens_per_sec", "offered tokens/s", "offered tokens", "offered tokens are unknown: a request without max_tokens, or no response reporting prompt_tokens", "1,000 tokens/s", 1000,
		func(g *analyze.GroupLoad) *analyze.Trend { return &g.Tokens },
		func(v float64) string { return Grouped(v) + " tokens/s" }},
	{"utilization_pct", "reported utilization", "the utilization the target reported", "the target reported no utilization with these 429s", "percentage point", 1,
		func(g *analyze.GroupLoad) *analyze.Trend { return &g.Utilization },
		func(v float64) string { return Grouped(v) + "%" }},
}

// windowText words the window: "1 s", "250 ms", "1.5 min".
func windowText(d time.Duration) string {
	switch {
	case d < time.Second:
		return Millis(float64(d) / float64(time.Millisecond))
	case d < time.Minute:
		return Grouped(d.Seconds()) + " s"
	}
	return Grouped(d.Minutes()) + " min"
}

// trendReading is one sentence on a Trend: what the waits did as the
// measure rose, and the line where one fits.
func trendReading(t *analyze.Trend, m measure) string {
	n := Grouped(float64(t.N))
	switch t.Reason {
	case analyze.TrendTooFew:
		if t.N == 0 {
			return m.none
		}
		return fmt.Sprintf("too few 429s to describe (n = %s, fewer than %d)", n, analyze.MinTrend429s)
	case analyze.TrendMeasureConstant:
		return fmt.Sprintf("%s did not vary (%s before each of %s 429s): no relation to describe", capitalize(m.what), rangeText(t, m), n)
	case analyze.TrendWaitsConstant:
		return fmt.Sprintf("every advised wait was the same over %s 429s: no relation to describe", n)
	}
	rho := num.Decimal(t.Rho, 2)
	var s string
	switch a := math.Abs(t.Rho); {
	case a < weakRho:
		return fmt.Sprintf("advised waits showed no relation to %s: Spearman ρ = %s over %s 429s", m.what, rho, n)
	case a < analyze.LineFitsRho && t.Rho > 0:
		s = fmt.Sprintf("advised waits rose slightly with %s: Spearman ρ = %s over %s 429s", m.what, rho, n)
	case a < analyze.LineFitsRho:
		s = fmt.Sprintf("advised waits fell slightly as %s rose: Spearman ρ = %s over %s 429s", m.what, rho, n)
	case t.Rho > 0:
		s = fmt.Sprintf("advised waits rose with %s: Spearman ρ = %s over %s 429s", m.what, rho, n)
	default:
		s = fmt.Sprintf("advised waits fell as %s rose: Spearman ρ = %s over %s 429s", m.what, rho, n)
	}
	switch {
	case t.Line != nil:
		s += fmt.Sprintf("; a line fits with slope %s ms per %s", Grouped(t.Line.Slope*m.scale), m.unit)
	case math.Abs(t.Rho) >= analyze.LineFitsRho:
		s += "; no slope could be taken (too few pairs of 429s at different loads)"
	default:
		s += "; not steadily enough for a line to fit"
	}
	return s
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// lineText is a Trend's line for a table cell, valued as analysis.json
// writes its slope.
func lineText(t *analyze.Trend, m measure) Text {
	if t.Line == nil {
		return missing
	}
	slope := t.Line.Slope * m.scale
	return Text{{Text: Grouped(slope) + " ms per " + m.unit, Value: Number(slope)}}
}

// rhoText is a Trend's ρ for a table cell.
func rhoText(t *analyze.Trend) Text {
	if t.Reason != "" {
		return missing
	}
	rho := num.Decimal(t.Rho, 2)
	return Text{{Text: rho, Value: rho}}
}

// rangeText is a Trend's range for a table cell or a sentence.
func rangeText(t *analyze.Trend, m measure) string {
	switch {
	case t.N == 0:
		return "—"
	case t.Min == t.Max:
		return m.value(t.Min)
	}
	return m.value(t.Min) + " to " + m.value(t.Max)
}

// overshootFigure draws the chart for report.html.
type overshootFigure func(w io.Writer, format ImageFormat) error

// overshootBlocks are the texts and the table of the overshoot picture,
// for summary.md and report.html alike; figure, when not nil, is the
// chart report.html shows after the introduction.
func overshootBlocks(a *analyze.Analysis, figure overshootFigure) []Block {
	o := a.Overshoot
	switch {
	case o == nil && a.ResultsFiles == 0:
		return []Block{{Para: cat(Plain("— a foreign CSV records no intended times, so no 429 can be placed against the load offered before it; "),
			Code(OvershootPNGFile), Plain(" is not drawn."))}}
	case o == nil:
		return []Block{{Para: Plain("Not computed for this analysis (see the warnings).")}}
	}
	blocks := []Block{{Para: cat(
		Plain("Each usable 429 of the ptuprobe results is placed against the load the client offered in the "+windowText(o.Window)+" before it: every request it intended in that window (by "),
		Code("intended_ms"), Plain(": every status and attempt, the 429 itself and whatever was meant for the same instant included), per second. Offered tokens count "),
		Code("prompt_tokens + max_tokens"), Plain(" of each request, unweighted — a refused request reports no usage, so it counts the mean prompt of its run. "),
		Plain("ρ is Spearman's rank correlation of the wait with the measure (ties share their average rank); where |ρ| ≥ "+Number(analyze.LineFitsRho)+" a Theil–Sen line (the median of pairwise slopes, which the long tail cannot pull) gives the slope. "),
		Code(OvershootPNGFile), Plain(" plots it. This describes these runs, not how the service computes its waits."),
	)}}
	if len(o.Groups) == 0 {
		return append(blocks, Block{Para: Plain("No usable 429 could be placed.")})
	}
	if figure != nil {
		blocks = append(blocks, Block{Figure: &Figure{
			Caption: "Each usable 429's advised wait against the requests offered in the " + windowText(o.Window) + " before it: one colour and marker per group, each group's Theil–Sen line where one fits, ρ in the legend.",
			Draw:    figure,
		}})
	}
	table := &Table{ID: "overshoot-table", Head: []Text{
		Plain("source group"), Plain("measure"), Plain("429s"), Plain("range"), Plain("Spearman ρ"), Plain("line (Theil–Sen)"),
	}}
	var readings []Text
	for i := range o.Groups {
		g := &o.Groups[i]
		for _, m := range measures {
			t := m.trend(g)
			table.Rows = append(table.Rows, []Text{labelText(g.Label), Plain(m.name), countText(t.N), Plain(rangeText(t, m)), rhoText(t), lineText(t, m)})
		}
		readings = append(readings, cat(labelText(g.Label), Plain(": "+trendReading(&g.Requests, measures[0])+".")))
	}
	blocks = append(blocks, Block{Table: table}, Block{List: readings})
	var notes []string
	if a.ForeignFiles > 0 {
		notes = append(notes, "429s from foreign CSVs carry no intended times and are not in this picture.")
	}
	if o.Unplaced > 0 {
		notes = append(notes, fmt.Sprintf("%s usable 429s of the results had no intended_ms and are not in it.", Grouped(float64(o.Unplaced))))
	}
	if len(notes) > 0 {
		blocks = append(blocks, Block{Para: Plain(strings.Join(notes, " "))})
	}
	return blocks
}

// writeOvershoot writes summary.md's section on advised waits against
// offered load.
func writeOvershoot(b *strings.Builder, a *analyze.Analysis) {
	for i, blk := range overshootBlocks(a, nil) {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(blk.markdown())
	}
}

// overshootSection is report.html's section on advised waits against
// offered load, with its chart.
func overshootSection(a *analyze.Analysis, opts Options) (Section, bool) {
	var figure overshootFigure
	if a.Overshoot != nil {
		figure = func(w io.Writer, f ImageFormat) error { return WriteOvershoot(w, a, opts, f) }
	}
	return Section{ID: "overshoot", Heading: "Advised wait against offered load", Blocks: overshootBlocks(a, figure)}, true
}

// jsonOvershoot is analysis.json's "overshoot".
type jsonOvershoot struct {
	Description string              `json:"description"`
	WindowMS    json.Number         `json:"window_ms"`
	Chart       string              `json:"chart"`
	Groups      []jsonOvershootLoad `json:"groups"`
	Unplaced    int                 `json:"unplaced_429s"`
}

type jsonOvershootLoad struct {
	Label  string               `json:"label"`
	Trends map[string]jsonTrend `json:"trends"`
}

type jsonTrend struct {
	N           int          `json:"n"`
	Min         *json.Number `json:"min"`
	Max         *json.Number `json:"max"`
	SpearmanRho *json.Number `json:"spearman_rho"`
	Reason      string       `json:"no_rho_because,omitempty"`
	Line        *jsonLine    `json:"line"`
	Reading     string       `json:"reading"`
}

type jsonLine struct {
	Slope       json.Number `json:"slope_ms"`
	Per         string      `json:"per"`
	InterceptMS json.Number `json:"intercept_ms"`
	Pairs       int         `json:"pairs"`
	Sampled     bool        `json:"pairs_sampled"`
}

// overshootJSON is analysis.json's "overshoot"; nil when there is none.
func overshootJSON(a *analyze.Analysis) *jsonOvershoot {
	o := a.Overshoot
	if o == nil {
		return nil
	}
	j := &jsonOvershoot{
		Description: "Each usable 429 of the ptuprobe results against the load offered in the window before it; Spearman's rho of the wait with each measure, and a Theil-Sen line where |rho| >= " + Number(analyze.LineFitsRho) + ". Descriptive of these runs.",
		WindowMS:    json.Number(Number(float64(o.Window) / float64(time.Millisecond))),
		Chart:       OvershootPNGFile,
		Groups:      []jsonOvershootLoad{},
		Unplaced:    o.Unplaced,
	}
	number := func(v float64) *json.Number {
		n := json.Number(Number(v))
		return &n
	}
	for i := range o.Groups {
		g := &o.Groups[i]
		jg := jsonOvershootLoad{Label: g.Label, Trends: map[string]jsonTrend{}}
		for _, m := range measures {
			t := m.trend(g)
			jt := jsonTrend{N: t.N, Reason: t.Reason, Reading: trendReading(t, m)}
			if t.N > 0 {
				jt.Min, jt.Max = number(t.Min), number(t.Max)
			}
			if t.Reason == "" {
				rho := json.Number(num.Decimal(t.Rho, 2))
				jt.SpearmanRho = &rho
			}
			if l := t.Line; l != nil {
				jt.Line = &jsonLine{Slope: json.Number(Number(l.Slope * m.scale)), Per: m.unit,
					InterceptMS: json.Number(Number(l.Intercept)), Pairs: l.Pairs, Sampled: l.Sampled}
			}
			jg.Trends[m.key] = jt
		}
		j.Groups = append(j.Groups, jg)
	}
	return j
}
