package policylab

import (
	"context"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/charplan"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/schedule"
	"github.com/ptuprobe/ptuprobe/sim"
)

// mainJobPlans is the main job's plan, scaled.
func mainJobPlans(scale float64) ([]campaign.Plan, error) {
	b := charplan.Burst()
	b.Gap = time.Duration(float64(b.Gap) / scale)
	bp, err := campaign.BurstPlan(burst.Config{Size: b.Size, Waves: b.Waves, Gap: b.Gap}, false)
	if err != nil {
		return nil, err
	}
	var phases []schedule.Phase
	for _, p := range charplan.Phases() {
		phases = append(phases, schedule.Phase{Name: p.Name, Duration: time.Duration(float64(p.Duration) / scale), From: p.From * scale, To: p.To * scale})
	}
	sp, err := campaign.SchedulePlan(schedule.Config{Phases: phases})
	if err != nil {
		return nil, err
	}
	return []campaign.Plan{bp, sp}, nil
}

// runLab runs every built-in policy on the main job's plan against fresh
// simulators (seed 1) at the given time scale, in a synctest bubble over
// an in-memory network: minutes of model time in a second or two.
func runLab(t *testing.T, scale float64) map[string]Measure {
	t.Helper()
	var specs []Spec
	for _, name := range DefaultPolicies() {
		s, err := ParseSpec(name)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	out := map[string]Measure{}
	synctest.Test(t, func(t *testing.T) {
		cfg := sim.DefaultConfig()
		cfg.TimeScale = scale
		lab := Lab{
			Plans:    mainJobPlans,
			Policies: specs,
			Target: campaign.Target{
				Spec: client.Spec{PromptTokens: client.DefaultPromptTokens, MaxTokens: client.DefaultMaxTokens,
					Timeout: time.Duration(float64(client.DefaultTimeout) / scale)},
				Sim: cfg, InMemory: true,
			},
			Options:         campaign.Options{MaxInFlight: 256, MaxRequests: 10000, Wait: sleep.Until},
			Output:          filepath.Join(t.TempDir(), "results.csv"),
			ReferenceBudget: 30 * time.Second,
		}
		ms, err := Run(context.Background(), lab)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			out[m.Policy] = m
		}
	})
	return out
}

// TestTheDocumentsClaims checks, as relations on the simulator, what the
// design documents claim of client policies. A failure here is a finding
// about the model or the claim: report it, do not tune the model.
func TestTheDocumentsClaims(t *testing.T) {
	t.Parallel()
	m := runLab(t, 1)
	for _, name := range DefaultPolicies() {
		x := m[name]
		t.Logf("%-16s requests %4d ok %5.1f%% gave-up %4d redirected %4d att/req %5.2f 429s %5d p50 %7.0f p99 %7.0f max %7.0f over %3d early %4d sim-early %4d sdk %4d cluster10ms %3d",
			name, x.Requests, 100*x.SuccessShare(), x.GaveUp, x.Redirected, x.AttemptsPerRequest(), x.HTTP429,
			x.E2EPercentile(50), x.E2EPercentile(99), x.E2EPercentile(100), x.OverBudget, x.EarlyRetries, x.SimEarlyReturns, x.SimSDKRetries, x.MaxRetriesWithin(10))
	}
	honor, stacked := m["honor"], m["stacked"]
	if stacked.AttemptsPerRequest() < 2*honor.AttemptsPerRequest() {
		t.Errorf("stacked makes %.2f attempts per request, honor %.2f: want at least 2×", stacked.AttemptsPerRequest(), honor.AttemptsPerRequest())
	}
	if honor.SimEarlyReturns != 0 || honor.EarlyRetries != 0 {
		t.Errorf("honor came back early %d times (the simulator says %d)", honor.EarlyRetries, honor.SimEarlyReturns)
	}
	for _, name := range []string{"fixed:1s", "poll:250ms"} {
		if m[name].SimEarlyReturns == 0 {
			t.Errorf("%s never came back before its advised wait", name)
		}
	}
	// Finding: clearly more, but not by much. The simulator's short
	// advised waits (tens of ms after the first wave) leave a jitter of
	// ×[1, 1.2] only a few ms to spread retries over.
	if nj, j := m["honor-no-jitter"].MaxRetriesWithin(10), honor.MaxRetriesWithin(10); nj <= j {
		t.Errorf("honor-no-jitter's retries cluster at most %d in 10 ms, honor's %d: want more", nj, j)
	}
	budget := m["budget"]
	if p99, limit := budget.E2EPercentile(99), float64(30_000+oneRequestMS); p99 > limit {
		t.Errorf("budget's p99 end-to-end latency %.0f ms is over its budget plus one request's latency (%.0f ms)", p99, limit)
	}
	cooldown := m["cooldown"]
	if cooldown.HTTP429 >= budget.HTTP429 || cooldown.SuccessShare() < budget.SuccessShare() {
		t.Errorf("cooldown took %d 429s with %.1f%% success; budget %d with %.1f%%: want fewer 429s at no worse success",
			cooldown.HTTP429, 100*cooldown.SuccessShare(), budget.HTTP429, 100*budget.SuccessShare())
	}
	if m["sdk"].SimSDKRetries == 0 || m["stacked"].SimSDKRetries == 0 || honor.SimSDKRetries != 0 {
		t.Errorf("declared SDK retries: sdk %d, stacked %d, honor %d", m["sdk"].SimSDKRetries, m["stacked"].SimSDKRetries, honor.SimSDKRetries)
	}
}

