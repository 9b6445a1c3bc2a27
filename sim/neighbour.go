package sim

import (
	"math/rand/v2"
	"time"
)

// Neighbour is another tenant of the PTU deployment: from First after the
// simulator starts, and every Every after that (model time), it submits
// a batch that the deployment takes whatever its utilization — work of
// Min to Max of drain (uniform, seeded by Config.Seed), added to the
// bucket at once. Every caller refused until the batch has drained is
// told to wait for what is left of it, so the deployment's waits are
// bimodal, as a shared deployment's are: one call's overshoot most of the
// time, seconds after a neighbour's batch. Off while Every is 0.
type Neighbour struct {
	First, Every time.Duration
	Min, Max     time.Duration
}

// Neighbour is the neighbour c's fields describe.
func (c Config) Neighbour() Neighbour {
	return Neighbour{First: c.NeighbourFirst, Every: c.NeighbourEvery, Min: c.NeighbourMin, Max: c.NeighbourMax}
}

// SetNeighbour sets c's neighbour fields to n.
func (c *Config) SetNeighbour(n Neighbour) {
	c.NeighbourFirst, c.NeighbourEvery, c.NeighbourMin, c.NeighbourMax = n.First, n.Every, n.Min, n.Max
}

// On reports whether the neighbour submits anything.
func (n Neighbour) On() bool { return n.Every > 0 }

// check reports the neighbour's problems under Config's field names.
func (n Neighbour) check(bad func(field, format string, a ...any)) {
	switch {
	case n.Every < 0:
		bad("NeighbourEvery", "%v: must not be negative (0: no neighbour)", n.Every)
	case !n.On():
	case n.First < 0:
		bad("NeighbourFirst", "%v: must not be negative", n.First)
	case n.Min <= 0:
		bad("NeighbourMin", "%v: want > 0", n.Min)
	case n.Max < n.Min:
		bad("NeighbourMax", "%v: want at least {NeighbourMin} (%v)", n.Max, n.Min)
	case n.Max > time.Hour:
		bad("NeighbourMax", "%v: want at most 1h", n.Max)
	}
}

// neighbour is the Neighbour's schedule as the bucket follows it.
type neighbour struct {
	Neighbour
	next    time.Time // model time of the next batch
	rng     *rand.Rand
	batches uint64
}

// newNeighbour schedules n's first batch First after start; nil when n
// is off. Its draws have their own stream, so turning it on changes no
// completion length.
func newNeighbour(n Neighbour, seed int64, start time.Time) *neighbour {
	if !n.On() {
		return nil
	}
	s := uint64(seed) ^ 0x6e65696768626f72
	return &neighbour{Neighbour: n, next: start.Add(n.First), rng: rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))}
}

// due reports the time of the next batch when it is at or before now.
func (n *neighbour) due(now time.Time) (time.Time, bool) {
	if n == nil || n.next.After(now) {
		return time.Time{}, false
	}
	return n.next, true
}

// batch draws the batch that is due and schedules the next: its work in
// seconds of drain.
func (n *neighbour) batch() float64 {
	d := n.Min + time.Duration(n.rng.Int64N(int64(n.Max-n.Min)+1))
	n.next = n.next.Add(n.Every)
	n.batches++
	return d.Seconds()
}
