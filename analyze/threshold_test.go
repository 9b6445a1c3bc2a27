package analyze

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

func TestParseThreshold(t *testing.T) {
	t.Parallel()
	cases := []struct {
		expr    string
		want    Threshold
		wantErr string
	}{
		{expr: "overall.p99_ms>20000", want: Threshold{Selector: "overall", Metric: "p99_ms", Op: ">", Value: 20000}},
		{expr: " burst.count < 50 ", want: Threshold{Selector: "burst", Metric: "count", Op: "<", Value: 50}},
		{expr: "scheduled.share_429>=0.5", want: Threshold{Selector: "scheduled", Metric: "share_429", Op: ">=", Value: 0.5}},
		{expr: "errors>0", want: Threshold{Metric: "errors", Op: ">", Value: 0}},
		{expr: "total_429!=3", want: Threshold{Metric: "total_429", Op: "!=", Value: 3}},
		{expr: "late==0", want: Threshold{Metric: "late", Op: "==", Value: 0}},
		{expr: "v1.2 shard.p999_ms<=1e4", want: Threshold{Selector: "v1.2 shard", Metric: "p999_ms", Op: "<=", Value: 10000}},
		{expr: "", wantErr: "empty expression"},
		{expr: "overall.p99_ms", wantErr: "no comparison operator"},
		{expr: "overall.p99_ms=5", wantErr: "use =="},
		{expr: ">5", wantErr: "nothing before"},
		{expr: "overall.p98_ms>5", wantErr: "unknown group metric"},
		{expr: "p99_ms>5", wantErr: "group metrics need a group"},
		{expr: "overall.count>abc", wantErr: "not a number"},
		{expr: "overall.count>NaN", wantErr: "not a number"},
		{expr: ".count>1", wantErr: "empty group"},
		{expr: "a>b.count>1", wantErr: "not a number"},
	}
	for _, c := range cases {
		got, err := ParseThreshold(c.expr)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("ParseThreshold(%q) err = %v, want %q", c.expr, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseThreshold(%q): %v", c.expr, err)
			continue
		}
		got.Expr = ""
		if got != c.want {
			t.Errorf("ParseThreshold(%q) = %+v, want %+v", c.expr, got, c.want)
		}
	}
}

func TestEvaluateThreshold(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var recs []results.Record
	for i := 0; i < 10; i++ {
		recs = append(recs, attempt("burst-shaped", "burst", 429, float64(100*(i+1)), results.WaitRetryAfterMS))
		recs = append(recs, attempt("nightly", "scheduled", 200, -1, results.WaitNone))
	}
	recs = append(recs, attempt("nightly", "scheduled", 429, 7, results.WaitRetryAfterMS))
	failed := attempt("nightly", "scheduled", 0, -1, results.WaitNone)
	failed.Error = results.ClassTimeout
	recs = append(recs, failed)
	path := resultsFile(t, dir, "r.csv", recs)
	events := writeFile(t, dir, "foreign.csv", lines("retry_after_ms", "1", "2", "3", "4", "5"))
	a, err := analyzeFiles(t, ForeignColumns{}, nil, DefaultMinGroup, path, events)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		expr       string
		measured   float64
		measurable bool
		breached   bool
	}{
		{"overall.count>15", 16, true, true},
		{"burst.count<50", 10, true, true},
		{"burst.max_ms>=1000", 1000, true, true},
		{"burst.p50_ms>550", 550, true, false},
		{"burst.share_429==1", 1, true, true},
		{"scheduled.share_429<0.1", 1.0 / 12, true, true},
		{"scheduled.p99_ms>0", 0, false, false}, // n = 1 < min-group
		{"nightly.attempts!=12", 12, true, false},
		{"Burst-shaped source.count==10", 10, true, true},
		{"foreign.share_429>0", 0, false, false}, // foreign CSVs have no attempts
		{"foreign.p50_ms==3", 3, true, true},
		{"missing.count<1", 0, true, true},
		{"errors>0", 1, true, true},
		{"attempts==22", 22, true, true},
		{"total_429==16", 16, true, true},
		{"late>0", 0, true, false},
	}
	for _, c := range cases {
		th, err := ParseThreshold(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		v := th.Evaluate(a)
		if v.Measurable != c.measurable || v.Breached != c.breached || (c.measurable && v.Measured != c.measured) {
			t.Errorf("%s: measured %v measurable %v breached %v (note %q); want %v %v %v", c.expr, v.Measured, v.Measurable, v.Breached, v.Note, c.measured, c.measurable, c.breached)
		}
	}
}

