package report

import (
	"encoding/json"
	"io"
	"math"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/internal/num"
)

// The requests themselves: how many succeeded, how the rest failed, and
// how long the successful took (analyze.Requests). Foreign CSVs hold 429
// events only, so a report of them says the requests are unknown rather
// than print zeros.

// requestsIntro says what the requests table counts and over what.
var requestsIntro = cat(
	Code("planned"), Plain(" counts the requests a command planned and handed to its sender (their first attempts, sent or not); "),
	Code("requests"), Plain(" the HTTP attempts sent, retries included, each in one class: "),
	Code("ok"), Plain(" is a 2xx without an error ("), Code("success"), Plain(" is ok over planned); "),
	Code("429"), Plain(" refused by admission; "),
	Code("4xx"), Plain(" every other 4xx; "),
	Code("transport"), Plain(" no response or an error class (a refused connection, a timeout, a body cut short). "),
	Code("not sent"), Plain(" counts the planned requests never sent at all: their retry owner gave up before sending them (decision "),
	Code("give-up-local"), Plain("), or the run was stopped while they waited ("), Code("interrupted"), Plain("). "),
	Plain("Latency ("), Code("latency_ms"), Plain(") and ttfb ("), Code("ttfb_ms"),
	Plain(", the response headers, or a streamed answer's first event: its time to first token) are percentiles (type 7) over the successful requests only. "),
	Plain("Rates are per second over the group's span: the rows of one shape laid over one another from their starts (a fleet's workers share one), from the first send to the last response, and the spans of the burst and scheduled plans added."),
)

// requestsUnknown is what the report says without ptuprobe attempts.
const requestsUnknown = "Unknown: the inputs are foreign CSVs, which record 429 events only, not requests."

// requestRows are Overall, then the groups that hold requests.
func requestRows(a *analyze.Analysis) []*analyze.Group {
	var out []*analyze.Group
	for _, g := range rows(a) {
		if g.Requests.Has() {
			out = append(out, g)
		}
	}
	return out
}

// requestsTable is the requests table of summary.md, the terminal and
// report.html: one row per group with requests, Overall first.
func requestsTable(a *analyze.Analysis) *Table {
	// "group", not the percentile table's "source group": a script that
	// cuts the percentile table from the printed summary finds only it.
	t := &Table{ID: "requests-table", Head: []Text{
		Plain("group"), Plain("planned"), Plain("requests"), Plain("ok"), Plain("success"),
		Plain("429"), Plain("4xx"), Plain("5xx"), Plain("transport"), Plain("not sent"),
		Plain("latency p50"), Plain("latency p90"), Plain("latency p99"),
		Plain("ttfb p50"), Plain("ttfb p99"), Plain("requests/s"), Plain("output tokens/s"),
	}}
	for _, g := range requestRows(a) {
		r := &g.Requests
		row := []Text{labelText(g.Label), countText(r.Planned), countText(r.Requests), countText(r.Succeeded)}
		if pct, ok := r.PlannedSuccessPct(); ok {
			row = append(row, Text{{Text: num.Decimal(pct, 1) + "%", Value: num.Decimal(pct, 2)}})
		} else {
			row = append(row, missing)
		}
		row = append(row, countText(r.HTTP429), countText(r.HTTP4xx), countText(r.HTTP5xx), countText(r.TransportErrors), countText(r.NotSent()))
		for _, v := range []float64{r.LatencyPercentile(50), r.LatencyPercentile(90), r.LatencyPercentile(99), r.TTFBPercentile(50), r.TTFBPercentile(99)} {
			row = append(row, optionalMillis(v))
		}
		row = append(row, optionalRate(r.RequestsPerS()), optionalRate(r.OutputTokensPerS()))
		t.Rows = append(t.Rows, row)
	}
	return t
}

func optionalMillis(v float64) Text {
	if math.IsNaN(v) {
		return missing
	}
	return millisText(v)
}

func optionalRate(v float64, ok bool) Text {
	if !ok {
		return missing
	}
	return Text{{Text: Grouped(v), Value: Number(v)}}
}

// requestsBlocks are the requests table and its note, or the line that
// says the requests are unknown.
func requestsBlocks(a *analyze.Analysis) []Block {
	if !a.HasRequests() {
		return []Block{{Para: Plain(requestsUnknown)}}
	}
	return []Block{{Table: requestsTable(a)}, {Para: requestsIntro}}
}

// WriteRequestsTable writes the requests table in Markdown, as on the
// terminal; nothing when the inputs hold no ptuprobe attempt.
func WriteRequestsTable(w io.Writer, a *analyze.Analysis) error {
	if !a.HasRequests() {
		return nil
	}
	_, err := io.WriteString(w, requestsTable(a).markdown())
	return err
}

