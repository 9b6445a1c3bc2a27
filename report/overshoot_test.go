package report

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/results"
)

// risingAnalysis analyzes a results file whose load rises from 2 to 20
// requests/s, six seconds at each rate, every other request refused with a
// wait of 10 ms per request/s (and a jitter), so a line fits; and a second
// group whose waits do not follow the load.
func risingAnalysis(t *testing.T) *analyze.Analysis {
	t.Helper()
	var buf bytes.Buffer
	w, err := results.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	at, seq := 0.0, 0
	for rate := 2; rate <= 20; rate++ {
		for k := 0; k < rate*6; k++ {
			for _, group := range []string{"rising", "flat"} {
				r := results.Blank()
				r.RunID, r.Shape, r.Group, r.Seq, r.Attempt = "feedbeef", results.ShapeScheduled, group, seq, 1
				r.IntendedMS, r.SentMS, r.LatencyMS, r.Status = at, at, 5, 200
				r.PromptTokens, r.MaxTokens = 1000, 100
				if k%2 == 1 {
					r.Status, r.PromptTokens = 429, results.None
					r.WaitMS, r.WaitSource = float64(10*rate+seq%7), results.WaitRetryAfterMS
					if group == "flat" {
						r.WaitMS = float64(seq * 7919 % 97)
					}
				}
				if err := w.Write(&r); err != nil {
					t.Fatal(err)
				}
				seq++
			}
			at += 1000 / float64(rate)
		}
	}
	return readAnalysis(t, &buf, analyze.ForeignColumns{}, nil)
}