func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{"overall.p99_ms>20000", "burst.count<50", "scheduled.share_429>0.5", "errors>0", "a.b.c.count>=1", "x==", "<=<=", ".p50_ms!=1e308", "late==-0",
		"success_pct<95", "latency.p99_ms>1", "a.ttfb.p50_ms<2", "x.latency_max_ms==3", "latency.p98_ms>1", ".latency.p50_ms>1",
		"goodput<95%", "ttft_p99>+10%", "overall.p99>+20%", "g.itl.max_ms>1", "goodput_per_s<-5%", "latency_p99_ms>5%", "tpot.p90<=+0%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		th, err := ParseThreshold(expr)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") && !strings.ContainsAny(expr, "\n\r") {
				t.Errorf("multi-line error for %q: %v", expr, err)
			}
			return
		}
		if th.Op == "" || th.Metric == "" {
			t.Fatalf("%q parsed to %+v", expr, th)
		}
		// Whatever parses must evaluate without panicking, on an empty analysis.
		empty, err := NewTally(false).Analysis(nil, DefaultMinGroup)
		if err != nil {
			t.Fatal(err)
		}
		_ = th.Evaluate(empty)
		// And on one with requests of every outcome.
		live := NewTally(false, WithSLO(SLO{E2E: time.Second}))
		for _, rec := range requestRows() {
			live.Observe(&rec)
		}
		withRequests, err := live.Analysis(nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		withRequests.Baseline = Compare(withRequests, withRequests)
		if v := th.Evaluate(withRequests); v.Measurable && math.IsNaN(v.Measured) {
			t.Fatalf("%q measured NaN", expr)
		}
		// And parse again to the same threshold.
		again, err := ParseThreshold(th.Expr)
		if err != nil || again != th {
			t.Fatalf("re-parse of %q: %+v, %v; first %+v", th.Expr, again, err, th)
		}
	})
}

// TestThresholdPercentAndChange: a share's bound may carry %, a signed
// percent bound is a change from the baseline (of a compared figure
// only), a percentile may leave out _ms; a change is measured from the
// Comparison, and not without one.
func TestThresholdPercentAndChange(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		expr, metric string
		value        float64
		change       bool
	}{
		{"goodput<95%", "goodput", 95, false},
		{"ttft_p99>+10%", "ttft_p99_ms", 10, true},
		{"overall.p99>+20%", "p99_ms", 20, true},
		{"success_pct<-2%", "success_pct", -2, true},
		{"x.ttft.p50<300", "ttft_p50_ms", 300, false},
		{"itl_max_ms>500", "itl_max_ms", 500, false},
	} {
		th, err := ParseThreshold(c.expr)
		if err != nil || th.Metric != c.metric || th.Value != c.value || th.Change != c.change {
			t.Errorf("%s: %+v, %v", c.expr, th, err)
		}
	}
	for _, bad := range []string{"latency_p99_ms>5%", "latency_p95_ms>+5%", "errors>+1%", "goodput<95%%"} {
		if th, err := ParseThreshold(bad); err == nil {
			t.Errorf("%s parsed to %+v", bad, th)
		}
	}
	now, base := NewTally(false), NewTally(false)
	for seq := range 40 {
		for i, tl := range []*Tally{now, base} {
			r := results.Blank()
			r.Shape, r.Group, r.Seq, r.Attempt, r.Status = results.ShapeBurst, "g", seq, 1, 200
			r.SentMS, r.LatencyMS, r.TTFTMS = float64(seq), 500, float64(100+seq+50*(1-i))
			tl.Observe(&r)
		}
	}
	a, _ := now.Analysis(nil, 1)
	b, _ := base.Analysis(nil, 1)
	th, _ := ParseThreshold("ttft_p50>+10%")
	if v := th.Evaluate(a); v.Measurable || v.Breached || !strings.Contains(v.Note, "--baseline") {
		t.Errorf("without a baseline: %+v", v)
	}
	a.Baseline = Compare(a, b)
	v := th.Evaluate(a)
	if want := 100 * 50 / 119.5; !v.Measurable || !v.Breached || math.Abs(v.Measured-want) > 1e-9 || !strings.Contains(v.Note, "beyond") {
		t.Errorf("TTFT 50 ms later: %+v, want %v%% breached, beyond the noise", v, want)
	}
	th, _ = ParseThreshold("g.latency_p50_ms>+1%")
	if v := th.Evaluate(a); !v.Measurable || v.Breached || v.Measured != 0 {
		t.Errorf("latency unchanged: %+v", v)
	}
}

// TestThresholdsDocNamesEveryMetric: docs/thresholds.md lists every
// metric --fail-if accepts.
func TestThresholdsDocNamesEveryMetric(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/thresholds.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range append(groupMetrics(), TopLevelMetrics...) {
		if !strings.Contains(string(doc), "`"+m+"`") {
			t.Errorf("docs/thresholds.md does not name the metric %s", m)
		}
	}
}
