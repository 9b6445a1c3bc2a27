package policylab

import "slices"

// Work is the most simulated attempts the lab may send the embedded
// simulator, its estimate of its work made before anything runs: every
// run's expected arrivals (rate × the plan: warm-up, window and tail),
// each at its policy's attempts cap (times its application's attempts,
// for stacked), the fair policies' runs under the SDKs' cap and a
// coordinated lab's twins included. A policy that keeps retrying past capacity comes close
// to it; below capacity, or a policy that gives up early, sends fewer. A
// simulated attempt costs about 20 µs of one core, whatever the fleet
// size (docs/policies.md, "How much work, and an interrupted lab").
func (l *Lab) Work() int64 {
	capacity, _ := l.Sim.Capacity(l.PromptTokens, l.MaxTokens, slices.Min(l.Clients))
	arrivals := 0.0
	for _, ld := range l.Loads {
		arrivals += float64(int64(ld.rate(capacity) * l.plan().Seconds()))
	}
	perArrival := int64(0)
	for _, s := range l.Policies {
		own := s.OwnCaps()
		s = s.Fair(l.Budget, l.MaxAttempts)
		n := int64(max(s.Attempts, 1)) * int64(max(s.AppAttempts, 1))
		if l.Coordinate != nil && s.Shares() {
			n *= 2 // run alone and coordinated
		}
		if l.capped() && !own {
			n += sdkMaxAttempts // and under the SDKs' cap
		}
		perArrival += n
	}
	return int64(arrivals) * perArrival * int64(len(l.Clients)) * int64(max(l.Repeat, 1))
}

// DefaultMaxWork is the lab's default cap on Work: 45 times the default
// sweep's (every built-in at 0.8x, 1.5x and 3x, 16 clients, 5 repeats of
// 30 s + 40 s + 30 s, under 20 attempts and the SDKs' 3: 7,082,955
// attempts at most with the 25 built-ins; the 20 of round 4, 6,391,935,
// sent some 2.5 M in about 20 s of CPU); Lab.MaxWork raises it
// deliberately.
const DefaultMaxWork = 320_000_000
