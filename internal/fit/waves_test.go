package fit

import (
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/charplan"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/schedule"
	"github.com/ptuprobe/ptuprobe/sim"
)

// TestReplaysWavesOfDifferingSizes: the main job's burst waves grow to
// first contact (campaign.FirstContact) on a deployment whose capacity
// and allowance take the first wave whole (bench/twin-unseen.sh's
// target c: 400 PTU, 3 s, 50%): waves of 40, 80 (refused in part), 40,
// 40. The fit reads the waves as sent, each at its time, and replaying
// them under the deployment's own settings refuses, wave by wave, what
// it refused.
func TestReplaysWavesOfDifferingSizes(t *testing.T) {
	t.Parallel()
	truth := sim.DefaultConfig()
	truth.PTU, truth.BucketDepth, truth.BurstPct, truth.BurstRefill, truth.Seed = 400, 3*time.Second, 50, 10*time.Minute, 9
	out := filepath.Join(t.TempDir(), "results.csv")
	bc := charplan.Burst()
	synctest.Test(t, func(t *testing.T) {
		b, err := campaign.FirstContact(bc, 10_000, 512).Plan(false)
		if err != nil {
			t.Fatal(err)
		}
		s, err := campaign.SchedulePlan(schedule.Config{Phases: charplan.Phases()})
		if err != nil {
			t.Fatal(err)
		}
		job := campaign.Job{
			Plans: []campaign.Plan{b, s}, Output: out, Replace: true,
			Target:  campaign.Target{Sim: truth, InMemory: true, Spec: defaultSpec()},
			Options: campaign.Options{MaxInFlight: 512, MaxRequests: 20_000, Wait: sleep.Until},
		}
		if _, err := campaign.Run(t.Context(), job); err != nil {
			t.Fatal(err)
		}
	})
	w := workloadOf(t, out)
	if len(w.Runs) != 1 || len(w.Runs[0].Plans) < 2 {
		t.Fatalf("%d runs", len(w.Runs))
	}
	burstSends := w.Runs[0].Plans[0].Sends
	wave := func(s send) int { return int((s.At + bc.Gap/2) / bc.Gap) }
	sizes, refused := make([]int, bc.Waves), make([]int, bc.Waves)
	for _, s := range burstSends {
		if s.Group != results.GroupBurst {
			t.Fatalf("a send of group %s in the burst plan", s.Group)
		}
		sizes[wave(s)]++
		refused[wave(s)] += b01(s.Refused)
	}
	if !slices.Equal(sizes, []int{40, 80, 40, 40}) || refused[0] != 0 || refused[1] == 0 {
		t.Fatalf("waves of %v, refused %v: want 40 admitted whole, then 80 refused in part, 40, 40", sizes, refused)
	}
	answers, err := newReplayer(w).replay(t.Context(), truth, 0)
	if err != nil {
		t.Fatal(err)
	}
	twin := make([]int, bc.Waves)
	for i, s := range burstSends { // the first plan's sends come first
		twin[wave(s)] += b01(answers[i].refused)
	}
	t.Logf("waves of %v: refused %v recorded, %v replayed", sizes, refused, twin)
	for k := range twin {
		if d := twin[k] - refused[k]; d < -1 || d > 1 {
			t.Errorf("wave %d of %d: the replay refused %d, the run %d", k, sizes[k], twin[k], refused[k])
		}
	}
}

// targetC is bench/twin-unseen.sh's target c: capacity and allowance
// (some 42 and 21 sends of the default request) take the main job's
// first wave of 40 whole.
func targetC() sim.Config {
	cfg := sim.DefaultConfig()
	cfg.PTU, cfg.BucketDepth, cfg.BurstPct, cfg.BurstRefill, cfg.Seed = 400, 3*time.Second, 50, 10*time.Minute, 9
	return cfg
}

// contactJob is the main job as characterize sends it against an
// embedded simulator of cfg (mainJob's plans, the refill probe on), its
// waves grown to first contact when grow (campaign.GrowFirstContact)
// or as given.
func contactJob(t *testing.T, cfg sim.Config, grow bool) string {
	t.Helper()
	return runMainJob(t, cfg, charplan.RefillRest, grow, 10_000, 512)
}

// TestFirstContactTellsTheAllowance is the hidden measure on
// target c's allowance, fitted whole: with waves of 40 its first wave is
// admitted whole and the run never sees the allowance full, so the
// fit's range for burst-pct is wider than 20× (0.03–277% on the served
// target); with the waves grown to first contact the second wave, of
// 80, meets it full, and the range holds the truth within 20×.
func TestFirstContactTellsTheAllowance(t *testing.T) {
	long(t, "two whole fits")
	t.Parallel()
	cfg := targetC()
	for _, grow := range []bool{false, true} {
		r := fitModels(t, defaultBudget, []string{sim.ProfilePTU}, nil, contactJob(t, cfg, grow))
		got := r.Profile.Config
		rng := r.ranges["burst-pct"]
		t.Logf("grown %v: %s, %.1f PTU, %v, %.2f%% [%.4g, %.4g], refill %v %v", grow, r.Profile.Fit.Quality, got.PTU, got.BucketDepth, got.BurstPct, rng[0], rng[1], got.BurstRefill, r.ranges["burst-refill"])
		told := r.Profile.Fit.Quality == sim.FitGood && rng[0] <= cfg.BurstPct && cfg.BurstPct <= rng[1] && rng[1] <= 20*rng[0]
		if told != grow {
			t.Errorf("grown %v: %s, burst-pct %.2f%% in [%.4g, %.4g]: want good with %g%% inside a range no wider than 20× only with the waves grown", grow, r.Profile.Fit.Quality, got.BurstPct, rng[0], rng[1], cfg.BurstPct)
		}
	}
}
