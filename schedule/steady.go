package schedule

import (
	"math"
	"math/rand/v2"
	"time"
)

// Steady spreads arrivals at one steady rate over a plan's length: how
// the policy lab offers each of its loads (a rate), where a Config's
// phases plan traffic. Its processes are a Config's:
//
//   - constant: ⌊rate × plan⌋ arrivals, evenly spaced from 0 (whole
//     requests: a plan's count does not depend on where it ends);
//   - poisson: seeded exponential gaps of mean 1/rate, summed in seconds
//     (the lab's stream since it had one: a seed's arrivals stay the
//     same);
//   - gamma: seeded gamma gaps of mean 1/rate and coefficient of
//     variation CV (shape 1/CV², scale CV²/rate), as vLLM's
//     `--burstiness`.
//
// Waves at a rate are burst's (burst.Config); a trace at a rate is
// RepeatAt.
type Steady struct {
	Arrival string // constant (default), poisson or gamma
	CV      float64
}

// steadySeq is the second word of a steady process's seeded generator.
const steadySeq = 0x5851f42d4c957f2d

// Offsets are the arrivals of a plan of length plan at rate (> 0),
// seeded.
func (s Steady) Offsets(rate float64, plan time.Duration, seed uint64) []time.Duration {
	switch s.Arrival {
	case ArrivalPoisson:
		r := rand.New(rand.NewPCG(seed, steadySeq))
		return gaps(rate, plan, func() float64 { return r.ExpFloat64() / rate })
	case ArrivalGamma:
		r := rand.New(rand.NewPCG(seed, steadySeq))
		g, scale := newGamma(r, 1/(s.CV*s.CV)), s.CV*s.CV/rate
		return gaps(rate, plan, func() float64 { return g.draw() * scale })
	}
	n := int(math.Floor(rate * plan.Seconds()))
	out := make([]time.Duration, 0, n)
	for i := range n {
		out = append(out, time.Duration(float64(i)/rate*float64(time.Second)))
	}
	return out
}

// Count is the number of arrivals of a plan: exact for constant,
// counted for the random processes.
func (s Steady) Count(rate float64, plan time.Duration, seed uint64) int {
	if s.Arrival == ArrivalConstant || s.Arrival == "" {
		return int(math.Floor(rate * plan.Seconds()))
	}
	return len(s.Offsets(rate, plan, seed))
}

// gaps sums gap() (in seconds) from 0 until plan: the arrivals after
// each gap, the first one gap in.
func gaps(rate float64, plan time.Duration, gap func() float64) []time.Duration {
	out := make([]time.Duration, 0, int(rate*plan.Seconds())+1)
	t := 0.0
	for {
		t += gap()
		if t >= plan.Seconds() {
			return out
		}
		out = append(out, time.Duration(t*float64(time.Second)))
	}
}

// RepeatAt is a trace's arrivals at rate: offsets (sorted, from 0) of a
// trace span long, on a clock scaled so that their mean rate is rate,
// repeated end to end (every span, scaled) until plan. The trace's shape
// is kept; one trace serves every rate.
func RepeatAt(offsets []time.Duration, span time.Duration, rate float64, plan time.Duration) []time.Duration {
	recorded := float64(len(offsets)) / span.Seconds()
	scale := recorded / rate
	scaled := time.Duration(float64(span) * scale)
	var out []time.Duration
	for base := time.Duration(0); base < plan && scaled > 0; base += scaled {
		for _, t := range offsets {
			at := base + time.Duration(float64(t)*scale)
			if at >= plan {
				return out
			}
			out = append(out, at)
		}
	}
	return out
}
