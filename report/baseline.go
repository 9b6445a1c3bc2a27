package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/internal/num"
)

// Run over run (analyze --baseline): every figure beside the baseline
// run's, its change and whether the change is beyond the runs' noise.

// baselineIntro says how the noise was estimated.
func baselineIntro(c *analyze.Comparison) Text {
	return cat(
		Plain("Each figure of this run beside the baseline run's (groups matched by label), its change and the 95% interval of the change from a bootstrap over the requests of both runs: "),
		Plain(fmt.Sprintf("%d resamples of each run, seeded (%d), so the same inputs give the same table. ", c.Resamples, c.Seed)),
		Code("beyond"), Plain(" marks a change whose interval leaves out 0, "), Code("within"),
		Plain(" one that the runs' noise may explain; rates over the span are compared without an estimate. Shares are in percent, their changes in points; times in ms. "),
		Plain("A percentile's resample is drawn exactly from the order statistics (Beta draws), a share's count from a binomial."),
	)
}

// baselineTable is one row per compared figure.
func baselineTable(c *analyze.Comparison) *Table {
	t := &Table{ID: "baseline-table", Head: []Text{
		Plain("group"), Plain("figure"), Plain("baseline"), Plain("this run"), Plain("change"), Plain("change %"), Plain("95% interval of the change"), Plain("noise"),
	}}
	for _, ch := range c.Changes {
		interval := missing
		if !math.IsNaN(ch.Low) {
			s := "[" + Number(ch.Low) + ", " + Number(ch.High) + "]"
			interval = Text{{Text: s}}
		}
		pct := missing
		if !math.IsNaN(ch.Pct) {
			pct = Text{{Text: signed(ch.Pct, 1) + "%", Value: num.Decimal(ch.Pct, 2)}}
		}
		t.Rows = append(t.Rows, []Text{
			labelText(ch.Group), Code(ch.Figure),
			Text{{Text: Number(ch.Base), Value: Number(ch.Base)}}, Text{{Text: Number(ch.Now), Value: Number(ch.Now)}},
			Text{{Text: signedNumber(ch.Delta), Value: Number(ch.Delta)}}, pct, interval, Plain(string(ch.Noise)),
		})
	}
	return t
}

func signed(v float64, decimals int) string {
	s := num.Decimal(v, decimals)
	if v > 0 {
		return "+" + s
	}
	return s
}

func signedNumber(v float64) string {
	if v > 0 {
		return "+" + Number(v)
	}
	return Number(v)
}

func baselineBlocks(a *analyze.Analysis) []Block {
	c := a.Baseline
	blocks := []Block{{Table: baselineTable(c)}, {Para: baselineIntro(c)}}
	if len(c.OnlyHere) > 0 || len(c.OnlyBase) > 0 {
		blocks = append(blocks, Block{Para: Plain(fmt.Sprintf("Not compared: %d group(s) of this run only, %d of the baseline only.", len(c.OnlyHere), len(c.OnlyBase)))})
	}
	return blocks
}

func baselineSection(a *analyze.Analysis, _ Options) (Section, bool) {
	if a.Baseline == nil {
		return Section{}, false
	}
	return Section{ID: "baseline", Heading: "Run over run: against the baseline", Blocks: baselineBlocks(a)}, true
}

// WriteBaselineTable writes the comparison in Markdown, as on the
// terminal; nothing without a baseline.
func WriteBaselineTable(w io.Writer, a *analyze.Analysis) error {
	if a.Baseline == nil {
		return nil
	}
	_, err := io.WriteString(w, baselineTable(a.Baseline).markdown())
	return err
}

// jsonBaseline is analysis.json's "baseline".
type jsonBaseline struct {
	Method    string       `json:"method"`
	Resamples int          `json:"resamples"`
	Seed      uint64       `json:"seed"`
	Changes   []jsonChange `json:"changes"`
	OnlyHere  int          `json:"groups_only_here"`
	OnlyBase  int          `json:"groups_only_in_baseline"`
}

type jsonChange struct {
	Group  string       `json:"group"`
	Figure string       `json:"figure"`
	Base   json.Number  `json:"baseline"`
	Now    json.Number  `json:"now"`
	Delta  json.Number  `json:"change"`
	Pct    *json.Number `json:"change_pct"`
	Low    *json.Number `json:"interval_low"`
	High   *json.Number `json:"interval_high"`
	Noise  string       `json:"noise"`
}

func baselineJSON(a *analyze.Analysis) *jsonBaseline {
	c := a.Baseline
	if c == nil {
		return nil
	}
	opt := func(v float64) *json.Number {
		if math.IsNaN(v) {
			return nil
		}
		n := json.Number(Number(v))
		return &n
	}
	j := &jsonBaseline{
		Method:    "bootstrap over the requests of both runs: percentile interval (2.5%, 97.5%) of this run's figure minus the baseline's; beyond when it leaves out 0; rates over the span not estimated",
		Resamples: c.Resamples, Seed: c.Seed, Changes: []jsonChange{},
		OnlyHere: len(c.OnlyHere), OnlyBase: len(c.OnlyBase),
	}
	for _, ch := range c.Changes {
		j.Changes = append(j.Changes, jsonChange{
			Group: ch.Group, Figure: ch.Figure,
			Base: json.Number(Number(ch.Base)), Now: json.Number(Number(ch.Now)), Delta: json.Number(Number(ch.Delta)),
			Pct: opt(ch.Pct), Low: opt(ch.Low), High: opt(ch.High), Noise: string(ch.Noise),
		})
	}
	return j
}
