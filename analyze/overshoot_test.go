package analyze

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// row is one results row for the overshoot tests.
type row struct {
	run, group, shape, worker string
	intended                  float64
	status, attempt           int
	prompt, max               int
	wait, util                float64
}

func (r row) record() results.Record {
	rec := results.Blank()
	rec.RunID, rec.Group, rec.Shape, rec.Worker = r.run, r.group, r.shape, r.worker
	rec.Attempt, rec.Status = max(r.attempt, 1), r.status
	rec.IntendedMS, rec.SentMS, rec.LatencyMS = r.intended, r.intended, 10
	if r.intended < 0 {
		rec.SentMS = results.None
	}
	rec.PromptTokens, rec.MaxTokens, rec.UtilizationPct = r.prompt, r.max, r.util
	if r.status == 0 {
		rec.Error = results.ClassTimeout
	}
	if r.wait >= 0 {
		rec.WaitMS, rec.WaitSource = r.wait, results.WaitRetryAfterMS
	}
	return rec
}

func writeRows(t testing.TB, rows []row) string {
	t.Helper()
	var b bytes.Buffer
	w, err := results.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		rec := r.record()
		if err := w.Write(&rec); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func overshootOf(t testing.TB, window time.Duration, inputs ...string) *Analysis {
	t.Helper()
	tally := NewTally(false, OfferedLoad(window))
	for i, in := range inputs {
		if err := tally.Read(context.Background(), strings.NewReader(in), Input{Name: fmt.Sprintf("in%d.csv", i+1), Ordinal: i + 1}, ForeignColumns{}); err != nil {
			t.Fatal(err)
		}
	}
	a, err := tally.Analysis(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

const none = results.None

// TestOfferedLoadWindow places each 429 against what was intended in the
// second up to it, by hand: every status and attempt counts, the 429
// itself and what was meant for the same instant too, the row exactly one
// window before does not; a refused request counts its timeline's mean
// prompt; runs, and a run's shapes, are timelines apart; the workers of a
// fleet are one, whatever their run ids.
func TestOfferedLoadWindow(t *testing.T) {
	t.Parallel()
	const s = results.ShapeScheduled
	rows := []row{
		// Run r1, in completion order.
		{"r1", "g", s, "", 400, 200, 1, 1200, 100, none, none},
		{"r1", "g", s, "", 0, 200, 1, 1000, 100, none, none},
		{"r1", "g", s, "", 900, 429, 1, none, 100, 50, 101.5},
		{"r1", "g", s, "", 1000, 0, 1, none, 100, none, none},                // a timeout counts
		{"r1", "g", s, "", 1000, 429, 2, none, 100, 80, none},                // a retry, at its own intended time
		{"r1", "g", s, "", 1900, 429, 1, none, 100, 30, 100.2},               // (900, 1900]: the rows at 1000 and itself
		{"r1", "g", results.ShapeBurst, "", 1850, 200, 1, 10, 5, none, none}, // characterize's other plan: apart
		// Run r2, appended to the same file: its clock starts again.
		{"r2", "g", s, "", 0, 200, 1, 2000, 100, none, none},
		{"r2", "g", s, "", 100, 200, 1, 2000, 100, none, none},
		{"r2", "g", s, "", 500, 429, 1, none, 100, 70, none},
		// A fleet of two workers, each its own run id, one start.
		{"a1", "f", results.ShapeBurst, "0/2", 0, 200, 1, 500, 50, none, none},
		{"b2", "f", results.ShapeBurst, "1/2", 0, 429, 1, none, 50, 20, none},
		{"a1", "f", results.ShapeBurst, "0/2", 10, 429, 1, none, 50, 40, none},
		{"c3", "f", results.ShapeBurst, "2/2", 5, 200, 1, 500, 50, none, none}, // no worker of a fleet of 2: its own
		// A raw request has no max_tokens: its timeline has no tokens.
		{"r3", "raw", s, "", 0, 200, 1, none, none, none, none},
		{"r3", "raw", s, "", 10, 429, 1, none, none, 25, none},
		// No intended time: not placed.
		{"r4", "g", s, "", none, 429, 1, none, 100, 99, none},
	}
	a := overshootOf(t, time.Second, writeRows(t, rows))
	o := a.Overshoot
	if o == nil {
		t.Fatal("no overshoot picture")
	}
	want := map[string][]LoadPoint{
		"f": {
			{RequestsPerSec: 2, TokensPerSec: 500 + 500 + 100, WaitMS: 20, UtilizationPct: none},
			{RequestsPerSec: 3, TokensPerSec: 500 + 2*500 + 150, WaitMS: 40, UtilizationPct: none},
		},
		"g": {
			{RequestsPerSec: 3, TokensPerSec: 1000 + 1200 + 1100 + 300, WaitMS: 50, UtilizationPct: 101.5},
			{RequestsPerSec: 4, TokensPerSec: 1200 + 3*1100 + 400, WaitMS: 80, UtilizationPct: none},
			{RequestsPerSec: 3, TokensPerSec: 3*1100 + 300, WaitMS: 30, UtilizationPct: 100.2},
			{RequestsPerSec: 3, TokensPerSec: 2000 + 2000 + 2000 + 300, WaitMS: 70, UtilizationPct: none},
		},
		"raw": {{RequestsPerSec: 2, TokensPerSec: none, WaitMS: 25, UtilizationPct: none}},
	}
	var labels []string
	for _, g := range o.Groups {
		labels = append(labels, g.Label)
		if !reflect.DeepEqual(g.Points, want[g.Label]) {
			t.Errorf("group %s: points\n got %+v\nwant %+v", g.Label, g.Points, want[g.Label])
		}
	}
	if !slices.Equal(labels, []string{"f", "g", "raw"}) || o.Unplaced != 1 || o.Window != time.Second {
		t.Errorf("groups %v, unplaced %d, window %v", labels, o.Unplaced, o.Window)
	}
	// Too few for any trend; the counts per measure still hold.
	g := o.Groups[1]
	if g.Requests.N != 4 || g.Tokens.N != 4 || g.Utilization.N != 2 || g.Requests.Reason != TrendTooFew ||
		g.Requests.Min != 3 || g.Requests.Max != 4 || o.Groups[2].Tokens.N != 0 {
		t.Errorf("trends %+v / %+v", g, o.Groups[2])
	}

	// A window of 100 ms sees only the rows within it.
	o = overshootOf(t, 100*time.Millisecond, writeRows(t, rows)).Overshoot
	if got := o.Groups[1].Points[1].RequestsPerSec; got != 20 { // (900, 1000]: the two rows at 1000 ms
		t.Errorf("100 ms window: %v requests/s, want 20", got)
	}
}

// TestOfferedLoadLeavesOutRowsNotSent: a request its retry owner gave up
// on unsent offered the target nothing, so it is not in the load a 429
// is placed against.
func TestOfferedLoadLeavesOutRowsNotSent(t *testing.T) {
	t.Parallel()
	const s = results.ShapeScheduled
	var recs []results.Record
	for _, r := range []row{
		{"r1", "g", s, "", 0, 200, 1, 1000, 100, none, none},
		{"r1", "g", s, "", 500, 0, 1, none, 100, none, none}, // given up unsent, below
		{"r1", "g", s, "", 900, 429, 1, none, 100, 50, none},
	} {
		recs = append(recs, r.record())
	}
	recs[1].Decision, recs[1].Error, recs[1].SentMS, recs[1].LatencyMS = results.DecisionGiveUpLocal, results.ClassPaced, none, none
	file, err := os.ReadFile(resultsFile(t, t.TempDir(), "results.csv", recs))
	if err != nil {
		t.Fatal(err)
	}
	o := overshootOf(t, time.Second, string(file)).Overshoot
	if o == nil || len(o.Groups) != 1 || len(o.Groups[0].Points) != 1 {
		t.Fatalf("overshoot %+v", o)
	}
	if p := o.Groups[0].Points[0]; p.RequestsPerSec != 2 || p.TokensPerSec != 2*1100 {
		t.Errorf("the 429 against %v requests/s, %v tokens/s; want 2 and 2200 (the row not sent left out)", p.RequestsPerSec, p.TokensPerSec)
	}
}

// TestOvershootAbsent: a foreign CSV has no intended times, so there is
// no picture; without OfferedLoad none is kept either.
func TestOvershootAbsent(t *testing.T) {
	t.Parallel()
	if a := overshootOf(t, 0, "source_group,retry_after_ms\ng,10\ng,20\n"); a.Overshoot != nil {
		t.Errorf("foreign CSV: %+v", a.Overshoot)
	}
	tally := NewTally(false)
	rows := writeRows(t, []row{{"r", "g", results.ShapeBurst, "", 0, 429, 1, none, 100, 5, none}})
	if err := tally.Read(context.Background(), strings.NewReader(rows), Input{Name: "r.csv", Ordinal: 1}, ForeignColumns{}); err != nil {
		t.Fatal(err)
	}
	if a, _ := tally.Analysis(nil, 1); a.Overshoot != nil {
		t.Errorf("without OfferedLoad: %+v", a.Overshoot)
	}
}

// TestOvershootTooManyTimelines: past MaxLoadTimelines the picture is left
// out, with a warning, read in blocks or row by row.
func TestOvershootTooManyTimelines(t *testing.T) {
	t.Parallel()
	var rows []row
	for i := range MaxLoadTimelines + 1 {
		rows = append(rows, row{fmt.Sprintf("%08x", i), "g", results.ShapeBurst, "", float64(i), 429, 1, none, 100, 5, none})
	}
	a := overshootOf(t, 0, writeRows(t, rows))
	if a.Overshoot != nil || !slices.ContainsFunc(a.Warnings, func(w string) bool { return strings.Contains(w, "timelines") }) {
		t.Errorf("overshoot %v, warnings %q", a.Overshoot != nil, a.Warnings)
	}
}

// placedBruteForce is the overshoot picture computed the plain way: each
// timeline's rows sorted by intended time, and for each usable 429 the
// rows of its window found by binary search and read again.
func placedBruteForce(recs []results.Record, window float64) map[string][]LoadPoint {
	type key struct{ run, group, shape string }
	keyOf := func(r *results.Record) key {
		if n, ok := fleetSize(r.Worker); ok {
			return key{"fleet " + n, r.Group, r.Shape}
		}
		return key{r.RunID, r.Group, r.Shape}
	}
	prompts := map[key][2]int{}
	for i := range recs {
		if r := &recs[i]; r.IntendedMS >= 0 && r.PromptTokens >= 0 {
			p := prompts[keyOf(r)]
			prompts[keyOf(r)] = [2]int{p[0] + r.PromptTokens, p[1] + 1}
		}
	}
	timelines := map[key][]*results.Record{}
	budgets := map[key]bool{}
	for i := range recs {
		if r := &recs[i]; r.IntendedMS >= 0 {
			k := keyOf(r)
			timelines[k] = append(timelines[k], r)
			if _, seen := budgets[k]; !seen {
				budgets[k] = true
			}
			if r.MaxTokens < 0 {
				budgets[k] = false
			}
		}
	}
	for _, rs := range timelines {
		slices.SortStableFunc(rs, func(a, b *results.Record) int { return cmp.Compare(a.IntendedMS, b.IntendedMS) })
	}
	out := map[string][]LoadPoint{}
	for i := range recs {
		q := &recs[i]
		if !q.Is429() || !q.HasWait() || q.IntendedMS < 0 {
			continue
		}
		k := keyOf(q)
		p := prompts[k]
		n, tokens, budget := 0, 0.0, p[1] > 0 && budgets[k]
		rs := timelines[k]
		lo := sort.Search(len(rs), func(i int) bool { return rs[i].IntendedMS > q.IntendedMS-window })
		for _, r := range rs[lo:] {
			if r.IntendedMS > q.IntendedMS {
				break
			}
			n++
			if r.PromptTokens >= 0 {
				tokens += float64(r.PromptTokens)
			} else if p[1] > 0 {
				tokens += float64(p[0]) / float64(p[1])
			}
			tokens += float64(max(r.MaxTokens, 0))
		}
		pt := LoadPoint{RequestsPerSec: float64(n) * 1000 / window, TokensPerSec: none, WaitMS: q.WaitMS, UtilizationPct: q.UtilizationPct}
		if budget {
			pt.TokensPerSec = tokens * 1000 / window
		}
		out[q.Group] = append(out[q.Group], pt)
	}
	return out
}

func byPoint(a, b LoadPoint) int {
	return cmp.Or(cmp.Compare(a.RequestsPerSec, b.RequestsPerSec), cmp.Compare(a.WaitMS, b.WaitMS),
		cmp.Compare(a.TokensPerSec, b.TokensPerSec), cmp.Compare(a.UtilizationPct, b.UtilizationPct))
}

// TestOvershootAcrossBlocks reads files of several blocks whose rows are in
// completion order (a row's intended time up to seconds before the rows
// around it, so blocks overlap), with windows that span blocks, and of
// several timelines and groups: the picture is the plain computation's,
// and the same read in blocks or row by row, from one file or split in
// two (the second file's rows reaching back into the first's).
func TestOvershootAcrossBlocks(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	var recs []results.Record
	for i := range scaled(50_000) {
		r := row{run: "r1", group: "g", shape: results.ShapeScheduled, status: 200, attempt: 1, prompt: 900 + rng.IntN(300), max: 100, wait: none, util: none}
		switch i % 5 {
		case 1:
			r.group = "h"
		case 2:
			r.run, r.group, r.shape, r.worker = "w"+fmt.Sprint(i%3), "fleet", results.ShapeBurst, fmt.Sprintf("%d/3", i%3)
		}
		r.intended = max(0, float64(i)*4-float64(rng.IntN(5000))) // completion order
		if rng.IntN(3) == 0 {
			r.status, r.prompt, r.wait = 429, none, float64(rng.IntN(2000))
			if rng.IntN(2) == 0 {
				r.util = 100 + float64(rng.IntN(300))/10
			}
		}
		recs = append(recs, r.record())
	}
	var b bytes.Buffer
	w, _ := results.NewWriter(&b)
	for i := range recs {
		w.Write(&recs[i])
	}
	file := b.String()
	if len(file) < 3*blockSize() {
		t.Fatalf("%d bytes: fewer than three blocks", len(file))
	}
	header, body, _ := strings.Cut(file, "\n")
	lines := strings.SplitAfter(body, "\n")
	half := header + "\n" + strings.Join(lines[:len(lines)/2], "")
	rest := header + "\n" + strings.Join(lines[len(lines)/2:], "")
	const window = 9 * time.Second // ~2,000 rows of a timeline: more than a block holds

	want := placedBruteForce(recs, float64(window/time.Millisecond))
	check := func(name string, a *Analysis) {
		t.Helper()
		o := a.Overshoot
		for _, g := range o.Groups {
			got := slices.Clone(g.Points)
			exp := slices.Clone(want[g.Label])
			slices.SortFunc(got, byPoint)
			slices.SortFunc(exp, byPoint)
			if len(got) != len(exp) {
				t.Fatalf("%s: group %s: %d points, want %d", name, g.Label, len(got), len(exp))
			}
			for i := range got {
				if got[i].RequestsPerSec != exp[i].RequestsPerSec || got[i].WaitMS != exp[i].WaitMS || got[i].UtilizationPct != exp[i].UtilizationPct ||
					math.Abs(got[i].TokensPerSec-exp[i].TokensPerSec) > 1e-6*exp[i].TokensPerSec {
					t.Fatalf("%s: group %s point %d: %+v, want %+v", name, g.Label, i, got[i], exp[i])
				}
			}
		}
		if len(o.Groups) != 3 {
			t.Fatalf("%s: %d groups", name, len(o.Groups))
		}
	}
	parallel := overshootOf(t, window, file)
	check("one file", parallel)
	check("two files", overshootOf(t, window, half, rest))

	seq := NewTally(false, OfferedLoad(window))
	if err := seq.readSequential(strings.NewReader(file), Input{Name: "f", Ordinal: 1}); err != nil {
		t.Fatal(err)
	}
	sa, err := seq.Analysis(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sa.Overshoot, parallel.Overshoot) {
		t.Fatal("read in blocks, the picture differs from the one read row by row")
	}
	for _, g := range parallel.Overshoot.Groups {
		if g.Requests.Reason != "" || g.Tokens.Reason != "" || g.Utilization.N == 0 {
			t.Errorf("group %s: trends %+v", g.Label, g)
		}
	}
}

// TestInOrder: runs that follow each other are kept as they are; a run
// that reaches back into the ones before is merged in; runs far out of
// order are sorted whole. Each way the result is the sorted elements.
func TestInOrder(t *testing.T) {
	t.Parallel()
	by := func(a, b int) int { return cmp.Compare(a, b) }
	ordered := [][]int{{1, 2, 3}, {3, 4}, {}, {7, 9}}
	if got := inOrder(ordered, by); &got[0][0] != &ordered[0][0] || len(got) != len(ordered) {
		t.Errorf("runs in order were copied: %v", got)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, spread := range []int{10, 5000} { // a tail of a few elements; runs all over the place
		var runs [][]int
		var all []int
		for range 40 {
			base := rng.IntN(100) * 100
			run := make([]int, 50+rng.IntN(50))
			for i := range run {
				run[i] = base + rng.IntN(spread)
			}
			slices.Sort(run)
			runs = append(runs, run)
			all = append(all, run...)
		}
		slices.SortFunc(runs, func(a, b []int) int { return cmp.Compare(a[0], b[0]) }) // mostly in order
		if spread > 10 {
			rng.Shuffle(len(runs), func(i, j int) { runs[i], runs[j] = runs[j], runs[i] })
		}
		got := inOrder(runs, by)
		slices.Sort(all)
		if len(got) != 1 || !slices.Equal(got[0], all) {
			t.Errorf("spread %d: not the sorted elements", spread)
		}
	}
}

func TestSpearman(t *testing.T) {
	t.Parallel()
	tests := []struct {
		x, y []float64
		want float64
	}{
		// scipy.stats.spearmanr's documented example: ties share ranks.
		{[]float64{1, 2, 3, 4, 5}, []float64{5, 6, 7, 8, 7}, 0.8207826816681233},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, []float64{1, 4, 9, 16, 25, 36, 49, 64, 81, 100}, 1},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, -1},
		// Ties on both sides; Pearson's r of the average ranks, by hand: 0.64375.
		{[]float64{3, 1, 2, 2, 5, 4, 4, 4, 9, 7}, []float64{2, 2, 1, 3, 9, 8, 8, 2, 7, 6}, 0.64375},
	}
	for _, tt := range tests {
		rx, ry := make([]float64, len(tt.x)), make([]float64, len(tt.y))
		ranks(tt.x, rx)
		ranks(tt.y, ry)
		got := spearman(rx, ry)
		if math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("ρ(%v, %v) = %v, want %v", tt.x, tt.y, got, tt.want)
		}
	}
}

func TestTheilSen(t *testing.T) {
	t.Parallel()
	// A line with outliers far off it: the median pairwise slope ignores them.
	var x, y []float64
	for i := range 20 {
		x = append(x, float64(i))
		y = append(y, 2*float64(i)+1)
	}
	y[3], y[17], y[19] = 5000, -300, 1e6
	l := theilSen(x, y)
	if l == nil || l.Slope != 2 || l.Intercept != 1 || l.Sampled || l.Pairs != 190 {
		t.Errorf("line %+v, want slope 2, intercept 1 over 190 pairs", l)
	}
	// Pairs with the same measure give no slope.
	if l := theilSen([]float64{1, 1, 2, 2}, []float64{0, 10, 20, 20}); l == nil || l.Pairs != 4 || l.Slope != 15 {
		t.Errorf("ties: %+v, want the median of 20, 20, 10, 10", l)
	}
	// More pairs than MaxSlopePairs: a seeded sample, the same each time.
	rng := rand.New(rand.NewPCG(5, 6))
	x, y = nil, nil
	for i := range 3000 {
		x = append(x, float64(i%300))
		y = append(y, 3*x[i]+10+rng.NormFloat64()*20)
	}
	l = theilSen(x, y)
	if !l.Sampled || l.Pairs != MaxSlopePairs || math.Abs(l.Slope-3) > 0.05 || math.Abs(l.Intercept-10) > 5 {
		t.Errorf("sampled line %+v, want slope 3 ± 0.05, intercept 10 ± 5", l)
	}
	if again := theilSen(x, y); *again != *l {
		t.Errorf("a second fit of the same points gave %+v, then %+v", l, again)
	}
}

func TestMedianAndSelect(t *testing.T) {
	t.Parallel()
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of 1…4 = %v", m)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for n := 1; n < 300; n += 7 {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(rng.IntN(n/3 + 1)) // many equal values
		}
		sorted := slices.Clone(v)
		slices.Sort(sorted)
		for _, k := range []int{0, n / 2, n - 1} {
			w := slices.Clone(v)
			if got := selectKth(w, k); got != sorted[k] || slices.Max(w[:k+1]) != got || (k+1 < n && slices.Min(w[k:]) != got) {
				t.Fatalf("n %d: selectKth(%d) = %v, want %v, partitioned", n, k, got, sorted[k])
			}
		}
	}
}

