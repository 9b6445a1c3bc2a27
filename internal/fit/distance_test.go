package fit

import (
	"math"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/campaign"

	"github.com/ptuprobe/ptuprobe/sim"
)

// TestSeedsDifferByAResolution is why the fit's KS has a resolution: two
// runs of the main job on one simulator that differ only in the seed of
// its completion lengths put the burst waves' shared waits 30 ms or 5%
// apart, and the plain KS of the two is 0.3, twice a good fit's
// threshold; at the resolution they are the same waits.
//
// It holds at prompts of 1,001 tokens (the last round's client's
// synthetic prompts, counted 4 characters a token): at this round's exact
// 1,000 (or 1,007 with a tokenizer's chat overhead) seed 1 overshoots one
// wave by two requests where seed 3 overshoots it by one (120 ms against
// 61 ms; KS 0.28 at the resolution). The resolution absorbs the seeds'
// noise, not a wave whose overshoot flips by a request: a finding
// docs/fit.md reports, and why the seed is a fit's setting.
func TestSeedsDifferByAResolution(t *testing.T) {
	t.Parallel()
	var burst [][]float64
	for _, seed := range []int64{1, 3} {
		c := hidden()
		c.Seed, c.Tokens = seed, sim.Chars
		spec := defaultSpec()
		spec.PromptTokens = 1001
		burst = append(burst, analysis(t, runPlans(t, campaign.Target{Sim: c, InMemory: true, Spec: spec})).Groups[0].Waits)
	}
	exact, resolved := exactKS(burst[0], burst[1]), ks(burst[0], burst[1])
	t.Logf("burst-shaped, seeds 1 and 3: plain KS %.3f, at the resolution %.3f", exact, resolved)
	if exact <= DefaultThreshold || resolved > 0.05 {
		t.Fatalf("plain KS %.3f (want > %.2f), at the resolution %.3f (want <= 0.05)", exact, DefaultThreshold, resolved)
	}
}

// TestKS checks the distance on samples whose answer is known.
func TestKS(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b            []float64
		exact, resolved float64
	}{
		{nil, nil, 0, 0},
		{[]float64{1}, nil, 1, 1},
		{[]float64{100, 200, 300, 400}, []float64{100, 200, 300, 400}, 0, 0},
		{[]float64{100, 200, 300, 400}, []float64{1000, 2000, 3000, 4000}, 1, 1},
		{[]float64{1000, 1000}, []float64{1050, 1050}, 1, 0},                             // 5% apart: one wait
		{[]float64{1000, 1000, 5000, 5000}, []float64{1000, 1000, 9000, 9000}, 0.5, 0.5}, // a mode missed by far
		{[]float64{10, 20}, []float64{50, 60}, 1, 0},                                     // within 50 ms
	} {
		if got := exactKS(c.a, c.b); math.Abs(got-c.exact) > 1e-9 {
			t.Errorf("exactKS(%v, %v) = %v, want %v", c.a, c.b, got, c.exact)
		}
		if got := ks(c.a, c.b); math.Abs(got-c.resolved) > 1e-9 {
			t.Errorf("ks(%v, %v) = %v, want %v", c.a, c.b, got, c.resolved)
		}
	}
}

// TestParamsTable: every row of the table names a profile key (a --sim-*
// flag) that sets its field, a number or a duration, with a range its
// scale can search; phaseParam alone sets no field.
func TestParamsTable(t *testing.T) {
	t.Parallel()
	keys := sim.ProfileKeys()
	for _, p := range paramRows {
		if p.Name == phaseParam {
			if p.Field != "" {
				t.Errorf("phase sets %s", p.Field)
			}
			continue
		}
		if keys[p.Name] != p.Field {
			t.Errorf("%s: the profile key of that name sets %q, not %s", p.Name, keys[p.Name], p.Field)
		}
		c := sim.DefaultConfig()
		if _, err := p.field(&c); err != nil {
			t.Error(err)
		}
		if !(p.Min < p.Max) || p.Scale == logScale && p.Min <= 0 || len(p.Profiles) == 0 {
			t.Errorf("%s: range %v..%v scale %v profiles %v", p.Name, p.Min, p.Max, p.Scale, p.Profiles)
		}
		for _, u := range []float64{0, 0.37, 1} {
			if v := p.value(p.unit(p.value(u))); math.Abs(v-p.value(u)) > 1e-9*math.Max(1, math.Abs(v)) {
				t.Errorf("%s: unit is not value's inverse at %v", p.Name, u)
			}
		}
	}
}

// TestJudgedMiss: the objective's term for the judged percentiles is 0
// when p50, p90 and p99 are all within the judgement's tolerance, and
// grows with how far one lies beyond it: a tail missed by half weighs
// more than one missed by a third, though both miss the same few waits.
func TestJudgedMiss(t *testing.T) {
	t.Parallel()
	rec := make([]float64, 100)
	for i := range rec {
		rec[i] = 40
	}
	rec[98], rec[99] = 17_000, 17_000 // p99 17 s
	tail := func(long float64) []float64 {
		w := append([]float64(nil), rec...)
		w[98], w[99] = long, long
		return w
	}
	near, third, half := judgedMiss(rec, tail(14_000)), judgedMiss(rec, tail(11_000)), judgedMiss(rec, tail(8_500))
	if near != 0 {
		t.Errorf("a p99 18%% off, within the 25%%: judged miss %v, want 0", near)
	}
	if !(third > 0 && half > third) {
		t.Errorf("judged miss of a p99 a third off %v, half off %v: want 0 < third < half", third, half)
	}
	if judgedMiss(rec, nil) != 1 || judgedMiss(nil, nil) != 0 {
		t.Error("an empty twin should miss by 1 decade, two empty samples by 0")
	}
}

// TestOffAtMax: a mechanism's row that can be off starts off (its
// default, 0, is at the top of its range) and writes the top as 0, so a
// twin fitted without the mechanism's effect has it off in its file.
func TestOffAtMax(t *testing.T) {
	t.Parallel()
	for _, p := range paramsOf(sim.ProfilePTU) {
		if !p.OffAtMax {
			continue
		}
		c := sim.DefaultConfig()
		if u := p.unit(p.get(c)); u != 1 {
			t.Errorf("%s: the default (off) is at %v of the range, want 1", p.Name, u)
		}
		if err := p.set(&c, p.value(1)); err != nil || p.get(c) != 0 {
			t.Errorf("%s: the range's top sets %v (%v), want 0 (off)", p.Name, p.get(c), err)
		}
		if err := p.set(&c, p.value(0.5)); err != nil || p.get(c) == 0 {
			t.Errorf("%s: the middle of the range sets %v (%v)", p.Name, p.get(c), err)
		}
	}
}
