package analyze

import (
	"math"
	"testing"

	"github.com/ptuprobe/ptuprobe/results"
)

// requestRows is a results file of every outcome class: in group "a",
// three successes (latency 10, 20, 40 ms; ttfb 5, 6, none), a 404, a 429, a
// 503 and a refused connection; in group "b" one success.
func requestRows() []results.Record {
	ok := func(group string, sent, latency, ttfb float64, tokens int) results.Record {
		r := attempt(group, results.ShapeScheduled, 200, -1, results.WaitNone)
		r.SentMS, r.LatencyMS, r.TTFBMS, r.CompletionTokens = sent, latency, ttfb, tokens
		return r
	}
	refused := attempt("a", results.ShapeScheduled, 0, -1, results.WaitNone)
	refused.Error, refused.SentMS, refused.LatencyMS = results.ClassRefused, 900, 1
	bodyCut := ok("a", 500, 30, 3, results.None)
	bodyCut.Error = results.ClassBody
	return []results.Record{
		ok("a", 0, 10, 5, 10), ok("a", 100, 20, 6, 20), ok("a", 200, 40, results.None, 30),
		attempt("a", results.ShapeScheduled, 404, -1, results.WaitNone),
		attempt("a", results.ShapeScheduled, 429, 1000, results.WaitRetryAfterMS),
		attempt("a", results.ShapeScheduled, 503, -1, results.WaitNone),
		refused, bodyCut,
		ok("b", 1000, 1000, 100, results.None),
	}
}

func TestRequestsOfEveryOutcome(t *testing.T) {
	t.Parallel()
	path := resultsFile(t, t.TempDir(), "results.csv", requestRows())
	a, err := analyzeFiles(t, ForeignColumns{}, nil, 1, path)
	if err != nil {
		t.Fatal(err)
	}
	if !a.HasRequests() {
		t.Fatal("HasRequests is false for a results file")
	}
	g := a.GroupByLabel("a")
	r := g.Requests
	if r.Requests != 8 || r.Succeeded != 3 || r.HTTP4xx != 1 || r.HTTP429 != 1 || r.HTTP5xx != 1 || r.TransportErrors != 2 || r.OtherStatus != 0 {
		t.Errorf("group a counts %+v, want 8 requests: 3 ok, one 404, one 429, one 503, 2 transport errors", r)
	}
	if pct, ok := r.SuccessPct(); !ok || pct != 37.5 {
		t.Errorf("success_pct = %v, %v; want 37.5", pct, ok)
	}
	// Type 7 over 10, 20, 40: p50 = 20, p90 = 20 + 0.8·20 = 36.
	if p50, p90 := r.LatencyPercentile(50), r.LatencyPercentile(90); p50 != 20 || math.Abs(p90-36) > 1e-9 {
		t.Errorf("latency p50, p90 = %v, %v; want 20, 36", p50, p90)
	}
	if got := r.TTFBMS; len(got) != 2 || got[0] != 5 || got[1] != 6 {
		t.Errorf("ttfb of the successes %v, want [5 6]: a success without ttfb_ms is left out", got)
	}
	// Span: from sent 0 to the refused connection's 900 + 1 ms.
	if s, ok := r.SpanS(); !ok || s != 0.901 {
		t.Errorf("span %v s, want 0.901", s)
	}
	if rate, _ := r.OutputTokensPerS(); math.Abs(rate-60/0.901) > 1e-9 {
		t.Errorf("output tokens/s %v, want 60/0.901", rate)
	}
	o := a.Overall.Requests
	if o.Requests != 9 || o.Succeeded != 4 || len(o.LatencyMS) != 4 || o.LatencyMS[3] != 1000 {
		t.Errorf("overall %+v, want the 9 requests of both groups, 4 latencies", o)
	}
	if s, _ := o.SpanS(); s != 2 {
		t.Errorf("overall span %v s, want 2 (0 to b's 1000 + 1000 ms)", s)
	}
}

