package fit

import (
	"runtime/debug"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/sim"
)

// hidden is a deployment whose settings the fit never sees: a smaller,
// deeper PTU deployment with a larger allowance that refills faster, and
// another seed.
func hidden() sim.Config {
	c := sim.DefaultConfig()
	c.PTU, c.BucketDepth, c.BurstPct, c.BurstRefill, c.Seed = 120, 1500*time.Millisecond, 260, 90*time.Second, 7
	c.TTFT, c.TPOT = 150*time.Millisecond, 6*time.Millisecond
	return c
}

// TestTwinReproducesTheRecordedRun is the first measure: a run
// against a simulator of settings the fit never saw, fitted, and the main
// job run again on the twin: each of the Overall p50, p90 and p99 within
// 25% of the truth's run on the same seed, every group's KS at most
// 0.15, quality good.
func TestTwinReproducesTheRecordedRun(t *testing.T) {
	long(t, "a whole fit")
	t.Parallel()
	recorded := hiddenRun(t)
	// The PTU model on the default budget; the gateway and the window,
	// searched on the quick one, come nowhere near it (objectives 0.12
	// against 1.5 and more), which is what this checks of them: some 45%
	// fewer points.
	r := fitBudgets(t, defaultBudget, quick, allModels, nil, recorded)
	f := r.Profile.Fit
	t.Logf("model %s objective %.3f models %+v", f.Model, f.Objective, f.Models)
	for _, s := range r.fitted {
		t.Logf("fitted %s = %v", s.Param.Name, s.Value)
	}
	for _, g := range f.Groups {
		t.Logf("%s ks %.3f recorded %+v twin %+v", g.Group, g.KS, g.Recorded, g.Twin)
		if g.KS > DefaultThreshold {
			t.Errorf("%s: KS %.3f > %.2f", g.Group, g.KS, DefaultThreshold)
		}
	}
	if f.Quality != sim.FitGood || f.Model != sim.ProfilePTU {
		t.Fatalf("quality %s model %s: %s", f.Quality, f.Model, f.Why)
	}
	twin := r.Profile.Config
	twin.Seed = 3 // the twin is run as a user would run it: not on the recorded seed
	again := characterize(t, twin)
	// The truth's own run on that seed: its Overall p50 is 89 ms where
	// the recorded run's (seed 7) is 145 (the p50 sits between a wave's
	// short waits and the next's; a seed moves a send across), so the
	// twin is held to the truth on the same seed, and the recorded is
	// logged beside it.
	truth := hidden()
	truth.Seed = 3
	want, got, rec := analysis(t, characterize(t, truth)).Overall, analysis(t, again).Overall, analysis(t, recorded).Overall
	for _, p := range []float64{50, 90, 99} {
		w, g := want.Percentile(p), got.Percentile(p)
		t.Logf("Overall p%v: the truth %.1f ms, twin %.1f ms (recorded, seed 7: %.1f ms)", p, w, g, rec.Percentile(p))
		if g < 0.75*w || g > 1.25*w {
			t.Errorf("Overall p%v: twin %.1f ms, the truth %.1f ms on the same seed: more than 25%% apart", p, g, w)
		}
	}
}

// TestRaiseGCPutsBackTheTargetBefore: fits that overlap and end in
// either order leave the collector's target as it was before the first
// (each putting back what it found left the first's fitGCPercent), and
// it is fitGCPercent while any runs.
func TestRaiseGCPutsBackTheTargetBefore(t *testing.T) {
	before := debug.SetGCPercent(137)
	defer debug.SetGCPercent(before)
	endA := raiseGC()
	endB := raiseGC()
	endA()
	if got := debug.SetGCPercent(-1); got != fitGCPercent {
		t.Errorf("one fit of two ended: target %d, want %d", got, fitGCPercent)
	}
	debug.SetGCPercent(fitGCPercent)
	endB()
	if got := debug.SetGCPercent(-1); got != 137 {
		t.Errorf("both ended: target %d, want 137 (the target before)", got)
	}
}
