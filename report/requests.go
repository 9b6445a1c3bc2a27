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
	Known  bool                         `json:"known"`
	Note   string                       `json:"note"`
	Over   *jsonRequestStats            `json:"overall,omitempty"`
	Groups map[string]*jsonRequestStats `json:"groups,omitempty"`
}

// jsonRequestStats are one group's requests; a value that cannot be
// measured (no successful request, no span) is null.
type jsonRequestStats struct {
	Requests   int          `json:"requests"`
	Succeeded  int          `json:"succeeded"`
	Failed     int          `json:"failed"`
	SuccessPct *json.Number `json:"success_pct"`
	// Planned and what follows were added after the fields above: the
	// requests planned, those never sent, success per planned request.
	Planned           int          `json:"planned"`
	NotSent           int          `json:"not_sent"`
	GivenUpUnsent     int          `json:"given_up_unsent"`
	InterruptedUnsent int          `json:"interrupted_unsent"`
	PlannedSuccessPct *json.Number `json:"planned_success_pct"`
	HTTP429           int          `json:"http_429"`
	HTTP4xx           int          `json:"http_4xx"`
	HTTP5xx           int          `json:"http_5xx"`
	TransportErrors   int          `json:"transport_errors"`
	OtherStatus       int          `json:"other_status"`
	LatencyP50MS      *json.Number `json:"latency_p50_ms"`
	LatencyP90MS      *json.Number `json:"latency_p90_ms"`
	LatencyP99MS      *json.Number `json:"latency_p99_ms"`
	TTFBP50MS         *json.Number `json:"ttfb_p50_ms"`
	TTFBP90MS         *json.Number `json:"ttfb_p90_ms"`
	TTFBP99MS         *json.Number `json:"ttfb_p99_ms"`
	OutputTokens      int64        `json:"output_tokens"`
	SpanS             *json.Number `json:"span_s"`
	RequestsPerS      *json.Number `json:"requests_per_s"`
	OutputTokensPerS  *json.Number `json:"output_tokens_per_s"`
	// The token-level figures, added after the fields above: over the
	// successful answers that carry each (streamed), in ms.
	Streamed                int          `json:"streamed"`
	TTFTP50MS               *json.Number `json:"ttft_p50_ms"`
	TTFTP90MS               *json.Number `json:"ttft_p90_ms"`
	TTFTP99MS               *json.Number `json:"ttft_p99_ms"`
	TPOTP50MS               *json.Number `json:"tpot_p50_ms"`
	TPOTP90MS               *json.Number `json:"tpot_p90_ms"`
	TPOTP99MS               *json.Number `json:"tpot_p99_ms"`
	ITLP50MS                *json.Number `json:"itl_p50_ms"`
	ITLP90MS                *json.Number `json:"itl_p90_ms"`
	ITLP99MS                *json.Number `json:"itl_p99_ms"`
	ITLMaxMS                *json.Number `json:"itl_max_ms"`
	RequestOutputTokensPerS *json.Number `json:"request_output_tokens_per_s"`
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
		Groups: map[string]*jsonRequestStats{},
	}
	for i := range a.Groups {
		if g := &a.Groups[i]; g.Requests.Has() {
			j.Groups[g.Label] = requestStatsJSON(&g.Requests)
		}
	}
	return j
}

func requestStatsJSON(r *analyze.Requests) *jsonRequestStats {
	n := func(v float64) *json.Number {
		if math.IsNaN(v) {
			return nil
		}
		x := json.Number(Number(v))
		return &x
	}
	opt := func(v float64, ok bool) *json.Number {
		if !ok {
			return nil
		}
		return n(v)
	}
	span, spanOK := r.SpanS()
	return &jsonRequestStats{
		Requests: r.Requests, Succeeded: r.Succeeded, Failed: r.Failed(),
		SuccessPct: opt(r.SuccessPct()),
		Planned:    r.Planned, NotSent: r.NotSent(), GivenUpUnsent: r.GivenUpUnsent, InterruptedUnsent: r.InterruptedUnsent,
		PlannedSuccessPct: opt(r.PlannedSuccessPct()),
		HTTP429:           r.HTTP429, HTTP4xx: r.HTTP4xx, HTTP5xx: r.HTTP5xx,
		TransportErrors: r.TransportErrors, OtherStatus: r.OtherStatus,
		LatencyP50MS: n(r.LatencyPercentile(50)), LatencyP90MS: n(r.LatencyPercentile(90)), LatencyP99MS: n(r.LatencyPercentile(99)),
		TTFBP50MS: n(r.TTFBPercentile(50)), TTFBP90MS: n(r.TTFBPercentile(90)), TTFBP99MS: n(r.TTFBPercentile(99)),
		OutputTokens: r.OutputTokens,
		SpanS:        optDecimal(span, spanOK),
		RequestsPerS: opt(r.RequestsPerS()), OutputTokensPerS: opt(r.OutputTokensPerS()),
		Streamed:  r.Streamed,
		TTFTP50MS: n(r.TTFTPercentile(50)), TTFTP90MS: n(r.TTFTPercentile(90)), TTFTP99MS: n(r.TTFTPercentile(99)),
		TPOTP50MS: n(r.TPOTPercentile(50)), TPOTP90MS: n(r.TPOTPercentile(90)), TPOTP99MS: n(r.TPOTPercentile(99)),
		ITLP50MS: n(r.ITLPercentile(50)), ITLP90MS: n(r.ITLPercentile(90)), ITLP99MS: n(r.ITLPercentile(99)), ITLMaxMS: n(itlMax(r)),
		RequestOutputTokensPerS: opt(r.RequestOutputTokensPerS()),
	}
}

func optDecimal(v float64, ok bool) *json.Number {
	if !ok {
		return nil
	}
	x := json.Number(num.Decimal(v, 3))
	return &x
}
