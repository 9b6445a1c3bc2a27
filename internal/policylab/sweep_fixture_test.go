package policylab

import (
	"math"
	"slices"
	"time"
)

// outcome is one policy at one load as a test states it: what the runner
// would have measured, in the units a reader thinks in.
type outcome struct {
	policy     string
	successPct float64 // mean over the repeats
	spreadPct  float64 // ± around it, in pp of success
	attPerSucc float64
	r429       float64 // 429s per success
	p50, p99   float64 // ms of the successes
	redirected float64 // share of requests, %
	overBudget int
}

// fixtureCapacity is the simulator's default deployment, requests/s.
const fixtureCapacity = 5.4

// models are the policies that model a named client, as the runner
// would label them.
var models = map[string]string{
	"none":    "one attempt, a refusal is the answer",
	"sdk":     "the OpenAI SDKs, 2 retries",
	"stacked": "an application's 3 retries around sdk",
}

// fixtureRow builds the Row a runner would write for o at load x (a
// multiple of fixtureCapacity) with 16 clients over 3 repeats of 40 s.
func fixtureRow(load string, x float64, clients int, o outcome) Row {
	const repeats, seconds = 3, 40.0
	rate := x * fixtureCapacity
	requests := int(math.Round(rate*seconds)) * repeats
	succeeded := int(math.Round(float64(requests) * o.successPct / 100))
	good := func(pct float64) float64 { return float64(requests) * pct / 100 / repeats / seconds }
	r := Row{
		Policy: o.policy, Models: models[o.policy], Load: load, LoadX: x, RatePerS: rate, Clients: clients,
		MaxAttempts: 20, Budget: 30 * time.Second, Repeats: repeats,
		Requests: requests, Succeeded: succeeded,
		Redirected: int(math.Round(float64(requests) * o.redirected / 100)),
		Attempts:   int(math.Round(float64(succeeded) * o.attPerSucc)),
		HTTP429:    int(math.Round(float64(succeeded) * o.r429)),
		OverBudget: o.overBudget,
		SuccessPct: o.successPct, SuccessPctMin: o.successPct - o.spreadPct, SuccessPctMax: o.successPct + o.spreadPct,
		GoodputPerS: float64(succeeded) / repeats / seconds,
		GoodputMin:  good(o.successPct - o.spreadPct), GoodputMax: good(o.successPct + o.spreadPct),
		AttemptsPerSuccess: -1, HTTP429PerSuccess: -1, E2EP50MS: -1, E2EP99MS: -1, E2EMaxMS: -1,
	}
	r.GaveUp = requests - succeeded - o.overBudget
	r.CapacitySharePct = 100 * r.GoodputPerS / fixtureCapacity
	switch o.policy {
	case "none":
		r.MaxAttempts, r.Budget = 1, 0
	case "sdk":
		r.MaxAttempts, r.Budget = 3, 0
	case "stacked":
		r.MaxAttempts, r.Budget = 12, 0
	}
	if succeeded > 0 {
		r.AttemptsPerSuccess = float64(r.Attempts) / float64(succeeded)
		r.HTTP429PerSuccess = float64(r.HTTP429) / float64(succeeded)
		r.E2EP50MS, r.E2EP99MS, r.E2EMaxMS = o.p50, o.p99, o.p99*1.3
		// Forty latencies from 40% of p50 to the max, geometric: the
		// ECDF's curve.
		lo, hi := 0.4*o.p50, r.E2EMaxMS
		for i := range 40 {
			r.SuccessE2E = append(r.SuccessE2E, math.Round(lo*math.Pow(hi/lo, float64(i)/39)))
		}
	}
	return r
}

// fixtureLoads are three loads of the default sweep, measured as issue 19
// describes the lab: under capacity every policy keeps up; past it,
// honoring alone herds, pacing and offsets do not, polling buys success
// with attempts, and the fallback lifts redirect past the capacity.
var fixtureLoads = []struct {
	load     string
	x        float64
	outcomes []outcome
}{
	{"0.8x", 0.8, []outcome{
		{"none", 81.2, 1.5, 1, 0, 120, 310, 0, 0},
		{"honor", 99.6, 0.3, 1.31, 0.31, 130, 2400, 0, 0},
		{"honor-no-jitter", 99.4, 0.4, 1.42, 0.42, 130, 2600, 0, 0},
		{"backoff", 99.8, 0.2, 1.29, 0.29, 140, 3900, 0, 0},
		{"sdk", 97.9, 0.8, 1.36, 0.38, 130, 2100, 0, 0},
		{"stacked", 99.9, 0.1, 1.44, 0.44, 130, 4100, 0, 0},
		{"poll:250ms", 100, 0, 2.1, 1.1, 140, 1500, 0, 0},
		{"redirect", 100, 0, 1.19, 0.19, 120, 330, 18.8, 0},
		{"budget", 99.7, 0.3, 1.3, 0.3, 130, 2400, 0.2, 0},
		{"pace", 100, 0, 1.02, 0.02, 180, 1900, 0, 0},
		{"honor-backoff", 99.9, 0.1, 1.2, 0.2, 140, 2500, 0, 0},
	}},
	{"1.5x", 1.5, []outcome{
		{"none", 45.1, 2.1, 1, 0, 120, 310, 0, 0},
		{"honor", 51.1, 3.0, 6.72, 5.72, 600, 2300, 0, 0},
		{"honor-no-jitter", 47.8, 2.6, 7.9, 6.9, 500, 2100, 0, 0},
		{"backoff", 62.4, 1.2, 4.0, 3.0, 2200, 14000, 0, 0},
		{"sdk", 49.2, 1.8, 2.1, 1.1, 700, 9000, 0, 0},
		{"stacked", 57.3, 2.2, 6.4, 5.4, 3400, 21000, 0, 3},
		{"poll:250ms", 63.9, 0.9, 20.3, 19.3, 4100, 28000, 0, 0},
		{"redirect", 71.2, 1.1, 1.44, 0.44, 140, 900, 40.1, 0},
		{"budget", 66.0, 1.4, 3.1, 2.1, 2600, 18000, 11.3, 0},
		{"pace", 65.1, 0.8, 1.06, 0.06, 5200, 24000, 0, 0},
		{"honor-backoff", 64.2, 1.1, 1.9, 0.9, 3100, 22000, 0, 0},
	}},
	{"3x", 3, []outcome{
		{"none", 22.4, 1.3, 1, 0, 120, 300, 0, 0},
		{"honor", 24.1, 2.4, 9.5, 8.5, 700, 2600, 0, 0},
		{"honor-no-jitter", 24.3, 2.5, 9.4, 8.4, 700, 2500, 0, 0},
		{"backoff", 28.7, 1.0, 5.1, 4.1, 3000, 19000, 0, 0},
		{"sdk", 23.9, 1.2, 2.6, 1.6, 800, 9500, 0, 0},
		{"poll:250ms", 31.2, 0.7, 38.1, 37.1, 9000, 29500, 0, 0},
		{"budget", 33.8, 0.9, 3.4, 2.4, 4800, 24000, 9.8, 0},
		{"pace", 32.9, 0.6, 1.08, 0.08, 9800, 28900, 0, 0},
		{"honor-backoff", 31.0, 0.8, 2.2, 1.2, 5100, 26000, 0, 0},
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
