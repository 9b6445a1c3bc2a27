package analyze

import (
	"math"
	"math/bits"
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

// sortKey is v as an unsigned integer in v's order (v not NaN): every
// bit flipped for a negative number, the sign bit alone for any other.
func sortKey(v float64) uint64 {
	b := math.Float64bits(v)
	return b ^ (uint64(int64(b)>>63) | 1<<63)
}

// zeroKeys reports whether a and b are the keys of −0 and +0, or of +0
// and −0: equal numbers of different bits.
func zeroKeys(a, b uint64) bool {
	const minus, plus = ^uint64(1 << 63), uint64(1 << 63) // sortKey(−0), sortKey(+0)
	return (a == minus && b == plus) || (a == plus && b == minus)
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

// sortByKeys sorts es by keys (keys[i] is es[i]'s sortKey), stably, in
// place, with tmpE and tmpK (as long as es) as the other side of each
// pass: a radix sort of the keys that carries each element with its key.
func sortByKeys[E any](es []E, keys []uint64, tmpE []E, tmpK []uint64) {
	or, and := uint64(0), ^uint64(0)
	for _, k := range keys {
		or, and = or|k, and&k
	}
	plan := planRadix(or ^ and)
	for _, k := range keys {
		plan.count(k)
	}
	fromE, fromK, toE, toK := es, keys, tmpE, tmpK
	for i, shift := range plan.passes {
		c := &plan.counts[i]
		offsets(c)
		for j, k := range fromK {
			d := k >> shift & (radixBuckets - 1)
			toE[c[d]], toK[c[d]] = fromE[j], k
			c[d]++
		}
		fromE, fromK, toE, toK = toE, toK, fromE, fromK
	}
	if len(plan.passes)%2 == 1 { // the sorted elements are in tmpE
		copy(es, fromE)
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
		// Equal values are one run: equal keys, read in order (not the
		// values, from all over v), −0 and +0 included, whose keys differ.
		j, k := i+1, from[i].key
		for j < n && (from[j].key == k || zeroKeys(from[j].key, k)) {
			j++
		}
		rank := float64(i+1+j) / 2 // the mean of ranks i+1 … j
		for _, e := range from[i:j] {
			r[e.at] = rank
		}
		i = j
	}
}

// orderStats returns the ks-th smallest values of v (ks ascending,
// distinct, each an index of v), exactly, without reordering v: a radix
// select. One pass finds the bits in which the values' keys differ, one
// counts them by the radixBits below the highest of those bits (buckets
// in the values' order), and one gathers the values of the few buckets
// that hold a wanted rank, among which selectRanks finds them. A NaN, or
// a short v, is left to selectRanks on a copy.
func orderStats(v []float64, ks []int) []float64 {
	out := make([]float64, len(ks))
	or, and, nan := uint64(0), ^uint64(0), false
	for _, x := range v {
		k := sortKey(x)
		or, and, nan = or|k, and&k, nan || x != x
	}
	if len(v) < radixFrom || nan {
		c := slices.Clone(v)
		selectRanks(c, ks)
		for i, k := range ks {
			out[i] = c[k]
		}
		return out
	}
	varying := or ^ and
	if varying == 0 { // every value the same
		for i := range out {
			out[i] = v[0]
		}
		return out
	}
	shift := max(0, 64-bits.LeadingZeros64(varying)-radixBits)
	digit := func(x float64) uint64 { return sortKey(x) >> shift & (radixBuckets - 1) }
	var counts [radixBuckets]int
	for _, x := range v {
		counts[digit(x)]++
	}
	// The bucket of each wanted rank, and the rank within it.
	type bucket struct {
		values []float64
		ranks  []int // within the bucket, ascending
		out    []int // where each goes in out
	}
	var buckets []*bucket
	var of [radixBuckets]*bucket
	start, i := 0, 0
	for d, n := range counts {
		for ; i < len(ks) && ks[i] < start+n; i++ {
			if of[d] == nil {
				of[d] = &bucket{values: make([]float64, 0, n)}
				buckets = append(buckets, of[d])
			}
			of[d].ranks = append(of[d].ranks, ks[i]-start)
			of[d].out = append(of[d].out, i)
		}
		start += n
	}
	for _, x := range v {
		if b := of[digit(x)]; b != nil {
			b.values = append(b.values, x)
		}
	}
	for _, b := range buckets {
		selectRanks(b.values, b.ranks)
		for j, r := range b.ranks {
			out[b.out[j]] = b.values[r]
		}
	}
	return out
}
