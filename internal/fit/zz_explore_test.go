package fit

import (
	"os"
	"strings"
	"testing"
)

func TestZZExplore(t *testing.T) {
	long(t, "explore")
	sets := strings.Split(os.Getenv("G_SETS"), ";")
	for _, tg := range strings.Split(os.Getenv("G_TARGETS"), ",") {
		cfg := targetE()
		if tg == "f" {
			cfg = targetF()
		}
		for _, set := range sets {
			set := set
			tg := tg
			t.Run(tg+" "+set, func(t *testing.T) {
				t.Parallel()
				r := fitSuggest(t, defaultBudget, suggestedJob(t, cfg, strings.Fields(set)))
				rng := r.ranges["burst-refill"]
				t.Logf("%s [%s]: %s refill %v [%.1f, %.1f] %.2fx; pct %v %v depth %v", tg, set, r.Profile.Fit.Quality, r.Profile.Config.BurstRefill, rng[0], rng[1], rng[1]/rng[0], r.Profile.Config.BurstPct, r.ranges["burst-pct"], r.ranges["bucket-depth"])
			})
		}
	}
}

func TestZZCount(t *testing.T) { t.Log(len(candidatePlans())) }
