package policylab

import (
	"math"
	"slices"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/policy"
)

// outcome is one policy at one load as a test states it: what the runner
// would have measured, in the units a reader thinks in.
type outcome struct {
	policy string
	// share is the measure (% of offered requests answered within the
	// SLO) and load the attempts per offered request, each the mean over
	// the repeats; each repeat k moves both by the repeat's own swing
	// (swing[k] × spread), as the arrivals of repeat k move every policy
	// alike.
	share, spread, load float64
	p50, p99            float64 // ms of the successes
	local               float64 // share of requests given up locally, %
	redirected          float64 // share of requests, %
	overBudget          int
}

// traitsOf are the traits of the built-in named name, or of a policy
// under the fair caps that adds nothing to honouring the header.
func traitsOf(name string) policy.Traits {
	if s, err := policy.Parse(name); err == nil {
		return s.Fair(30*time.Second, 20).Traits()
	}
	return policy.Traits{Owners: 1, Attempts: 20, Jitter: 0.2, Extras: true}
}

// swing is each repeat's arrivals' effect on every policy's measure.
var swing = []float64{-1, 0.5, 1, -0.5, 0}

// fixtureCapacity is the simulator's default deployment, requests/s.
const fixtureCapacity = 5.4

// models are the policies that model a named client, as the runner
// would label them.
var models = map[string]string{
	"none":          "one attempt, a refusal is the answer",
	"sdk":           "the OpenAI SDKs, 2 retries",
	"stacked":       "an application's 3 retries around sdk",
	"sdk-one-owner": "the OpenAI SDKs alone, with stacked's attempts",
}

// fixtureRow builds the Row a runner would write for o at load x (a
// multiple of fixtureCapacity) with clients clients over five repeats of a
// 40 s window; its measure goes through Row.setMeasures, as the runner's.
func fixtureRow(load string, x float64, clients int, o outcome) Row {
	const seconds = 40.0
	repeats := len(swing)
	rate := x * fixtureCapacity
	offered := int(math.Round(rate * seconds))
	requests := offered * repeats
	succeeded := int(math.Round(float64(requests) * o.share / 100))
	r := Row{
		Policy: o.policy, Name: o.policy, Traits: traitsOf(o.policy), Models: models[o.policy], Load: load, LoadX: x, RatePerS: rate, Clients: clients,
		MaxAttempts: 20, Budget: 30 * time.Second, Repeats: repeats, OwnCaps: models[o.policy] != "",
		Fallback: o.redirected > 0,
		Requests: requests, Succeeded: succeeded,
		Redirected: int(math.Round(float64(requests) * o.redirected / 100)),
		Attempts:   int(math.Round(float64(requests) * o.load)),
		OverBudget: o.overBudget,
		SuccessPct: o.share, SuccessPctMin: o.share - o.spread, SuccessPctMax: o.share + o.spread,
		GoodputPerS:        float64(succeeded) / float64(repeats) / seconds,
		AttemptsPerSuccess: -1, HTTP429PerSuccess: -1, E2EP50MS: -1, E2EP99MS: -1, E2EMaxMS: -1,
	}
	r.GoodputMin, r.GoodputMax = r.GoodputPerS*(1-o.spread/100), r.GoodputPerS*(1+o.spread/100)
	r.HTTP429 = max(0, r.Attempts-succeeded)
	r.GaveUp = requests - succeeded - o.overBudget
	r.CapacitySharePct = 100 * r.GoodputPerS / fixtureCapacity
	switch o.policy {
	case "none":
		r.MaxAttempts, r.Budget = 1, 0
	case "sdk":
		r.MaxAttempts, r.Budget = 3, 0
	case "stacked", "sdk-one-owner":
		r.MaxAttempts, r.Budget = 12, 0
	}
	var lat []float64
	if succeeded > 0 {
		r.AttemptsPerSuccess = float64(r.Attempts) / float64(succeeded)
		r.HTTP429PerSuccess = float64(r.HTTP429) / float64(succeeded)
		r.E2EP50MS, r.E2EP99MS, r.E2EMaxMS = o.p50, o.p99, o.p99*1.3
		lat = fixtureLatencies(o.p50, o.p99)
	}
	ms := make([]repeatMeasure, repeats)
	for k, s := range swing {
		share := math.Max(0, math.Min(100, o.share+s*o.spread))
		in := int(math.Round(float64(offered) * share / 100))
		ms[k] = repeatMeasure{Offered: offered, InSLO: in, Succeeded: in, OfferedFirst: offered / 2, InSLOFirst: in / 2,
			Attempts: int(math.Round(float64(offered) * o.load * (1 + s*o.spread/100))), Reach: 3,
			GaveUpLocal: int(math.Round(float64(offered) * o.local / 100)), SuccessP50MS: -1, SuccessP99MS: -1,
			Redirected: int(math.Round(float64(offered) * o.redirected / 100))}
		ms[k].HTTP429 = max(0, ms[k].Attempts-in)
		if in > 0 {
			ms[k].SuccessP50MS, ms[k].SuccessP99MS = o.p50, o.p99
		}
	}
	r.setMeasures(ms, lat)
	return r
}

