// Package charplan is the one source of the main job's default plans: the
// burst and the scheduled plan that `ptuprobe characterize` sends when
// told nothing else, and that the simulator's long-tail test plays, and
// the rest before the refill probe that follows them and the probe's
// spacing and parts of a request (campaign.RefillProbe sends it, fit's
// --suggest-plan replays it). It imports only the shape packages, so the
// simulator's own tests can use it.
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
	// admitted 30 or fewer (ProbeUnits, ProbeSends), so
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

// ProbeSpacing is the time between the refill probe's sends of the
// job's whole request: 40 a second, faster than the deployments the main
// job overruns drain (the served targets of bench/twin-unseen.sh drain 5
// to 15 of its requests a second), so the probe fills the bucket in a
// second or less and the rest of the allowance's refill hardly moves
// meanwhile. Its sends of a u-th of the request (campaign.RefillProbe) go
// ProbeSpacing ÷ u apart: the same tokens a second.
const ProbeSpacing = 25 * time.Millisecond

// ProbeUnits is the most parts the refill probe cuts the job's request
// into: each of its sends carries the job's prompt and max_tokens ÷ u
// (at least 1 each; u: ProbeUnitsFor). Over 100% a deployment admits a
// request only if its unspent allowance covers the request's whole
// cost, so the probe's sends over 100% count what came back in the rest
// in parts of a request: the simulator's defaults (175%, 5 minutes)
// give back some 0.7 of a request in the rest, none in whole requests
// (main's served run: 826.6 s in 102.6 s – 1 h, a miss) and two or three
// in quarters. Sends within fit's instant (20 ms) are taken as one
// instant, admitted first, which is the order they were decided in: none
// is admitted over 100% after the first refusal.
const ProbeUnits = 4

// ProbeFactor bounds the refill probe: at most this many times the burst
// plan's wave size of the job's requests (u sends each: campaign.RefillProbe),
// more than a wave meets (a rested deployment admits at most its bucket
// and its whole allowance, which the first wave met).
const ProbeFactor = 2

// ProbeSends is about the most sends the probe's units aim at: it cuts
// the job's request into ProbeSends ÷ (what the burst plan's first wave
// admitted) units, at most ProbeUnits and at least 1 (ProbeUnitsFor). A
// rested deployment's first wave admits its bucket and its allowance,
// which the probe's sends fill again, so the probe sends some units ×
// that: on served target c (400 PTU, a 3 s bucket; its first wave of 40
// admitted whole, the bucket holding more) quarters took 244 sends, and
// its fit took 15.2 s of CPU against 8.7 without the probe's rows (load
// 9), where e's (26 admitted) took 56.
const ProbeSends = 120

// ProbeUnitsFor is the probe's units after a first burst wave of size
// that admitted first: ProbeSends ÷ first, within 1–ProbeUnits
// (ProbeUnits when none was admitted); 1 when the wave was admitted whole
// (the bucket may hold far more than it) or is not known (first < 0).
func ProbeUnitsFor(first, size int) int {
	switch {
	case first < 0 || first >= size:
		return 1
	case first == 0:
		return ProbeUnits
	}
	return min(max(ProbeSends/first, 1), ProbeUnits)
}
