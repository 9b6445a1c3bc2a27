package campaign

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/schedule"
	"github.com/ptuprobe/ptuprobe/sim"
)

// The overshoot picture validated on the embedded simulator, whose drain
// rate D and capacity C are known (sim/doc.go).
//
// What the model predicts. A refusal advises (level − C) / D, and refused
// requests add nothing to the bucket: the level is over C only by what the
// last admitted request brought, at most its estimate c = prompt +
// OutputWeight × max_tokens. So a wait never exceeds c / D (184 ms with
// the defaults) however hard the client pushes: there is no backlog that
// grows with (offered − D). With arrivals 1/λ apart, the request admitted
// when the level dips under C overshoots it by c − y·D, y uniform over
// one spacing (the spacing rotates around the drain time c/D), and the
// refusals after it wait c/D − y − k/λ: over many of them, uniformly
// between 0 and c/D − 1/λ. Hence
//
//	mean wait = c/(2D) − 1/(2λ)
//
// a line in the spacing s = 1/λ with slope −½ whatever D, whose level
// c/(2D) — the mean of wait + s/2 over the 429s — gives D = c / (2 ×
// level). (A free intercept would carry the noise of the slope out to
// s = 0, several ms; the slope is checked apart.) Against λ itself it is a curve
// that saturates at c/(2D), so the waits rise only a little with offered
// load and the spread within each load (the whole of 0 … c/D − 1/λ) hides
// most of it: Spearman's ρ about 0.25, under LineFitsRho, and no line is
// reported — which is what the simulator does, not a flaw of the method.
// The utilization the simulator reports with a refusal is 100 × level / C,
// so wait = (utilization − 100%) × C / (100 D): a line of slope 10 × C/D
// ms per percentage point (10 ms with the 1 s bucket), which gives D back
// from C.
//
// With Poisson arrivals two requests often come close together, so a
// refusal sees nearly the whole overshoot at any load: waits are uniform
// over 0 … c/D whatever λ, and ρ is near 0.
//
// The recovered D comes from the load the analysis placed each 429
// against (its requests per second over the default 1 s window; the rates
// are whole numbers, so a window holds exactly λ arrivals once a phase is
// under way), the shape checked with a Theil–Sen line over every pair.
//
// The test lives in campaign, not in analyze whose claim it checks: it
// needs a campaign against the simulator, and campaign's test binary links
// analyze already, where analyze's would link campaign, client, sim and
// schedule for this one file (16.4 MB instead of 5.2; issue 39).

// long runs the volume cases too (.ci/run's long stage).
var long = flag.Bool("long", false, "also run the volume cases (.ci/run's long stage)")

// theilSenSlope is the median slope of y against x over every pair of
// points with different x (analyze's own estimator samples 100,000 pairs
// past that many; its tests are analyze's).
func theilSenSlope(x, y []float64) float64 {
	var slopes []float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			if dx := x[j] - x[i]; dx != 0 {
				slopes = append(slopes, (y[j]-y[i])/dx)
			}
		}
	}
	if len(slopes) == 0 {
		return math.NaN()
	}
	slices.Sort(slopes)
	n := len(slopes)
	if n%2 == 1 {
		return slopes[n/2]
	}
	return (slopes[n/2-1] + slopes[n/2]) / 2
}

// simRun is one plan against the simulator and what the analysis made
// of it.
type simRun struct {
	cfg        sim.Config
	estimate   float64 // c: mean prompt tokens + OutputWeight × max_tokens
	a          *analyze.Analysis
	group      analyze.GroupLoad
	throughput int // requests sent
}

const simMaxTokens = 100

