package analyze

import (
	"math"
	"slices"
)

// Sorting and ranking numbers by their bits, for the scale of millions.
//
// A float64 maps to a uint64 whose unsigned order is the float's order
// (sortKey): the sign bit set for a positive number, every bit flipped
// for a negative one. Sorting the keys by a least-significant-digit radix
// sort — stable, six passes of 11 bits, and no pass for a digit that
// every key shares (whole milliseconds leave the low digits of every key
// zero) — costs a few linear passes where a comparison sort costs
// log₂ n of them. Its order is slices.Sort's: a sorted list of numbers
// is one list, whatever sorts it (−0 and +0, equal to a comparison, come
// out −0 first; slices.Sort leaves them in any order). No NaN: no wait,
// latency or load is one.

const (
	radixBits    = 11
	radixBuckets = 1 << radixBits
	radixPasses  = (64 + radixBits - 1) / radixBits
	// radixFrom is the length from which a radix sort is worth its
	// counting: below it slices.Sort is as quick.
	radixFrom = 1 << 10
)

// sortKey is v as an unsigned integer in v's order (v not NaN).
func sortKey(v float64) uint64 {
	b := math.Float64bits(v)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// fromSortKey is the number whose sortKey is k.
func fromSortKey(k uint64) float64 {
	if k>>63 != 0 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

// radixPlan is the passes of a radix sort of some keys: one per digit
// in which they differ (a digit that every key shares leaves the order as
// it is), and how many keys have each value of it.
type radixPlan struct {
	passes []uint
	counts [][radixBuckets]int
}

// planRadix plans the sort of keys in which the bits of varying (the OR
// of the keys XOR their AND) differ.
func planRadix(varying uint64) *radixPlan {
	r := &radixPlan{}
	for p := range uint(radixPasses) {
		if varying>>(p*radixBits)&(radixBuckets-1) != 0 {
			r.passes = append(r.passes, p*radixBits)
		}
	}
	r.counts = make([][radixBuckets]int, len(r.passes))
	return r
}

func (r *radixPlan) count(k uint64) {
	for i, shift := range r.passes {
		r.counts[i][k>>shift&(radixBuckets-1)]++
	}
}

// offsets turns the counts of one pass into where each digit's keys
// start.
func offsets(c *[radixBuckets]int) {
	at := 0
	for d, n := range c {
		c[d], at = at, at+n
	}
}

// sortFloats sorts v ascending (no NaN) in place.
func sortFloats(v []float64) {
	if len(v) < radixFrom {
		slices.Sort(v)
		return
	}
	keys := make([]uint64, len(v))
	or, and := uint64(0), ^uint64(0)
	for i, x := range v {
		k := sortKey(x)
		keys[i], or, and = k, or|k, and&k
	}
	plan := planRadix(or ^ and)
	for _, k := range keys {
		plan.count(k)
	}
	from, to := keys, make([]uint64, len(keys))
	for i, shift := range plan.passes {
		c := &plan.counts[i]
		offsets(c)
		for _, k := range from {
			d := k >> shift & (radixBuckets - 1)
			to[c[d]] = k
			c[d]++
		}
		from, to = to, from
	}
	for i, k := range from {
		v[i] = fromSortKey(k)
	}
}

// keyed is a value's key and its index, as ranks sorts them.
type keyed struct {
	key uint64
	at  int32
}

// ranks writes the rank of each value of v into r (as long as v): its
// position in v sorted, counted from 1, ties given the average of the
// positions they span. It sorts (key, index) pairs by the keys, stably;
// v must be shorter than 2³¹.
func ranks(v, r []float64) { new(ranker).ranks(v, r) }

// ranker ranks one set of values after another in the same room: a
// group's measures, each as many as its 429s.
type ranker struct{ from, to []keyed }

func (rk *ranker) ranks(v, r []float64) {
	n := len(v)
	if n == 0 {
		return
	}
	if cap(rk.from) < n {
		rk.from, rk.to = make([]keyed, n), make([]keyed, n)
	}
	from, to := rk.from[:n], rk.to[:n]
	or, and := uint64(0), ^uint64(0)
	for i, x := range v {
		k := sortKey(x)
		from[i], or, and = keyed{k, int32(i)}, or|k, and&k
	}
	plan := planRadix(or ^ and)
	for _, e := range from {
		plan.count(e.key)
	}
	for i, shift := range plan.passes {
		c := &plan.counts[i]
		offsets(c)
		for _, e := range from {
			d := e.key >> shift & (radixBuckets - 1)
			to[c[d]] = e
			c[d]++
		}
		from, to = to, from
	}
	for i := 0; i < n; {
		// Equal values are one run, −0 and +0 included: their keys differ.
		j, x := i+1, v[from[i].at]
		for j < n && v[from[j].at] == x {
			j++
		}
		rank := float64(i+1+j) / 2 // the mean of ranks i+1 … j
		for _, e := range from[i:j] {
			r[e.at] = rank
		}
		i = j
	}
}