// TestTrendReasons: a trend says why it has no ρ, and fits a line only
// from LineFitsRho.
func TestTrendReasons(t *testing.T) {
	t.Parallel()
	seq := func(n int, f func(i int) float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = f(i)
		}
		return v
	}
	id := func(i int) float64 { return float64(i) }
	tests := []struct {
		name   string
		x, y   []float64
		reason string
		line   bool
	}{
		{"too few", seq(MinTrend429s-1, id), seq(MinTrend429s-1, id), TrendTooFew, false},
		{"load constant", seq(30, func(int) float64 { return 7 }), seq(30, id), TrendMeasureConstant, false},
		{"load within 1%", seq(30, func(i int) float64 { return 1000 + float64(i%3) }), seq(30, id), TrendMeasureConstant, false},
		{"waits constant", seq(30, id), seq(30, func(int) float64 { return 40 }), TrendWaitsConstant, false},
		{"rising", seq(30, id), seq(30, func(i int) float64 { return 5 * float64(i) }), "", true},
		{"a cloud", seq(30, id), seq(30, func(i int) float64 { return float64(i * 7919 % 31) }), "", false},
	}
	for _, tt := range tests {
		waitRanks := func() []float64 {
			r := make([]float64, len(tt.y))
			ranks(tt.y, r)
			return r
		}
		tr := trendOf(tt.x, tt.y, MinLoadSpread, waitRanks, make([]float64, len(tt.x)), new(ranker))
		if tr.Reason != tt.reason || (tr.Line != nil) != tt.line || tr.N != len(tt.x) {
			t.Errorf("%s: %+v", tt.name, tr)
		}
		if tt.line && (tr.Rho != 1 || tr.Line.Slope != 5 || tr.Line.Intercept != 0) {
			t.Errorf("%s: %+v, line %+v", tt.name, tr, tr.Line)
		}
	}
}