// runOnSimulator sends a schedule of constant phases at rates (requests
// per second, seconds each) to a simulator of cfg, in a synctest bubble on
// an in-memory network, and analyzes the results with the default window.
func runOnSimulator(t *testing.T, cfg sim.Config, promptTokens int, rates []float64, phase time.Duration, arrival string) simRun {
	t.Helper()
	out := filepath.Join(t.TempDir(), "results.csv")
	var phases []schedule.Phase
	for _, r := range rates {
		phases = append(phases, schedule.Phase{Name: fmt.Sprint(r), Duration: phase, From: r, To: r})
	}
	synctest.Test(t, func(t *testing.T) {
		plan, err := SchedulePlan(schedule.Config{Phases: phases, Arrival: arrival, Seed: uint64(cfg.Seed)})
		if err != nil {
			t.Fatal(err)
		}
		job := Job{
			Plans:  []Plan{plan},
			Output: out,
			Target: Target{
				Spec: client.Spec{PromptTokens: promptTokens, MaxTokens: simMaxTokens, Timeout: 30 * time.Second},
				Sim:  cfg, InMemory: true,
			},
			Options: Options{MaxInFlight: 512, MaxRequests: 20_000, Wait: sleep.Until},
		}
		if _, err := Run(t.Context(), job); err != nil {
			t.Fatal(err)
		}
	})
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tally := analyze.NewTally(false, analyze.OfferedLoad(0))
	if err := tally.Read(context.Background(), f, analyze.Input{Name: out, Ordinal: 1}, analyze.ForeignColumns{}); err != nil {
		t.Fatal(err)
	}
	a, err := tally.Analysis(nil, analyze.DefaultMinGroup)
	if err != nil {
		t.Fatal(err)
	}
	if a.Overshoot == nil || len(a.Overshoot.Groups) != 1 {
		t.Fatalf("overshoot %+v", a.Overshoot)
	}
	// The estimate the simulator charged, from the prompts it reported.
	prompts, n, sent := 0, 0, 0
	for _, rec := range testkit.ReadRecords(t, out) {
		sent++
		if rec.PromptTokens >= 0 {
			prompts += rec.PromptTokens
			n++
		}
	}
	c := float64(prompts)/float64(n) + cfg.OutputWeight*simMaxTokens
	return simRun{cfg: cfg, estimate: c, a: a, group: a.Overshoot.Groups[0], throughput: sent}
}

