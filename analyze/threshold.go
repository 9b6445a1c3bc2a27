package analyze

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ptuprobe/ptuprobe/results"
)

// Threshold is one --fail-if comparison over an Analysis, such as
// "overall.p99_ms>20000" or "errors>0".
type Threshold struct {
	Expr     string  // as given, trimmed
	Selector string  // "overall", "burst", "scheduled", a raw group name, or "" for a top-level metric
	Metric   string  // "p99_ms", "count", "errors", …
	Op       string  // one of > >= < <= == !=
	Value    float64 // the bound
	// Change makes the term compare the change from a baseline run
	// (analyze --baseline), in percent of the baseline's figure: written
	// with a sign and a percent sign, "ttft_p99>+10%", "success_pct<-2%".
	// Evaluate cannot measure it; EvaluateChange does.
	Change bool
}

// Selectors with a meaning of their own; any other selector is a raw group
// name (as in the data, before --label).
const (
	SelectOverall   = "overall"
	SelectBurst     = "burst"
	SelectScheduled = "scheduled"
)

// TopLevelMetrics are the metrics written without a group selector. The
// request metrics (RequestMetrics) are among them, meaning Overall's.
var TopLevelMetrics = append([]string{"errors", "attempts", "total_429", "late"}, RequestMetrics...)

// RequestMetrics are the metrics of a group's requests (requests.go),
// with or without a group selector: counts, the success share in percent,
// percentiles of the successful requests' latency and ttfb in ms, and
// rates per second over the group's span. "latency.p99_ms" is read as
// "latency_p99_ms" (so the selectors latency and ttfb are taken, as
// overall is).
var RequestMetrics = []string{
	"requests", "succeeded", "failed", "success_pct", "http_429", "http_4xx", "http_5xx", "transport_errors",
	"planned", "not_sent", "planned_success_pct",
	"latency_p50_ms", "latency_p90_ms", "latency_p95_ms", "latency_p99_ms", "latency_max_ms",
	"ttfb_p50_ms", "ttfb_p90_ms", "ttfb_p95_ms", "ttfb_p99_ms", "ttfb_max_ms",
	"requests_per_s", "output_tokens_per_s",
	"ttft_p50_ms", "ttft_p90_ms", "ttft_p95_ms", "ttft_p99_ms", "ttft_max_ms",
	"tpot_p50_ms", "tpot_p90_ms", "tpot_p95_ms", "tpot_p99_ms", "tpot_max_ms",
	"itl_p50_ms", "itl_p90_ms", "itl_p95_ms", "itl_p99_ms", "itl_max_ms",
	"request_output_tokens_per_s",
	"goodput", "goodput_per_s",
}

// percentMetrics are the metrics that are a share in percent: their bound
// may carry a percent sign ("goodput<95%").
var percentMetrics = []string{"success_pct", "planned_success_pct", "goodput"}

// tokenKinds are the request values published as percentiles, beside
// latency and ttfb (dottedRequestMetric).
var requestKinds = []string{"latency", "ttfb", "ttft", "tpot", "itl"}

// groupCounters are the per-group metrics that are counts; Statistics
// names (p50_ms, …) are the others, with share_429.
var groupCounters = []string{"count", "attempts", "invalid", "late", "share_429"}

// groupMetrics lists every per-group metric name.
func groupMetrics() []string {
	out := append([]string(nil), groupCounters...)
	for _, s := range Statistics {
		out = append(out, s.Name)
	}
	return append(out, RequestMetrics...)
}

// operators, longest first so ">=" is not read as ">".
var operators = []string{">=", "<=", "==", "!=", ">", "<"}

// maxExprLen bounds a threshold expression.
const maxExprLen = 200

