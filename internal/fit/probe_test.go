package fit

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/charplan"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/schedule"
	"github.com/ptuprobe/ptuprobe/sim"
)

// mainJob runs the main job's default plans as characterize sends them
// against an embedded simulator of cfg (in a synctest bubble, on an
// in-memory network), within characterize's default caps
// (dispatch.DefaultMaxRequests, DefaultMaxInFlight): the burst plan, its
// waves growing to first contact (campaign.GrowFirstContact), the ramp
// sized by its waves, and, with rest > 0, the refill probe after them
// (campaign.RefillChoice), in parts of the job's request. It returns the
// results file.
func mainJob(t *testing.T, cfg sim.Config, rest time.Duration) string {
	t.Helper()
	return runMainJob(t, cfg, rest, true, dispatch.DefaultMaxRequests, dispatch.DefaultMaxInFlight)
}

// runMainJob runs the main job's default plans in the order characterize
// puts them (campaign.MainPlans) against an embedded simulator of cfg,
// in a synctest bubble on an in-memory network, within the caps given:
// the refill probe on with rest > 0, the waves grown to first contact
// when grow. It returns the results file.
func runMainJob(t *testing.T, cfg sim.Config, rest time.Duration, grow bool, maxRequests, maxInFlight int) string {
	t.Helper()
	return runMainPlans(t, cfg, charplan.Burst(), grow, campaign.RefillChoice{Rest: rest, Size: charplan.BurstSize, MaxRequests: maxRequests, Budget: charplan.Cap},
		maxRequests, maxInFlight)
}

// runMainPlans runs the burst plan bc (grown to first contact when grow),
// the default schedule sized by its waves and the refill probe refill
// chooses, put in order by campaign.MainPlans as characterize puts them,
// against an embedded simulator of cfg, in a synctest bubble on an
// in-memory network, within the caps given. It returns the results file.
func runMainPlans(t *testing.T, cfg sim.Config, bc burst.Config, grow bool, refill campaign.RefillChoice, maxRequests, maxInFlight int) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "results.csv")
	synctest.Test(t, func(t *testing.T) {
		b, err := campaign.BurstPlan(bc, false)
		if err != nil {
			t.Fatal(err)
		}
		sc := schedule.Config{Phases: charplan.Phases()}
		s, err := campaign.SchedulePlan(sc)
		if err != nil {
			t.Fatal(err)
		}
		plans, _, err := campaign.MainPlans{
			Burst: &b, Wave: bc, Grow: grow, Sched: &s, Schedule: sc, SizeRamp: true,
			Refill: refill, MaxRequests: maxRequests, MaxInFlight: maxInFlight,
		}.Plans()
		if err != nil {
			t.Fatal(err)
		}
		job := campaign.Job{
			Plans: plans, Output: out, Replace: true, Target: campaign.Target{Sim: cfg, InMemory: true, Spec: defaultSpec()},
			Options: campaign.Options{MaxInFlight: maxInFlight, MaxRequests: maxRequests, Wait: sleep.Until},
		}
		if _, err := campaign.Run(t.Context(), job); err != nil {
			t.Fatal(err)
		}
	})
	return out
}

// targetE is bench/twin-unseen.sh's target e: a refill of minutes, as
// the simulator's default (5 min) and the documents profile's (9 min).
func targetE() sim.Config {
	cfg := sim.DefaultConfig()
	cfg.PTU, cfg.BucketDepth, cfg.BurstPct, cfg.BurstRefill, cfg.Seed = 300, time.Second, 175, 5*time.Minute, 13
	return cfg
}

// targetF is bench/twin-unseen.sh's target f: the simulator's defaults
// (170 PTU, 1 s, 175%, 5 minutes), with a seed of its own.
func targetF() sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Seed = 17
	return cfg
}

