package fit

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/sim"
)

// deepAllowance is a deployment whose burst allowance the main job's
// default plan does not spend until its last sends: the run tells little
// of how large it is.
func deepAllowance() sim.Config {
	c := sim.DefaultConfig()
	c.PTU, c.BucketDepth, c.BurstPct, c.BurstRefill, c.Seed = 60, time.Second, 6000, time.Hour, 4
	return c
}

// fitSuggest fits file on budget b, the PTU model alone, asking for a
// suggested plan.
func fitSuggest(t *testing.T, b budget, file string) Result {
	t.Helper()
	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	r, err := Run(context.Background(), Job{inputs: []input{{Name: filepath.Base(file), R: fh}}, Threshold: DefaultThreshold, MinAgreement: DefaultMinAgreement,
		MaxWork: DefaultMaxWork, PromptTokens: client.DefaultPromptTokens, MaxTokens: client.DefaultMaxTokens, budget: b, models: []string{sim.ProfilePTU}, SuggestPlan: true})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSuggestedPlanNarrowsTheAllowance is part 6's test: on a deployment
// whose burst allowance the default plan cannot pin, the fit's range of
// burst-pct is wide; the plan --suggest-plan proposes, run against the
// same deployment and fitted, narrows it.
//
// It fails (round 7, r7-twin, .ci/run leaves it out): the default
// plan's fit of this deployment is poor, its burst-pct 1,713 in a range
// of 426–9,765 (wide, the truth inside); the suggested plan, waves of 40
// eight times 20 s apart, fitted, is poor too, its range 0.083–36.4.
// The truth's own settings score good on both runs (objective 0.004 and
// 0.014): the search, not the plan, misses. On the default budget the
// default plan's run fits poor at a 21 s bucket and 167% (objective
// 0.19, range 153–217), and a run of waves of 160 a minute apart fits
// good at 5,883% (range 1,389–6,296). Round 6: good, 345–981, then
// poor, 0.19–2,128. Round 8 (the first refusal's line, which quickLines
// does not try; this test's result is round 7's): on the default
// budget, line included, the default plan's run fits poor at 115.6%
// (range 98.5–235.8, the truth outside), and its suggested plan (waves
// of 40, four, a minute apart) poor at 415% (48.5–10,000); the
// characterize run differs from one process to the next (another run
// of the same test: 86.9–235.8, then 3.2–6.8). The line lies through
// the truth, but the run's first refusal comes at the allowance's end,
// where the saw-tooth's floors are many and the truth's is not the
// deepest the search reaches.
func TestSuggestedPlanNarrowsTheAllowance(t *testing.T) {
	long(t, "two fits")
	t.Parallel()
	target := campaign.Target{Sim: deepAllowance(), InMemory: true, Spec: defaultSpec()}
	first := fitSuggest(t, quickLines, runPlans(t, target))
	wide := first.ranges["burst-pct"]
	t.Logf("default plan: %s; burst-pct %v range %v; suggestion %+v", first.Profile.Fit.Quality, first.Profile.Config.BurstPct, wide, first.suggestion)
	if first.suggestion == nil || len(first.suggestion.Flags) == 0 {
		t.Fatalf("no plan suggested: %+v", first.suggestion)
	}
	bc := burst.Config{}
	for i := 0; i+1 < len(first.suggestion.Flags); i += 2 {
		v := first.suggestion.Flags[i+1]
		switch first.suggestion.Flags[i] {
		case "--burst-size":
			bc.Size, _ = strconv.Atoi(v)
		case "--burst-waves":
			bc.Waves, _ = strconv.Atoi(v)
		case "--burst-gap":
			bc.Gap, _ = time.ParseDuration(v)
		}
	}
	second := fitSuggest(t, quickLines, runBurst(t, target, bc))
	narrow := second.ranges["burst-pct"]
	t.Logf("suggested plan %v: %s; burst-pct %v range %v", bc, second.Profile.Fit.Quality, second.Profile.Config.BurstPct, narrow)
	if wide[1]/wide[0] < 3 {
		t.Errorf("the default plan's burst-pct range %v is not wide (want a ratio of 3 or more)", wide)
	}
	if narrow[1]/narrow[0] >= wide[1]/wide[0]/2 {
		t.Errorf("the suggested plan's range %v is not narrower than half the default's %v", narrow, wide)
	}
}

// quickLines is quick with its scans along each parameter's whole range
// (the ranges are the tried points that fit: a search that only
// descends tries none far along a setting the run does not pin).
var quickLines = budget{global: 12, starts: 1, simplex: 30, passes: 1, lines: 2}