// fixtureLatencies are 100 latencies whose type 7 p50 and p99 are near
// p50 and p99: geometric from 40% of p50 to p50, then to p99, then a
// little past it.
func fixtureLatencies(p50, p99 float64) []float64 {
	var out []float64
	for i := range 50 {
		out = append(out, math.Round(0.4*p50*math.Pow(2.5, float64(i)/49)))
	}
	for i := range 49 {
		out = append(out, math.Round(p50*math.Pow(p99/p50, float64(i+1)/49)))
	}
	out = append(out, math.Round(p99*1.3))
	slices.Sort(out)
	return out
}

// fixtureLoads are three loads of the default sweep, shaped as the lab
// finds them: under capacity every retrying policy answers nearly all;
// past it no policy passes the ceiling (capacity ÷ offered), the header
// honoured without a cap costs load, and queueing policies answer late.
var fixtureLoads = []struct {
	load     string
	x        float64
	outcomes []outcome
}{
	{"0.8x", 0.8, []outcome{
		{"none", 96.6, 1.5, 1, 700, 1000, 0, 0, 0},
		{"honor", 99.5, 0.4, 1.8, 760, 2800, 0, 0, 0},
		{"honor-no-jitter", 99.3, 0.5, 1.8, 760, 2900, 0, 0, 0},
		{"backoff", 99.7, 0.2, 1.25, 770, 5300, 0, 0, 0},
		{"sdk", 97.8, 1.2, 1.15, 740, 1130, 0, 0, 0},
		{"stacked", 99.7, 0.3, 1.46, 770, 3270, 0, 0, 0},
		{"sdk-one-owner", 98.9, 1, 1.55, 760, 2190, 0, 0, 0},
		{"redirect", 100, 0, 1.03, 740, 1000, 0, 3, 0},
		{"budget", 99.5, 0.4, 1.8, 760, 2800, 0, 0.2, 0},
		{"pace", 97.7, 2, 1.03, 810, 13800, 0, 0, 0},
		{"sre-throttle", 99.5, 0.4, 1.6, 760, 2800, 0.1, 0, 0},
	}},
	{"1.5x", 1.5, []outcome{
		{"none", 67.1, 1.8, 1, 730, 1000, 0, 0, 0},
		{"honor", 67.6, 1.9, 11.3, 1340, 3960, 0, 0, 0},
		{"honor-no-jitter", 67.5, 1.8, 11.0, 1210, 3990, 0, 0, 0},
		{"backoff", 47.6, 3.4, 6.8, 2890, 28900, 0, 0, 0},
		{"sdk", 67.3, 2, 2.2, 810, 1250, 0, 0, 0},
		{"stacked", 67.7, 1.8, 7.35, 1990, 4950, 0, 0, 0},
		{"sdk-one-owner", 67.2, 1.9, 6.95, 960, 2650, 0, 0, 0},
		{"redirect", 72.7, 2.4, 2.67, 790, 28500, 0, 35, 8},
		{"budget", 67.6, 1.9, 11.3, 1340, 3960, 0, 8, 0},
		{"pace", 33.4, 4.2, 0.8, 10500, 29000, 31, 0, 0},
		{"sre-throttle", 67.2, 1.9, 1.9, 900, 2400, 18, 0, 0},
	}},
	{"3x", 3, []outcome{
		{"none", 32.9, 0.8, 1, 730, 1000, 0, 0, 0},
		{"honor", 32.9, 0.7, 15.6, 1000, 3970, 0, 0, 0},
		{"honor-no-jitter", 33.0, 0.9, 15.4, 980, 3890, 0, 0, 0},
		{"backoff", 19.3, 0.9, 9.4, 6270, 29400, 0, 0, 0},
		{"sdk", 32.8, 0.9, 2.7, 830, 1260, 0, 0, 0},
		{"budget", 32.9, 0.7, 15.6, 1000, 3970, 0, 9.8, 0},
		{"pace", 11.4, 1.1, 0.35, 13700, 29300, 70, 0, 0},
		{"sre-throttle", 33.0, 0.8, 1.4, 850, 2300, 55, 0, 0},
	}},
}

// fixtureSweep is a default lab on the simulator as the runner would
// return it: rows in the order policies × loads (16 clients).
func fixtureSweep() Sweep {
	s := Sweep{
		Capacity:        fixtureCapacity,
		CapacityFormula: "the leaky bucket's drain rate ÷ the mean tokens of the plan's requests (60,000 tokens/min ÷ 11,111 tokens)",
		Limiter:         "ptu",
		Duration:        40 * time.Second,
		Seed:            1,
		Deterministic:   true,
		Arrival:         Arrival{Kind: arrivalPoisson}.Describe(),
		SLO:             DefaultSLO, Warmup: 30 * time.Second, Tail: 30 * time.Second, Plan: 100 * time.Second,
		MaxAttempts: 20,
	}
	var order []string
	for _, l := range fixtureLoads {
		for _, o := range l.outcomes {
			if !slices.Contains(order, o.policy) {
				order = append(order, o.policy)
			}
		}
	}
	for _, p := range order {
		for _, l := range fixtureLoads {
			for _, o := range l.outcomes {
				if o.policy == p {
					s.Rows = append(s.Rows, fixtureRow(l.load, l.x, 16, o))
				}
			}
		}
	}
	return s
}