// TestOvershootRecoversDrainRate runs constant phases of 20 s from 1.3 to
// five times the sustainable rate, for three deployments (drain rates
// 4,167, 7,083 and 12,500 tokens/s), prompt sizes and seeds, with the
// default burst allowance (a few long waits at the first overload), and
// recovers D two ways:
//   - from the waits against the arrival spacing: the Theil–Sen slope is
//     −½ within 0.15, and the level gives D within 5%. The model leaves
//     out that an admitted request's estimate is replaced by its smaller
//     actual cost when it completes (~0.7 s later), which shortens the
//     waits after it by a few ms, so D comes out high: by −0.4% to +4.0%
//     over 27 runs (these three drain rates × prompts of 800, 1,000 and
//     1,200 tokens × seeds 1–3; 650 to 2,600 429s each), the spread of a
//     mean over ~1,000 uniform waits being about 1%. Theil–Sen's own
//     intercept gave −6.5% to +4.3% over the same runs. 5% holds the bias
//     and the spread; the three runs here gave +2.4%, +2.2% and +0.4%;
//   - from the reported utilization: within 1%, the rounding of the wait
//     (up to a whole ms) and of the utilization (to 0.1%); it comes out
//     exact to the tokens/s.
//
// It also holds what the report says against offered load itself: the
// waits rose slightly with it (0.1 < ρ < LineFitsRho; 0.24–0.31 over the
// 27 runs) and no line is fitted; and with Poisson arrivals ρ is near 0
// (0.04–0.13 over seeds 1–8; the test asks |ρ| < 0.2).
func TestOvershootRecoversDrainRate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		ptu    float64
		prompt int
		seed   int64
	}{
		{170, 1000, 1}, // the defaults: D = 7,083 tokens/s, c ≈ 1,301
		{100, 800, 2},  // D = 4,167
		{300, 1200, 3}, // D = 12,500
	}
	if testkit.Race || !*long {
		// The defaults: the same goroutines at work in each, and the same
		// estimator; the other drain rates are -long's (.ci/run).
		cases = cases[:1]
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("ptu=%v", tc.ptu), func(t *testing.T) {
			t.Parallel()
			cfg := sim.DefaultConfig()
			cfg.PTU, cfg.Seed, cfg.UtilizationHeader = tc.ptu, tc.seed, true
			D, C := cfg.DrainTokensPerSecond(), cfg.CapacityTokens()
			sustainable := D / (float64(tc.prompt) + cfg.OutputWeight*simMaxTokens)
			var rates []float64
			for _, f := range []float64{1.3, 1.6, 2, 2.5, 3, 4, 5} {
				rates = append(rates, math.Round(f*sustainable))
			}
			run := runOnSimulator(t, cfg, tc.prompt, rates, 20*time.Second, schedule.ArrivalConstant)

			var spacing, waits []float64
			level := 0.0
			for _, p := range run.group.Points {
				spacing = append(spacing, 1000/p.RequestsPerSec)
				waits = append(waits, p.WaitMS)
				level += p.WaitMS + 500/p.RequestsPerSec
			}
			level /= float64(len(waits))
			slope := theilSenSlope(spacing, waits)
			fromSpacing := run.estimate * 1000 / (2 * level)

			u := run.group.Utilization
			if u.Line == nil {
				t.Fatalf("no line against utilization: %+v", u)
			}
			fromUtilization := 10 * C / u.Line.Slope

			r := run.group.Requests
			t.Logf("D %.0f tokens/s, C %.0f, c %.1f, rates %v/s: %d requests, %d 429s placed; "+
				"waits against spacing: slope %.3f, level %.2f ms → D %.0f (%+.1f%%); "+
				"against utilization: ρ %.3f, slope %.3f ms/%% → D %.0f (%+.2f%%); against offered req/s: ρ %.3f, line %v",
				D, C, run.estimate, rates, run.throughput, r.N, slope, level, fromSpacing, 100*(fromSpacing/D-1),
				u.Rho, u.Line.Slope, fromUtilization, 100*(fromUtilization/D-1), r.Rho, r.Line)

			if math.Abs(fromSpacing/D-1) > 0.05 {
				t.Errorf("D from the waits against the arrival spacing: %.0f, want %.0f ± 5%%", fromSpacing, D)
			}
			if !(math.Abs(slope+0.5) <= 0.15) { // NaN when no pair had different spacings
				t.Errorf("waits against the spacing: slope %.3f, want −0.5 ± 0.15", slope)
			}
			if math.Abs(fromUtilization/D-1) > 0.01 || u.Rho < 0.99 {
				t.Errorf("D from the utilization: %.0f (ρ %.3f), want %.0f ± 1%%", fromUtilization, u.Rho, D)
			}
			if r.Reason != "" || r.Rho <= 0.1 || r.Rho >= analyze.LineFitsRho || r.Line != nil {
				t.Errorf("against offered load: %+v; want waits rising slightly (0.1 < ρ < %v), no line", r, analyze.LineFitsRho)
			}
		})
	}
	t.Run("poisson", func(t *testing.T) {
		t.Parallel()
		cfg := sim.DefaultConfig()
		cfg.Seed = 4
		run := runOnSimulator(t, cfg, 1000, []float64{7, 9, 12, 16, 22, 30}, 20*time.Second, schedule.ArrivalPoisson)
		r := run.group.Requests
		t.Logf("Poisson arrivals: %d 429s, ρ %.3f against offered req/s", r.N, r.Rho)
		if r.Reason != "" || math.Abs(r.Rho) >= 0.2 || r.Line != nil {
			t.Errorf("Poisson arrivals: %+v; want |ρ| < 0.2, no line", r)
		}
	})
}