// TestRefillProbeBoundsTheRefill: the main job's run bounds a refill of
// minutes on both sides only with its refill probe. Without it, the
// last refusal the run has is the ramp's last, and no send after it
// asks for the allowance: at the target's own drain, depth and
// allowance its sends tell the refill (refillAt) from below only, up to
// the search's bound of an hour: target e's 5 minutes from 196 s
// (18.4×; the fit's range, over the points that fit, from 16 s:
// docs/fit.md), the simulator's default 170 PTU with a 300% allowance
// from 137 s (26×). With it, the probe's sends after the rest are
// admitted over 100% on what came back (a send or two), and its first
// refusal bounds the refill above: 195–355 s and 171–341 s.
func TestRefillProbeBoundsTheRefill(t *testing.T) {
	t.Parallel()
	wide := sim.DefaultConfig()
	wide.BurstPct, wide.BurstRefill, wide.Seed = 300, 5*time.Minute, 13
	for _, cfg := range []sim.Config{targetE(), targetF(), wide} {
		capacity := cfg.CapacityTokens()
		truth := cfg.BurstRefill.Seconds()
		for _, rest := range []time.Duration{0, charplan.RefillRest} {
			run := readRun(workloadOf(t, mainJob(t, cfg, rest)), cfg.OutputWeight)
			got, least, most, ok := refillAt(run, cfg.DrainTokensPerSecond(), capacity, capacity*cfg.BurstPct/100, 1, 3600)
			t.Logf("%g PTU, %g%%, rest %v: refill %.1f s, the run's %.1f–%.1f s (%.1f×; truth %g s)", cfg.PTU, cfg.BurstPct, rest, got, least, most, most/least, truth)
			pinned := ok && least <= truth && truth <= most && most/least <= 20 && most < 3600
			if pinned != (rest > 0) {
				t.Errorf("%g PTU, %g%%, rest %v: the run's refills %.1f–%.1f s (ok %v): want bounded on both sides, %g s inside, within 20×, only with the probe", cfg.PTU, cfg.BurstPct, rest, least, most, ok, truth)
			}
		}
	}
}

// TestRefillProbeNarrowsTheFit is the hidden measure on targets
// e and f (the simulator's defaults), fitted whole: without the probe
// the fit's refill misses the truth (5 min) and its range is too wide to
// count; with it the refill is within 25% or inside a range no wider
// than 20× (docs/fit.md has the figures).
func TestRefillProbeNarrowsTheFit(t *testing.T) {
	long(t, "four whole fits")
	t.Parallel()
	for _, target := range []struct {
		name string
		cfg  sim.Config
	}{{"e", targetE()}, {"f", targetF()}} {
		truth := target.cfg.BurstRefill.Seconds()
		for _, rest := range []time.Duration{0, charplan.RefillRest} {
			r := fitModels(t, defaultBudget, []string{sim.ProfilePTU}, nil, mainJob(t, target.cfg, rest))
			got := r.Profile.Config.BurstRefill.Seconds()
			rng := r.ranges["burst-refill"]
			t.Logf("%s, rest %v: %s, refill %.1f s [%.1f, %.1f]", target.name, rest, r.Profile.Fit.Quality, got, rng[0], rng[1])
			ok := r.Profile.Fit.Quality == sim.FitGood &&
				(abs(got/truth-1) <= percentileTolerance || rng[0] <= truth && truth <= rng[1] && rng[1] <= 20*rng[0])
			if ok != (rest > 0) {
				t.Errorf("%s, rest %v: %s, refill %.1f s [%.1f, %.1f]: want good and within 25%% of %g s or inside a range no wider than 20×, only with the probe", target.name, rest, r.Profile.Fit.Quality, got, rng[0], rng[1], truth)
			}
		}
	}
}

// TestMainJobAsCharacterizeSendsIt: mainJob sends what characterize sends. On
// target c its first wave of 40 is admitted whole, so its second grows to
// 80 (campaign.GrowFirstContact); its refill probe, after a first wave
// admitted whole, sends the job's whole requests, and on target e (26 of
// 40 admitted first) a u-th of them, u = 120 ÷ 26 = 4: a quarter of
// max_tokens.
func TestMainJobAsCharacterizeSendsIt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		cfg     sim.Config
		wave1   int // the burst plan's second wave's first attempts
		tokensU int // the job's max_tokens ÷ the probe's
	}{{"c", targetC(), 80, 1}, {"e", targetE(), 40, 4}} {
		fh, err := os.Open(mainJob(t, c.cfg, charplan.RefillRest))
		if err != nil {
			t.Fatal(err)
		}
		rd, err := results.NewReader(fh, "results.csv")
		if err != nil {
			t.Fatal(err)
		}
		waves := map[int]int{}
		probeTokens := map[int]int{}
		for {
			var r results.Record
			if err := rd.Read(&r); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			switch {
			case r.Attempt != 1:
			case r.Group == results.GroupBurst:
				waves[r.Wave]++
			case r.Group == results.GroupRefillProbe:
				probeTokens[r.MaxTokens]++
			}
		}
		fh.Close()
		t.Logf("%s: burst waves %v, the probe's max_tokens %v", c.name, waves, probeTokens)
		want := client.DefaultMaxTokens / c.tokensU
		if waves[0] != 40 || waves[1] != c.wave1 || len(probeTokens) != 1 || probeTokens[want] == 0 {
			t.Errorf("%s: burst waves %v, the probe's max_tokens %v: want 40 then %d, the probe's all %d", c.name, waves, probeTokens, c.wave1, want)
		}
	}
}