// oneRequestMS bounds one request's own latency on the simulator's
// defaults: time to first token plus 100 output tokens.
const oneRequestMS = 200 + 100*8

// TestTimeScaleKeepsThePicture runs the lab at time scale 1 and 20: the
// simulator and every policy run twenty times faster, so the outputs, in
// model time, must tell the same story within noise.
func TestTimeScaleKeepsThePicture(t *testing.T) {
	t.Parallel()
	one, twenty := runLab(t, 1), runLab(t, 20)
	for _, name := range DefaultPolicies() {
		a, b := one[name], twenty[name]
		t.Logf("%-16s success %5.1f%% / %5.1f%%  att/req %5.2f / %5.2f  p99 %7.0f / %7.0f ms", name,
			100*a.SuccessShare(), 100*b.SuccessShare(), a.AttemptsPerRequest(), b.AttemptsPerRequest(), a.E2EPercentile(99), b.E2EPercentile(99))
		if d := 100 * (a.SuccessShare() - b.SuccessShare()); d > 5 || d < -5 {
			t.Errorf("%s: success %.1f%% at scale 1, %.1f%% at 20", name, 100*a.SuccessShare(), 100*b.SuccessShare())
		}
		if r := b.AttemptsPerRequest() / a.AttemptsPerRequest(); r > 1.1 || r < 0.9 {
			t.Errorf("%s: %.2f attempts per request at scale 1, %.2f at 20", name, a.AttemptsPerRequest(), b.AttemptsPerRequest())
		}
		// cooldown's tail is not one number at any one scale: over
		// repeated identical runs its p99 was about 1,400 or 2,300 ms and
		// its p95 1,070–1,280 ms or, now and then, 2,310 ms, depending on
		// which of two simultaneous completions the runtime schedules
		// first (its cooldown is shared by every request, so one ordering
		// sends a whole held cohort into another 429). Its median repeats
		// (657–673 ms), so the comparison reads that; every other
		// policy's p99 repeats.
		p := 99.0
		if name == "cooldown" {
			p = 50
		}
		if r := b.E2EPercentile(p) / a.E2EPercentile(p); a.E2EPercentile(p) > 100 && (r > 1.25 || r < 0.8) {
			t.Errorf("%s: p%v %.0f ms at scale 1, %.0f ms at 20", name, p, a.E2EPercentile(p), b.E2EPercentile(p))
		}
	}
}
