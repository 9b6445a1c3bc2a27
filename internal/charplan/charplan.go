// Package charplan is the one source of the main job's default plans: the
// burst and the scheduled plan that `ptuprobe characterize` sends when
// told nothing else, and that the simulator's long-tail test plays, and
// the rest before the refill probe that follows them
// (campaign.RefillProbe). It
// imports only the shape packages, so the simulator's own tests can use it.
package charplan

import (
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/schedule"
)

// On the embedded simulator's ptu profile these plans give each group well
// over 50 429s with a usable wait in about 23 s: four waves of 40 overrun
// the bucket and its burst allowance (the first wave's refusals make the
// long tail; refused in part, it keeps the waves from growing to first
// contact, campaign.FirstContact); the schedule warms up under the sustainable rate (about 5.9
// requests/s of the default request), then ramps to four times it. On the
// documents profile, characterize's default, the waves give about 120 and
// the ramp about 15. The simulator's package doc explains the arithmetic.
// characterize raises the ramp's top from the waves' admissions
// (campaign.RampSizing) on a deployment whose waves admit more than
// 24 ÷ 2.5 requests a second.
const (
	BurstSize  = 40
	BurstWaves = 4
	BurstGap   = 2 * time.Second
	// Cap is the default bound on the time the main job spends sending.
	Cap = 10 * time.Minute
	// RefillRest is the rest before the main job's refill probe: after
	// the scheduled plan, requests until the first refusal
	// (campaign.RefillProbe). A PTU deployment earns its burst allowance
	// back at allowance ÷ refill a second after a refusal forfeits it, so
	// the probe's first send refused over 100% tells how much came back
	// in the rest: none puts the refill at least RefillRest × allowance ÷
	// a send's cost, and the fit's range then runs from there to its
	// bound of an hour; k sends back put it within (k+1) ÷ k. The probe's
	// sends are quarters of the job's request where the first burst wave
	// admitted 30 or fewer (campaign.ProbeUnits, ProbeSends), so
	// the simulator's defaults (175%, a 5-minute refill), which regain
	// some 0.7 of a whole request in 20 s (their run's range at the truth
	// 196 s – 1 h in whole requests), regain two or three of them: 256–384
	// s; bench/twin-unseen.sh's target e (300 PTU, the same refill)
	// 280–349 s. A longer rest pins more and makes every main job longer:
	// 20 s (and the probe's second or two) is what the CI's runs of the
	// main job can spend (docs/fit.md).
	RefillRest = 20 * time.Second
)

// Burst returns the default burst plan.
func Burst() burst.Config {
	return burst.Config{Size: BurstSize, Waves: BurstWaves, Gap: BurstGap}
}

// Phases returns the default scheduled phases: 3 s at 3/s, then a 12 s
// linear ramp from 3/s to 24/s.
func Phases() []schedule.Phase {
	return []schedule.Phase{
		{Name: "warmup", Duration: 3 * time.Second, From: 3, To: 3},
		{Name: "ramp", Duration: 12 * time.Second, From: 3, To: 24},
	}
}

// PhaseSpecs returns Phases in the form `--phase` takes, for help text.
func PhaseSpecs() []string {
	return []string{"warmup:3s@3/s", "ramp:12s@3/s-24/s"}
}