// ParseThreshold parses "[selector.]metric OP number". The metric is
// checked against the known names; the selector is not, since a raw group
// name is only known once the data is read.
func ParseThreshold(expr string) (t Threshold, err error) {
	e := strings.TrimSpace(expr)
	fail := func(format string, a ...any) (Threshold, error) {
		return Threshold{}, fmt.Errorf("%q: %s", clip(e, 64), fmt.Sprintf(format, a...))
	}
	if e == "" {
		return fail("empty expression; want [group.]metric OP number, e.g. overall.p99_ms>20000")
	}
	if len(e) > maxExprLen {
		return fail("longer than %d characters", maxExprLen)
	}
	opAt, op := -1, ""
	for i := 0; i < len(e) && opAt < 0; i++ {
		for _, o := range operators {
			if strings.HasPrefix(e[i:], o) {
				opAt, op = i, o
				break
			}
		}
	}
	if opAt < 0 {
		if strings.Contains(e, "=") {
			return fail("no comparison operator (use == for equality); want one of > >= < <= == !=")
		}
		return fail("no comparison operator; want one of > >= < <= == !=")
	}
	lhs := strings.TrimSpace(e[:opAt])
	rhs := strings.TrimSpace(e[opAt+len(op):])
	if lhs == "" {
		return fail("nothing before %s; want [group.]metric", op)
	}
	percent := strings.HasSuffix(rhs, "%")
	change := percent && (strings.HasPrefix(rhs, "+") || strings.HasPrefix(rhs, "-"))
	num := strings.TrimSpace(strings.TrimSuffix(rhs, "%"))
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return fail("%q after %s is not a number", clip(rhs, 32), op)
	}
	t = Threshold{Expr: e, Op: op, Value: v, Change: change}
	lhs = dottedRequestMetric(lhs)
	defer func() {
		if err == nil && t.Change && !contains(ComparedFigures(), t.Metric) {
			t, err = fail("no change from the baseline is computed of %s (compared: %s)", t.Metric, strings.Join(ComparedFigures(), ", "))
		}
		// A bound in percent is a share's, unless it is a change.
		if percent && !change && t.Metric != "" && !contains(percentMetrics, t.Metric) {
			t, err = fail("%s is not a share in percent: drop the %%, or give a change from the baseline with a sign (+10%%)", t.Metric)
		}
	}()
	if dot := strings.LastIndexByte(lhs, '.'); dot >= 0 {
		t.Selector, t.Metric = strings.TrimSpace(lhs[:dot]), withMS(strings.TrimSpace(lhs[dot+1:]))
		if t.Selector == "" {
			return fail("empty group before %q", "."+t.Metric)
		}
		if !contains(groupMetrics(), t.Metric) {
			return fail("unknown group metric %q (known: %s)", clip(t.Metric, 32), strings.Join(groupMetrics(), ", "))
		}
		if strings.ContainsAny(t.Selector, "<>=!") {
			return fail("more than one comparison operator")
		}
		return t, nil
	}
	t.Metric = withMS(lhs)
	if !contains(TopLevelMetrics, t.Metric) {
		return fail("unknown metric %q: top-level metrics are %s; group metrics need a group, e.g. overall.%s", clip(t.Metric, 32), strings.Join(TopLevelMetrics, ", "), "p99_ms")
	}
	return t, nil
}