// TestOfferedLoadCountsPromptTokensSent: a refused request reports no
// usage, but a newer file records what was sent (prompt_tokens_sent): the
// window counts that, not the run's mean prompt; the target's own count
// wins where there is one.
func TestOfferedLoadCountsPromptTokensSent(t *testing.T) {
	t.Parallel()
	const s = results.ShapeScheduled
	rows := []row{
		{"r1", "g", s, "", 0, 200, 1, 1000, 100, none, none},
		{"r1", "g", s, "", 100, 429, 1, none, 100, 50, none},
		{"r1", "g", s, "", 200, 429, 1, none, 100, 60, none},
	}
	sent := []int{1007, 5007, none} // the last row: a file's row without it
	var b bytes.Buffer
	w, _ := results.NewWriter(&b)
	for i, r := range rows {
		rec := r.record()
		rec.PromptTokensSent = sent[i]
		w.Write(&rec)
	}
	o := overshootOf(t, time.Second, b.String()).Overshoot
	// The row at 200 ms counts the timeline's mean prompt: (1000 + 5007) / 2.
	mean := (1000.0 + 5007) / 2
	want := []LoadPoint{
		{RequestsPerSec: 2, TokensPerSec: 1000 + 5007 + 200, WaitMS: 50, UtilizationPct: none},
		{RequestsPerSec: 3, TokensPerSec: 1000 + 5007 + mean + 300, WaitMS: 60, UtilizationPct: none},
	}
	if o == nil || len(o.Groups) != 1 || !reflect.DeepEqual(o.Groups[0].Points, want) {
		t.Fatalf("points %+v, want %+v", o.Groups[0].Points, want)
	}
}
