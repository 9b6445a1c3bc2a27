package sim

import (
	"math"
	"time"
)

// bucket is the PTU deployment's utilization: a leaky bucket of weighted
// tokens that drains continuously, plus a burst allowance that lets a
// rested deployment run over 100% for a moment. See the package doc for
// the model and why the allowance is spent and earned back rather than
// being a fixed higher threshold.
type bucket struct {
	capacity float64 // tokens that make 100% utilization
	drain    float64 // tokens per second of model time
	level    float64 // tokens in the bucket at last

	allowance float64 // burst allowance in tokens (burst-pct of capacity)
	spent     float64 // allowance in use; leaks away at refill tokens/s
	refill    float64

	last time.Time

	tenant *neighbour // nil without a Neighbour

	// The drain a refusal's wait is forecast at (see Cold): the drain
	// itself, or coldDrain while the deployment has completed nothing
	// for coldAfter. coldDrain 0 is off.
	coldDrain float64
	coldAfter time.Duration
	lastDone  time.Time // model time of the last completion; zero: none yet
}

func newBucket(cfg Config) bucket {
	b := bucket{
		capacity:  cfg.CapacityTokens(),
		drain:     cfg.DrainTokensPerSecond(),
		allowance: cfg.CapacityTokens() * cfg.BurstPct / 100,
	}
	if cfg.BurstRefill > 0 {
		b.refill = b.allowance / cfg.BurstRefill.Seconds()
	}
	if c := cfg.Cold(); c.On() {
		b.coldDrain = b.drain * c.DrainPct / 100
		b.coldAfter = c.After
	}
	return b
}

// advance drains the bucket and the spent allowance up to now, adding
// the neighbour's batches at their times on the way. A clock that moves
// backwards (a test script) counts as no time passing.
func (b *bucket) advance(now time.Time) {
	if b.last.IsZero() {
		b.last = now
	}
	for at, ok := b.tenant.due(now); ok; at, ok = b.tenant.due(now) {
		b.drainTo(at)
		b.level += b.tenant.batch() * b.drain
	}
	b.drainTo(now)
}

// drainTo drains the bucket and the spent allowance from last to now.
func (b *bucket) drainTo(now time.Time) {
	dt := now.Sub(b.last).Seconds()
	if dt <= 0 {
		return
	}
	b.last = now
	b.level = math.Max(0, b.level-b.drain*dt)
	b.spent = math.Max(0, b.spent-b.refill*dt)
}

// verdict is the bucket's answer to one arrival.
type verdict struct {
	admitted bool
	viaBurst bool          // admitted over 100% on the burst allowance
	wait     time.Duration // refused: model time until utilization < 100%
}

// admit applies the documented admission rule at now: at or under 100%
// the request is admitted whatever its cost (so utilization can overshoot
// by one request); over 100% it is admitted only if the unspent burst
// allowance covers its whole cost; otherwise it is refused with the time
// the bucket needs to drain back under 100%.
func (b *bucket) admit(now time.Time, cost float64) verdict {
	b.advance(now)
	if b.level <= b.capacity {
		b.level += cost
		return verdict{admitted: true}
	}
	if b.spent+cost <= b.allowance {
		b.level += cost
		b.spent += cost
		return verdict{admitted: true, viaBurst: true}
	}
	// The burst is over: what is left of the allowance is forfeited, so
	// it comes back only through the slow refill, not by a crumb that
	// happens to fit the next request.
	b.spent = max(b.spent, b.allowance)
	return verdict{wait: b.waitBelowFull(now)}
}

// waitBelowFull is the model time until the level drains to 100% at the
// drain the deployment forecasts at now, rounded up to the nanosecond so
// it is never zero while over.
func (b *bucket) waitBelowFull(now time.Time) time.Duration {
	over := b.level - b.capacity
	if over <= 0 {
		return 0
	}
	return time.Duration(math.Ceil(over / b.forecast(now) * 1e9))
}

// forecast is the drain the deployment advises at, at now: its drain,
// unless it is cold — it has completed no request in the last coldAfter,
// or none yet — and then coldDrain (Cold).
func (b *bucket) forecast(now time.Time) float64 {
	if b.coldDrain == 0 || !b.lastDone.IsZero() && now.Sub(b.lastDone) < b.coldAfter {
		return b.drain
	}
	return b.coldDrain
}

// correct replaces an admitted request's estimate by its actual cost when
// the response completes (delta = actual - estimate, usually negative).
// The burst allowance is not refunded: it was spent on the estimate. A
// completion is also what the forecast learns from (Cold).
func (b *bucket) correct(now time.Time, delta float64) {
	b.advance(now)
	b.level = math.Max(0, b.level+delta)
	if now.After(b.lastDone) {
		b.lastDone = now
	}
}

// utilization is the level as a percentage of capacity at now.
func (b *bucket) utilization(now time.Time) float64 {
	b.advance(now)
	return 100 * b.level / b.capacity
}

// allowanceLeft is the unspent burst allowance as a percentage of it.
func (b *bucket) allowanceLeft(now time.Time) float64 {
	b.advance(now)
	if b.allowance == 0 {
		return 0
	}
	return 100 * math.Max(0, b.allowance-b.spent) / b.allowance
}