// withMS reads a percentile named without its unit ("ttft_p99",
// "p99") as the metric of that name in ms.
func withMS(m string) string {
	if contains(groupMetrics(), m) || contains(TopLevelMetrics, m) || !contains(groupMetrics(), m+"_ms") {
		return m
	}
	return m + "_ms"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Verdict is a Threshold evaluated over an Analysis.
type Verdict struct {
	Threshold
	// Measured is the value compared, when Measurable.
	Measured   float64
	Measurable bool
	// Breached is true when the comparison holds: the run fails.
	Breached bool
	// Note says why a threshold could not be measured, or which group a
	// shape selector resolved to.
	Note string
}

// Evaluate measures t over a. A metric that cannot be measured (a
// percentile of a group below --min-group, share_429 without ptuprobe
// attempts) does not breach: a tail that was not observed cannot exceed a
// bound; pair it with "GROUP.count<N" to require data. A group that is not
// in the analysis counts as empty.
func (t Threshold) Evaluate(a *Analysis) Verdict {
	v := Verdict{Threshold: t}
	if t.Change {
		return t.evaluateChange(a, v)
	}
	if contains(RequestMetrics, t.Metric) {
		g := &a.Overall
		if t.Selector != "" {
			g, v.Note = a.selectGroup(t.Selector)
		}
		return t.evaluateRequests(a, g, v)
	}
	if t.Selector == "" {
		switch t.Metric {
		case "errors":
			v.Measured = float64(a.Totals.Errors)
		case "attempts":
			v.Measured = float64(a.Totals.Attempts)
		case "total_429":
			v.Measured = float64(a.Totals.Total429)
		case "late":
			v.Measured = float64(a.Totals.Late)
		}
		v.Measurable = true
		v.Breached = compare(v.Measured, t.Op, t.Value)
		return v
	}
	g, note := a.selectGroup(t.Selector)
	v.Note = note
	if g == nil {
		g = &Group{}
	}
	switch t.Metric {
	case "count":
		v.Measured, v.Measurable = float64(g.Count()), true
	case "attempts":
		v.Measured, v.Measurable = float64(g.Attempts), true
	case "invalid":
		v.Measured, v.Measurable = float64(g.NoWait.Invalid), true
	case "late":
		v.Measured, v.Measurable = float64(g.Late), true
	case "share_429":
		v.Measured, v.Measurable = g.Share429()
		if !v.Measurable {
			v.Note = joinNote(v.Note, "no ptuprobe attempts in this group")
		}
	default:
		v.Measured, v.Measurable = g.Stats[t.Metric]
		if !v.Measurable {
			v.Note = joinNote(v.Note, fmt.Sprintf("%d usable waits, below the minimum group size %d", g.Count(), a.MinGroup))
		}
	}
	if v.Measurable {
		v.Breached = compare(v.Measured, t.Op, t.Value)
	}
	return v
}

// isPercentileName reports whether name is a percentile of a kind of
// request value: latency_p99_ms, itl_max_ms…
func isPercentileName(name string) bool {
	kind, suffix, _ := strings.Cut(name, "_")
	if !contains(requestKinds, kind) {
		return false
	}
	for _, p := range requestPercentiles {
		if p.Suffix == suffix {
			return true
		}
	}
	return false
}

// dottedRequestMetric rewrites "[group.]latency.p99_ms" (and ttfb., ttft.,
// tpot., itl.) as "[group.]latency_p99_ms".
func dottedRequestMetric(lhs string) string {
	for _, kind := range requestKinds {
		i := strings.LastIndex(lhs, kind+".")
		if i < 0 || (i > 0 && lhs[i-1] != '.') {
			continue
		}
		if name := withMS(kind + "_" + lhs[i+len(kind)+1:]); contains(RequestMetrics, name) {
			return lhs[:i] + name
		}
	}
	return lhs
}

// evaluateRequests measures a request metric of g (nil: a group not in
// the analysis). Without ptuprobe attempts nothing is known of requests,
// so nothing is measured; a latency with no successful request, or a
// rate without a span, is not measured either.
func (t Threshold) evaluateRequests(a *Analysis, g *Group, v Verdict) Verdict {
	if !a.HasRequests() {
		v.Note = joinNote(v.Note, "no ptuprobe attempts in the input (foreign CSVs carry no requests)")
		return v
	}
	if g == nil {
		g = &Group{}
	}
	r := &g.Requests
	count := map[string]int{
		"requests": r.Requests, "succeeded": r.Succeeded, "failed": r.Failed(), "http_429": r.HTTP429,
		"http_4xx": r.HTTP4xx, "http_5xx": r.HTTP5xx, "transport_errors": r.TransportErrors,
		"planned": r.Planned, "not_sent": r.NotSent(),
	}
	switch name := t.Metric; {
	case name == "success_pct":
		v.Measured, v.Measurable = r.SuccessPct()
	case name == "planned_success_pct":
		v.Measured, v.Measurable = r.PlannedSuccessPct()
	case name == "requests_per_s":
		v.Measured, v.Measurable = r.RequestsPerS()
	case name == "output_tokens_per_s":
		v.Measured, v.Measurable = r.OutputTokensPerS()
	case name == "request_output_tokens_per_s":
		v.Measured, v.Measurable = r.RequestOutputTokensPerS()
	case name == "goodput" || name == "goodput_per_s":
		if a.SLO.IsZero() {
			v.Note = joinNote(v.Note, "no --slo given: goodput is not counted")
			return v
		}
		gp := goodputOf(g)
		v.Measured, v.Measurable = gp.SharePct, gp.Planned > 0
		if name == "goodput_per_s" {
			_, v.Measurable = r.SpanS()
			v.Measured = gp.PerS
		}
	case isPercentileName(name):
		v.Measured = r.percentileByName(name)
		v.Measurable = !math.IsNaN(v.Measured)
	default:
		v.Measured, v.Measurable = float64(count[name]), true
	}
	if !v.Measurable {
		v.Note = joinNote(v.Note, "not measurable: no successful request, or no span of send times")
		v.Measured = 0
		return v
	}
	v.Breached = compare(v.Measured, t.Op, t.Value)
	return v
}

// evaluateChange measures the change of t's figure from the baseline
// (a.Baseline), in percent of the baseline's figure. A figure either run
// does not measure, or whose baseline is 0, is not measured.
func (t Threshold) evaluateChange(a *Analysis, v Verdict) Verdict {
	if a.Baseline == nil {
		v.Note = "a change needs a baseline run (--baseline)"
		return v
	}
	label := OverallLabel
	if t.Selector != "" {
		g, note := a.selectGroup(t.Selector)
		v.Note = note
		if g == nil {
			return v
		}
		label = g.Label
	}
	ch := a.Baseline.Find(label, t.Metric)
	switch {
	case ch == nil:
		v.Note = joinNote(v.Note, fmt.Sprintf("%s of %s is not measured in both runs, or not compared (docs/thresholds.md)", t.Metric, label))
		return v
	case math.IsNaN(ch.Pct):
		v.Note = joinNote(v.Note, "the baseline's figure is 0: no change in percent")
		return v
	}
	v.Measured, v.Measurable = ch.Pct, true
	v.Breached = compare(v.Measured, t.Op, t.Value)
	if ch.Noise != NoiseNotEstimate {
		v.Note = joinNote(v.Note, fmt.Sprintf("from %s to %s; the change is %s the runs' noise", formatFigure(ch.Base), formatFigure(ch.Now), map[Noise]string{NoiseBeyond: "beyond", NoiseWithin: "within"}[ch.Noise]))
	}
	return v
}

func formatFigure(v float64) string { return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64) }

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// selectGroup resolves a selector. "burst" and "scheduled" mean the group
// whose raw name is the shape's default (burst-shaped), else the group
// published under that default's label, else the only group of that shape; a raw name matches the group it was merged into; a
// published label matches too.
func (a *Analysis) selectGroup(sel string) (*Group, string) {
	if sel == SelectOverall {
		return &a.Overall, ""
	}
	if sel == SelectBurst || sel == SelectScheduled {
		def, shape := results.GroupBurst, results.ShapeBurst
		if sel == SelectScheduled {
			def, shape = results.GroupScheduled, results.ShapeScheduled
		}
		if g := a.groupByRaw(def); g != nil {
			return g, ""
		}
		// A foreign CSV renamed to the default label (--label x="Burst-shaped source").
		if g := a.GroupByLabel(DefaultLabels[def]); g != nil {
			return g, ""
		}
		var found []*Group
		for i := range a.Groups {
			if a.Groups[i].Shape == shape {
				found = append(found, &a.Groups[i])
			}
		}
		switch len(found) {
		case 1:
			return found[0], fmt.Sprintf("%s is group %q", sel, found[0].Label)
		case 0:
			return nil, fmt.Sprintf("no %s-shaped group in the input", sel)
		default:
			return nil, fmt.Sprintf("%d groups have the %s shape; name one by its group", len(found), sel)
		}
	}
	if g := a.groupByRaw(sel); g != nil {
		return g, ""
	}
	if g := a.GroupByLabel(sel); g != nil {
		return g, ""
	}
	return nil, fmt.Sprintf("no group %q in the input", clip(sel, results.MaxGroupLen))
}

func (a *Analysis) groupByRaw(raw string) *Group {
	for i := range a.Groups {
		if contains(a.Groups[i].Raw, raw) {
			return &a.Groups[i]
		}
	}
	return nil
}

func compare(x float64, op string, y float64) bool {
	switch op {
	case ">":
		return x > y
	case ">=":
		return x >= y
	case "<":
		return x < y
	case "<=":
		return x <= y
	case "==":
		return x == y
	case "!=":
		return x != y
	}
	return false
}
