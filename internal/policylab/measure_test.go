package policylab

import (
	"math"
	"testing"
	"time"
)

// TestMeasureOf: only the window's arrivals count; a success counts in the
// measure within the SLO, in the latencies whenever; a local give-up is a
// failure counted apart; the halves are the window's.
func TestMeasureOf(t *testing.T) {
	t.Parallel()
	s := time.Second
	reqs := []requestOutcome{
		{at: 0, e2e: s, attempts: 1, ok: true},                                 // warm-up
		{at: 10 * s, e2e: 2 * s, attempts: 2, http429: 1, reach: 2, ok: true},  // first half, in the SLO
		{at: 12 * s, e2e: 15 * s, attempts: 5, http429: 4, reach: 5, ok: true}, // first half, past the SLO
		{at: 16 * s, e2e: 3 * s, reach: 1, local: true},                        // second half, given up locally
		{at: 19 * s, e2e: s, attempts: 1, ok: true},                            // second half, in the SLO
		{at: 20 * s, e2e: s, attempts: 1, ok: true},                            // tail
	}
	m, lat := measureOf(reqs, window{10 * s, 20 * s}, 10*s)
	want := repeatMeasure{Offered: 4, InSLO: 2, Succeeded: 3, OfferedFirst: 2, InSLOFirst: 1, Attempts: 8, HTTP429: 5, GaveUpLocal: 1, Reach: 5}
	m.SuccessP50MS, m.SuccessP99MS = 0, 0
	if m != want || len(lat) != 3 || lat[0] != 1000 || lat[2] != 15000 {
		t.Errorf("%+v %v, want %+v", m, lat, want)
	}
	if m.InSLOPct() != 50 || m.AttemptsPerRequest() != 2 || m.DriftPts() != 0 {
		t.Errorf("%v%% within the SLO, %v attempts per request, drift %v", m.InSLOPct(), m.AttemptsPerRequest(), m.DriftPts())
	}
	if e, _ := measureOf(reqs, window{30 * s, 40 * s}, s); e.InSLOPct() != -1 || e.AttemptsPerRequest() != -1 || e.DriftPts() != 0 {
		t.Errorf("an empty window: %+v", e)
	}
}

// TestIntervals: Student's t over the repeats; a paired difference is
// the spread of the differences, not of each row.
func TestIntervals(t *testing.T) {
	t.Parallel()
	iv := meanInterval([]float64{1, 2, 3, 4, 5})
	// sd = √2.5, se = √0.5, t(4) = 2.776.
	if h := 2.776 * math.Sqrt(0.5); iv.mean != 3 || math.Abs(iv.hi-3-h) > 1e-9 || math.Abs(3-iv.lo-h) > 1e-9 || iv.n != 5 {
		t.Errorf("%+v, want 3 ± %v", iv, h)
	}
	if one := meanInterval([]float64{7}); one.mean != 7 || one.lo != 7 || one.hi != 7 || one.excludesZero() {
		t.Errorf("one value: %+v", one)
	}
	a, b := []float64{60, 64, 55, 62, 59}, []float64{59, 63, 54, 61, 58}
	if d := paired(a, b); d.mean != 1 || d.lo != 1 || d.hi != 1 || !d.excludesZero() {
		t.Errorf("paired: %+v", d)
	}
	if meanInterval(a).lo > 59 || meanInterval(b).hi < 60 {
		t.Error("the rows' own intervals should overlap: the pairing is what tells them apart")
	}
	if d := paired([]float64{1, -1, 3, 2}, []float64{0, 0, -1, 1}); d.n != 2 || d.mean != 1 {
		t.Errorf("an unknown repeat (-1) is left out: %+v", d)
	}
}
