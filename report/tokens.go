package report

import (
	"encoding/json"
	"io"
	"math"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/internal/num"
)

// Token-level timing and goodput: what a streamed answer delivered (time
// to first token, time per output token, the gaps between tokens, output
// tokens per second) and how many planned requests met the SLO.

// tokensIntro says what the token table holds.
var tokensIntro = cat(
	Code("streamed"), Plain(" counts the successful answers that carry a time to first token ("), Code("ttft_ms"),
	Plain(": a streamed answer's first content token, from the attempt's send); TTFT and TPOT ("), Code("tpot_ms"),
	Plain(", (latency − TTFT) / (output tokens − 1), vLLM's definition) are percentiles (type 7) over them. "),
	Plain("ITL p50/p90/p99 are percentiles over the answers of each answer's median gap between content events ("), Code("itl_p50_ms"),
	Plain("): the spread of the answers' typical pace, not every gap pooled; "), Code("ITL max"),
	Plain(" is the longest gap of any answer ("), Code("itl_max_ms"), Plain("). "),
	Code("tokens/s per request"), Plain(" is the mean of each successful answer's completion tokens over its latency; "),
	Code("output tokens/s"), Plain(" every successful answer's completion tokens over the group's span."),
)

// hasTokens reports whether the token table has anything to show: a
// streamed answer, or a usage.
func hasTokens(a *analyze.Analysis) bool {
	r := &a.Overall.Requests
	return a.HasRequests() && (r.Streamed > 0 || r.WithUsage > 0)
}

// tokensTable is one row per group with requests, Overall first.
func tokensTable(a *analyze.Analysis) *Table {
	t := &Table{ID: "tokens-table", Head: []Text{
		Plain("group"), Plain("streamed"),
		Plain("TTFT p50"), Plain("TTFT p90"), Plain("TTFT p99"),
		Plain("TPOT p50"), Plain("TPOT p90"), Plain("TPOT p99"),
		Plain("ITL p50"), Plain("ITL p90"), Plain("ITL p99"), Plain("ITL max"),
		Plain("tokens/s per request"), Plain("output tokens/s"),
	}}
	for _, g := range requestRows(a) {
		r := &g.Requests
		row := []Text{labelText(g.Label), countText(r.Streamed)}
		for _, v := range []float64{
			r.TTFTPercentile(50), r.TTFTPercentile(90), r.TTFTPercentile(99),
			r.TPOTPercentile(50), r.TPOTPercentile(90), r.TPOTPercentile(99),
			r.ITLPercentile(50), r.ITLPercentile(90), r.ITLPercentile(99), itlMax(r),
		} {
			row = append(row, optionalMillis(v))
		}
		row = append(row, optionalRate(r.RequestOutputTokensPerS()), optionalRate(r.OutputTokensPerS()))
		t.Rows = append(t.Rows, row)
	}
	return t
}

// itlMax is the longest gap of any answer; NaN without one.
func itlMax(r *analyze.Requests) float64 {
	if r.ITLs() == 0 {
		return math.NaN()
	}
	return r.ITLMaxMS
}

func tokensSection(a *analyze.Analysis, _ Options) (Section, bool) {
	if !hasTokens(a) {
		return Section{}, false
	}
	return Section{ID: "tokens", Heading: "Tokens: time to first token, per output token, between tokens", Blocks: tokensBlocks(a)}, true
}

func tokensBlocks(a *analyze.Analysis) []Block {
	return []Block{{Table: tokensTable(a)}, {Para: tokensIntro}}
}

// goodputIntro says what the goodput counts.
func goodputIntro(a *analyze.Analysis) Text {
	return cat(
		Plain("Under the SLO "), Code(a.SLO.String()),
		Plain(": "), Code("met"), Plain(" counts the planned requests answered 2xx, without an error, within every term (each measured on the request's final attempt, from its send); "),
		Plain("a request refused, failed, timed out or never sent counts against the goodput, never drops out of it. "),
		Code("goodput"), Plain(" is met over planned; "), Code("goodput/s"), Plain(" met over the group's span."),
	)
}

// goodputTable is one row per group with requests, Overall first.
func goodputTable(a *analyze.Analysis) *Table {
	t := &Table{ID: "goodput-table", Head: []Text{
		Plain("group"), Plain("planned"), Plain("met"), Plain("goodput"), Plain("goodput/s"),
	}}
	for _, gp := range a.Goodput() {
		row := []Text{labelText(gp.Group), countText(gp.Planned), countText(gp.Met)}
		if gp.Planned > 0 {
			row = append(row, Text{{Text: num.Decimal(gp.SharePct, 1) + "%", Value: num.Decimal(gp.SharePct, 2)}})
		} else {
			row = append(row, missing)
		}
		row = append(row, optionalRate(gp.PerS, gp.PerS > 0 || gp.Met == 0))
		t.Rows = append(t.Rows, row)
	}
	return t
}

func goodputSection(a *analyze.Analysis, _ Options) (Section, bool) {
	if a.Goodput() == nil {
		return Section{}, false
	}
	return Section{ID: "goodput", Heading: "Goodput under the SLO", Blocks: goodputBlocks(a)}, true
}

func goodputBlocks(a *analyze.Analysis) []Block {
	return []Block{{Table: goodputTable(a)}, {Para: goodputIntro(a)}}
}

// jsonGoodput is analysis.json's "goodput": the SLO and each group's
// goodput, Overall first.
func goodputJSON(a *analyze.Analysis) []jsonGoodputRow {
	gps := a.Goodput()
	if gps == nil {
		return nil
	}
	out := make([]jsonGoodputRow, len(gps))
	for i, gp := range gps {
		out[i] = jsonGoodputRow{Group: gp.Group, Planned: gp.Planned, Met: gp.Met,
			SharePct: json.Number(num.Decimal(gp.SharePct, 2)), PerS: json.Number(num.Decimal(gp.PerS, 3))}
	}
	return out
}

type jsonGoodputRow struct {
	Group    string      `json:"group"`
	Planned  int         `json:"planned"`
	Met      int         `json:"met"`
	SharePct json.Number `json:"share_pct"`
	PerS     json.Number `json:"per_s"`
}

// WriteGoodputTable writes the goodput table in Markdown, as on the
// terminal; nothing without an SLO or ptuprobe requests.
func WriteGoodputTable(w io.Writer, a *analyze.Analysis) error {
	if a.Goodput() == nil {
		return nil
	}
	_, err := io.WriteString(w, goodputTable(a).markdown())
	return err
}

// WriteTokensTable writes the token table in Markdown, as on the
// terminal; nothing when no answer was streamed or carried a usage.
func WriteTokensTable(w io.Writer, a *analyze.Analysis) error {
	if !hasTokens(a) {
		return nil
	}
	_, err := io.WriteString(w, tokensTable(a).markdown())
	return err
}