func requestsSection(a *analyze.Analysis, _ Options) (Section, bool) {
	return Section{ID: "requests", Heading: "Requests: success, latency, throughput", Blocks: requestsBlocks(a)}, true
}

// jsonRequests is the "requests" block of analysis.json: Known false
// (and nothing else) for foreign CSVs alone.
type jsonRequests struct {
	Known  bool                  `json:"known"`
	Note   string                `json:"note"`
	Over   jsonFields            `json:"overall,omitempty"`
	Groups map[string]jsonFields `json:"groups,omitempty"`
}

// jsonFields is a JSON object whose members keep their order: a group's
// requests (requestStatsJSON), whose percentiles come in threes.
type jsonFields []jsonField

type jsonField struct {
	key   string
	value any
}

// MarshalJSON writes the members in their order, each value as
// encoding/json writes it.
func (f jsonFields) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, m := range f {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// percentiles adds name's p50, p90 and p99 in ms, of pct; null where
// pct is NaN (nothing to measure).
func (f jsonFields) percentiles(name string, pct func(p float64) float64) jsonFields {
	for _, p := range [...]struct {
		key string
		p   float64
	}{{"_p50_ms", 50}, {"_p90_ms", 90}, {"_p99_ms", 99}} {
		f = append(f, jsonField{name + p.key, jsonNumber(pct(p.p))})
	}
	return f
}

// jsonNumber is v as analysis.json writes a number, nil (null) for NaN.
func jsonNumber(v float64) *json.Number {
	if math.IsNaN(v) {
		return nil
	}
	x := json.Number(Number(v))
	return &x
}

// requestsJSON is analysis.json's "requests".
func requestsJSON(a *analyze.Analysis) jsonRequests {
	if !a.HasRequests() {
		return jsonRequests{Note: requestsUnknown}
	}
	j := jsonRequests{
		Known:  true,
		Note:   "requests: HTTP attempts sent, success_pct of them; planned: the requests planned (first attempts, sent or not), planned_success_pct of them, not_sent: those never sent (given up locally, or interrupted while they waited); latency and ttfb over the successful requests (2xx, no error class), type 7 percentiles in ms; rates per second over the group's span: per shape, from its first sent_ms to its last sent_ms + latency_ms (rows of one shape laid over one another from their starts), the shapes' spans added; http_4xx excludes 429 (http_429); docs/thresholds.md",
		Over:   requestStatsJSON(&a.Overall.Requests),
		Groups: map[string]jsonFields{},
	}
	for i := range a.Groups {
		if g := &a.Groups[i]; g.Requests.Has() {
			j.Groups[g.Label] = requestStatsJSON(&g.Requests)
		}
	}
	return j
}

// requestStatsJSON is one group's requests; a value that cannot be
// measured (no successful request, no span) is null.
func requestStatsJSON(r *analyze.Requests) jsonFields {
	opt := func(v float64, ok bool) *json.Number {
		if !ok {
			return nil
		}
		return jsonNumber(v)
	}
	span, spanOK := r.SpanS()
	f := jsonFields{
		{"requests", r.Requests}, {"succeeded", r.Succeeded}, {"failed", r.Failed()}, {"success_pct", opt(r.SuccessPct())},
		// Planned and what follows were added after the fields above: the
		// requests planned, those never sent, success per planned request.
		{"planned", r.Planned}, {"not_sent", r.NotSent()}, {"given_up_unsent", r.GivenUpUnsent}, {"interrupted_unsent", r.InterruptedUnsent},
		{"planned_success_pct", opt(r.PlannedSuccessPct())},
		{"http_429", r.HTTP429}, {"http_4xx", r.HTTP4xx}, {"http_5xx", r.HTTP5xx},
		{"transport_errors", r.TransportErrors}, {"other_status", r.OtherStatus},
	}
	f = f.percentiles("latency", r.LatencyPercentile).percentiles("ttfb", r.TTFBPercentile)
	f = append(f, jsonField{"output_tokens", r.OutputTokens}, jsonField{"span_s", optDecimal(span, spanOK)},
		jsonField{"requests_per_s", opt(r.RequestsPerS())}, jsonField{"output_tokens_per_s", opt(r.OutputTokensPerS())},
		// The token-level figures, added after the fields above: over the
		// successful answers that carry each (streamed), in ms.
		jsonField{"streamed", r.Streamed})
	f = f.percentiles("ttft", r.TTFTPercentile).percentiles("tpot", r.TPOTPercentile).percentiles("itl", r.ITLPercentile)
	return append(f, jsonField{"itl_max_ms", jsonNumber(itlMax(r))}, jsonField{"request_output_tokens_per_s", opt(r.RequestOutputTokensPerS())})
}

func optDecimal(v float64, ok bool) *json.Number {
	if !ok {
		return nil
	}
	x := json.Number(num.Decimal(v, 3))
	return &x
}