// TestOvershootSummary words what the analysis found, group by group, and
// writes the chart in both formats.
func TestOvershootSummary(t *testing.T) {
	t.Parallel()
	a := risingAnalysis(t)
	o := a.Overshoot
	if o == nil || len(o.Groups) != 2 {
		t.Fatalf("overshoot %+v", o)
	}
	flat, rising := o.Groups[0], o.Groups[1]
	if l := rising.Requests.Line; l == nil || math.Abs(l.Slope-10) > 1 || rising.Requests.Rho < 0.9 {
		t.Fatalf("rising: %+v, line %+v", rising.Requests, l)
	}
	if flat.Requests.Line != nil || math.Abs(flat.Requests.Rho) >= analyze.LineFitsRho {
		t.Fatalf("flat: %+v", flat.Requests)
	}
	var md strings.Builder
	if err := WriteSummary(&md, a, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Advised wait against offered load",
		"in the 1 s before it",
		"- rising: advised waits rose with offered load: Spearman ρ = " + Grouped(math.Round(rising.Requests.Rho*100)/100) + " over " + Grouped(float64(rising.Requests.N)) + " 429s; a line fits with slope " + Grouped(rising.Requests.Line.Slope) + " ms per req/s.",
		"| rising | offered requests/s | " + Grouped(float64(rising.Requests.N)) + " | " + Grouped(rising.Requests.Min) + " req/s to " + Grouped(rising.Requests.Max) + " req/s |",
		"ms per 1,000 tokens/s |",
		"| flat | offered requests/s |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, md.String())
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, a, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"per": "req/s"`) || !strings.Contains(js.String(), `"per": "1,000 tokens/s"`) || !strings.Contains(js.String(), `"window_ms": 1000`) {
		t.Errorf("analysis.json lacks the lines:\n%s", js.String())
	}

	dir := t.TempDir()
	paths, err := Write(context.Background(), dir, a, Options{LogX: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 10 {
		t.Errorf("wrote %d files, want 10: %v", len(paths), paths)
	}
	checkPNG(t, filepath.Join(dir, OvershootPNGFile))
	svg, err := os.ReadFile(filepath.Join(dir, OvershootSVGFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"rising (n = " + Grouped(float64(rising.Requests.N)) + "): ρ = " + Number(math.Round(rising.Requests.Rho*100)/100) + ", line " + Grouped(rising.Requests.Line.Slope) + " ms per req/s",
		"flat (n = " + Grouped(float64(flat.Requests.N)) + "): ρ = ",
		"no line fits",
	} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("%s lacks %q", OvershootSVGFile, want)
		}
	}
}

// TestOvershootChartBounded: past maxOvershootPoints the chart draws every
// k-th 429 and says so in its title.
func TestOvershootChartBounded(t *testing.T) {
	t.Parallel()
	a := risingAnalysis(t)
	n := 0
	for _, g := range a.Overshoot.Groups {
		n += len(g.Points)
	}
	if n <= maxOvershootPoints {
		t.Fatalf("%d points: too few to bound", n)
	}
	var svg bytes.Buffer
	if err := WriteOvershoot(&svg, a, Options{}, SVG); err != nil {
		t.Fatal(err)
	}
	stride := (n + maxOvershootPoints - 1) / maxOvershootPoints
	want := "every " + Grouped(float64(stride)) + ordinalSuffix(stride) + " of " + Grouped(float64(n)) + " shown"
	if !strings.Contains(svg.String(), want) {
		t.Errorf("the title does not say %q", want)
	}
	if c := strings.Count(svg.String(), "<path"); c > maxOvershootPoints+200 {
		t.Errorf("%d paths in the SVG, more than the points it may draw", c)
	}
}

// TestTrendReading words every kind of trend as what was observed.
func TestTrendReading(t *testing.T) {
	t.Parallel()
	req, tok, util := measures[0], measures[1], measures[2]
	tests := []struct {
		tr   analyze.Trend
		m    measure
		want string
	}{
		{analyze.Trend{N: 412, Rho: 0.8234, Min: 3, Max: 24, Line: &analyze.Line{Slope: 31.004}}, req,
			"advised waits rose with offered load: Spearman ρ = 0.82 over 412 429s; a line fits with slope 31 ms per req/s"},
		{analyze.Trend{N: 412, Rho: -0.61, Min: 3, Max: 24, Line: &analyze.Line{Slope: -0.0125}}, tok,
			"advised waits fell as offered tokens rose: Spearman ρ = -0.61 over 412 429s; a line fits with slope -12.5 ms per 1,000 tokens/s"},
		{analyze.Trend{N: 1588, Rho: 0.268, Min: 7, Max: 27}, req,
			"advised waits rose slightly with offered load: Spearman ρ = 0.27 over 1,588 429s; not steadily enough for a line to fit"},
		{analyze.Trend{N: 1588, Rho: -0.2, Min: 7, Max: 27}, req,
			"advised waits fell slightly as offered load rose: Spearman ρ = -0.2 over 1,588 429s; not steadily enough for a line to fit"},
		{analyze.Trend{N: 900, Rho: 0.05, Min: 7, Max: 27}, req,
			"advised waits showed no relation to offered load: Spearman ρ = 0.05 over 900 429s"},
		{analyze.Trend{N: 130, Min: 40, Max: 40, Reason: analyze.TrendMeasureConstant}, req,
			"Offered load did not vary (40 req/s before each of 130 429s): no relation to describe"},
		{analyze.Trend{N: 300, Min: 166, Max: 167, Reason: analyze.TrendMeasureConstant}, req,
			"Offered load did not vary (166 req/s to 167 req/s before each of 300 429s): no relation to describe"},
		{analyze.Trend{N: 30, Min: 1, Max: 5, Reason: analyze.TrendWaitsConstant}, req,
			"every advised wait was the same over 30 429s: no relation to describe"},
		{analyze.Trend{N: 3, Min: 1, Max: 5, Reason: analyze.TrendTooFew}, util,
			"too few 429s to describe (n = 3, fewer than 10)"},
		{analyze.Trend{Reason: analyze.TrendTooFew}, util, "the target reported no utilization with these 429s"},
	}
	for _, tt := range tests {
		if got := trendReading(&tt.tr, tt.m); got != tt.want {
			t.Errorf("reading of %+v\n got %q\nwant %q", tt.tr, got, tt.want)
		}
	}
}