func TestForeignCSVHasNoRequests(t *testing.T) {
	t.Parallel()
	path := writeFile(t, t.TempDir(), "events.csv", lines("retry_after_ms", "100", "200"))
	a, err := analyzeFiles(t, ForeignColumns{}, nil, 1, path)
	if err != nil {
		t.Fatal(err)
	}
	if a.HasRequests() {
		t.Errorf("a foreign CSV reports requests: %+v", a.Overall.Requests)
	}
	th, err := ParseThreshold("success_pct<95")
	if err != nil {
		t.Fatal(err)
	}
	if v := th.Evaluate(a); v.Measurable || v.Breached {
		t.Errorf("success_pct over a foreign CSV = %+v, want not measured", v)
	}
}

func TestRequestThresholds(t *testing.T) {
	t.Parallel()
	path := resultsFile(t, t.TempDir(), "results.csv", requestRows())
	a, err := analyzeFiles(t, ForeignColumns{}, nil, 1, path)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		expr     string
		measured float64
		breached bool
	}{
		{"success_pct<95", 400.0 / 9, true},
		{"a.success_pct>=37.5", 37.5, true},
		{"http_4xx>0", 1, true},
		{"http_5xx>1", 1, false},
		{"a.transport_errors==2", 2, true},
		{"latency.p99_ms>500", 1000 - 0.03*(1000-40), true},
		{"overall.latency.p50_ms<30", 30, false},
		{"b.ttfb_p99_ms==100", 100, true},
		{"a.ttfb.max_ms==6", 6, true},
		{"requests_per_s>4", 4.5, true},
	}
	for _, c := range cases {
		th, err := ParseThreshold(c.expr)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		v := th.Evaluate(a)
		if !v.Measurable || math.Abs(v.Measured-c.measured) > 1e-9 || v.Breached != c.breached {
			t.Errorf("%s: %+v, want measured %v, breached %v", c.expr, v, c.measured, c.breached)
		}
	}
	th, _ := ParseThreshold("c.latency_p99_ms>1")
	if v := th.Evaluate(a); v.Measurable {
		t.Errorf("a group not in the input: %+v, want not measured", v)
	}
}

// TestSpanAddsShapesAndLaysOverRuns: the rows of one shape are laid over
// one another from their starts (two workers of a fleet: one span), and
// the spans of the shapes are added (characterize's burst plan, then its
// scheduled plan).
func TestSpanAddsShapesAndLaysOverRuns(t *testing.T) {
	t.Parallel()
	row := func(shape, worker string, sent, latency float64) results.Record {
		r := attempt(shape, shape, 200, -1, results.WaitNone)
		r.Worker, r.SentMS, r.LatencyMS = worker, sent, latency
		return r
	}
	tally := NewTally(false)
	for _, r := range []results.Record{
		row(results.ShapeBurst, "1/2", 0, 100), row(results.ShapeBurst, "2/2", 50, 450), // burst: 0 to 500 ms
		row(results.ShapeScheduled, "1/2", 0, 10), row(results.ShapeScheduled, "2/2", 1490, 10), // scheduled: 0 to 1500 ms
	} {
		tally.Observe(&r)
	}
	a, err := tally.Analysis(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		group string
		span  float64
	}{{OverallLabel, 2}, {results.ShapeBurst, 0.5}, {results.ShapeScheduled, 1.5}} {
		g := a.GroupByLabel(c.group)
		if g == nil {
			t.Fatalf("no group %q in %+v", c.group, a.Groups)
		}
		if s, ok := g.Requests.SpanS(); !ok || s != c.span {
			t.Errorf("%s: span %v s, want %v", c.group, s, c.span)
		}
	}
	if rate, _ := a.Overall.Requests.RequestsPerS(); rate != 2 {
		t.Errorf("overall %v requests/s, want 4 over 2 s", rate)
	}
}
