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
	if n, p50, hi := r.TTFBs(), r.TTFBPercentile(50), r.TTFBPercentile(100); n != 2 || p50 != 5.5 || hi != 6 {
		t.Errorf("ttfb of the successes: %d, p50 %v, max %v; want 5 and 6: a success without ttfb_ms is left out", n, p50, hi)
	}
	// Span: from sent 0 to the refused connection's 900 + 1 ms.
	if s, ok := r.SpanS(); !ok || s != 0.901 {
		t.Errorf("span %v s, want 0.901", s)
	}
	if rate, _ := r.OutputTokensPerS(); math.Abs(rate-60/0.901) > 1e-9 {
		t.Errorf("output tokens/s %v, want 60/0.901", rate)
	}
	o := a.Overall.Requests
	if o.Requests != 9 || o.Succeeded != 4 || o.Latencies() != 4 || o.LatencyPercentile(100) != 1000 {
		t.Errorf("overall %+v, want the 9 requests of both groups, 4 latencies", o)
	}
	if s, _ := o.SpanS(); s != 2 {
		t.Errorf("overall span %v s, want 2 (0 to b's 1000 + 1000 ms)", s)
	}
}

// notSent is a row of a request's attempt that was never sent, with the
// decision that ended it.
func notSent(group string, attemptNo int, decision, class string) results.Record {
	r := attempt(group, results.ShapeScheduled, 0, -1, results.WaitNone)
	r.Attempt, r.Decision, r.Error = attemptNo, decision, class
	r.SentMS, r.LatencyMS = results.None, results.None
	return r
}

// TestRequestsNotSent: a row never sent is no HTTP attempt, no status and
// no transport error; the first attempts count the planned requests, and
// success is also reckoned per planned request. Rows not sent were once
// HTTP attempts of status 0 and transport errors, and the requests given
// up before any send had no row at all.
func TestRequestsNotSent(t *testing.T) {
	t.Parallel()
	sleep := attempt("a", results.ShapeScheduled, 429, 100, results.WaitRetryAfterMS)
	sleep.Decision = results.DecisionSleep
	ok := attempt("a", results.ShapeScheduled, 200, -1, results.WaitNone)
	retried := ok
	retried.Attempt = 2
	rows := []results.Record{
		ok, ok, sleep, retried, // three requests sent, all succeeded (one on its retry)
		sleep, notSent("a", 2, results.DecisionGiveUpLocal, results.ClassPaced), // sent, then given up unsent
		notSent("a", 1, results.DecisionGiveUpLocal, results.ClassPaced),
		notSent("a", 1, results.DecisionGiveUpLocal, results.ClassCooldown),
		notSent("a", 1, results.DecisionInterrupted, results.ClassCanceled),
	}
	a, err := analyzeFiles(t, ForeignColumns{}, nil, 1, resultsFile(t, t.TempDir(), "results.csv", rows))
	if err != nil {
		t.Fatal(err)
	}
	r := a.Overall.Requests
	if r.Planned != 7 || r.Requests != 5 || r.Succeeded != 3 || r.HTTP429 != 2 || r.TransportErrors != 0 {
		t.Errorf("%+v: want 7 planned, 5 attempts sent (3 ok, two 429s), no transport error", r)
	}
	if r.GivenUpUnsent != 2 || r.InterruptedUnsent != 1 || r.NotSent() != 3 {
		t.Errorf("not sent: %d given up, %d interrupted; want 2 and 1", r.GivenUpUnsent, r.InterruptedUnsent)
	}
	if pct, _ := r.PlannedSuccessPct(); math.Abs(pct-300.0/7) > 1e-9 {
		t.Errorf("success of planned %v%%, want 3 of 7", pct)
	}
	if pct, _ := r.SuccessPct(); pct != 60 {
		t.Errorf("success of attempts %v%%, want 3 of 5", pct)
	}
	if a.Totals.Attempts != 5 || a.Totals.ByStatus[0] != 0 || a.Totals.Errors != 0 || len(a.Totals.ByErrorClass) != 0 {
		t.Errorf("totals %+v: the rows not sent are no attempts, statuses or errors", a.Totals)
	}
	for expr, want := range map[string]float64{"planned==7": 7, "not_sent>2": 3, "planned_success_pct<50": 300.0 / 7, "success_pct<50": 60} {
		th, err := ParseThreshold(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if v := th.Evaluate(a); !v.Measurable || math.Abs(v.Measured-want) > 1e-9 {
			t.Errorf("%s: %+v, want measured %v", expr, v, want)
		}
	}
	// A run whose every request was given up unsent still has requests.
	a, err = analyzeFiles(t, ForeignColumns{}, nil, 1, resultsFile(t, t.TempDir(), "results.csv", rows[6:7]))
	if err != nil {
		t.Fatal(err)
	}
	if !a.HasRequests() || a.Overall.Requests.Planned != 1 {
		t.Errorf("a request given up unsent: HasRequests %v, %+v", a.HasRequests(), a.Overall.Requests)
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
