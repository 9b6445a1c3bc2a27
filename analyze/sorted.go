package analyze

import (
	"cmp"
	"iter"
	"maps"
	"math"
	"slices"

	"github.com/montanaflynn/stats"
)

// Sorted waits: what Analysis does with them, at the scale of millions.

// sortEach sorts the waits of each group in place, by their bits
// (sortFloats), the groups spread over the cores.
func sortEach(groups []*Group) {
	parallel(len(groups), func(i int) { sortFloats(groups[i].Waits) })
}

// mergeSorted returns the sorted waits of every run, which are each
// sorted, in one new slice of n (their total): runs are merged two by two,
// which costs a pass over the waits per doubling of the runs merged,
// where sorting them again would cost a pass per doubling of the waits.
func mergeSorted(runs [][]float64, n int) []float64 {
	for len(runs) > 2 {
		next := runs[:0:0]
		for i := 0; i+1 < len(runs); i += 2 {
			next = append(next, merge2(make([]float64, 0, len(runs[i])+len(runs[i+1])), runs[i], runs[i+1]))
		}
		if len(runs)%2 == 1 {
			next = append(next, runs[len(runs)-1])
		}
		runs = next
	}
	out := make([]float64, 0, n)
	switch len(runs) {
	case 1:
		return append(out, runs[0]...)
	case 2:
		return merge2(out, runs[0], runs[1])
	}
	return out
}

// merge2 appends the merge of sorted a and b to dst, a's first on a tie.
func merge2(dst, a, b []float64) []float64 {
	for len(a) > 0 && len(b) > 0 {
		if b[0] < a[0] {
			dst, b = append(dst, b[0]), b[1:]
		} else {
			dst, a = append(dst, a[0]), a[1:]
		}
	}
	return append(append(dst, a...), b...)
}

// percentileSorted is Percentile of sorted waits without a copy: the
// Hyndman–Fan type 7 percentile, linear interpolation between the closest
// ranks at (percent/100)(n−1), with the arithmetic of stats.Percentile step
// for step, so the two agree to the bit (TestPercentileSortedAgrees): the
// published numbers do not move by an ulp.
func percentileSorted(sorted []float64, percent float64) float64 {
	return percentileOf(listed(sorted), percent)
}

// percentileOf is percentileSorted over any sorted waits.
func percentileOf(sorted ranked, percent float64) float64 {
	n := sorted.len()
	switch {
	case n == 0 || math.IsNaN(percent) || percent <= 0 || percent > 100:
		return math.NaN()
	case n == 1:
		return sorted.at(0)
	}
	k, f := closestRank(percent, n)
	lo := sorted.at(k)
	if k+1 >= n || f == 0 {
		return lo
	}
	hi := sorted.at(k + 1)
	if hi == lo {
		return lo
	}
	delta := hi - lo
	if math.IsInf(delta, 1) { // no wait is that large, but stay exact
		return (1-f)*lo + f*hi
	}
	return lo + f*delta
}

// closestRank is where the percent-th percentile (0 < percent ≤ 100) of
// n > 1 values lies: between the k-th and the (k+1)-th smallest (from 0),
// f of the way.
func closestRank(percent float64, n int) (k int, f float64) {
	rank := (percent / 100) * float64(n-1)
	k = int(rank)
	return k, rank - float64(k)
}

// ranked are values of which a percentile reads the order statistics.
type ranked interface {
	len() int
	at(i int) float64 // the i-th smallest value
}

// sortedWaits are advised waits in ascending order, listed one by one or
// counted per value: what a Statistic is computed over.
type sortedWaits interface {
	ranked
	mean() float64 // as stats.Mean computes it over the listed waits
}

// selected are values with some of their order statistics found
// (orderStats): vals[i] is the known[i]-th smallest. Any other is
// selected from a copy; the values stay as they were counted.
type selected struct {
	v     []float64
	known []int // ascending
	vals  []float64
}

func (s selected) len() int { return len(s.v) }

func (s selected) at(k int) float64 {
	if i, ok := slices.BinarySearch(s.known, k); ok {
		return s.vals[i]
	}
	return selectKth(slices.Clone(s.v), k)
}

// selectPublished finds the order statistics that the percentiles of
// requestPercentiles read.
func (s *selected) selectPublished() {
	n := len(s.v)
	s.known = s.known[:0]
	for _, p := range requestPercentiles {
		if n == 1 {
			s.known = append(s.known, 0)
			break
		}
		k, f := closestRank(p.Percent, n)
		s.known = append(s.known, k)
		if k+1 < n && f != 0 {
			s.known = append(s.known, k+1)
		}
	}
	slices.Sort(s.known)
	s.known = slices.Compact(s.known)
	s.vals = orderStats(s.v, s.known)
}

// listed are sorted waits one by one.
type listed []float64

func (l listed) len() int         { return len(l) }
func (l listed) at(i int) float64 { return l[i] }
func (l listed) mean() float64    { m, _ := stats.Mean([]float64(l)); return m }

// waitRun is one distinct wait of counted waits and how far it reaches:
// the count of waits up to and including its own.
type waitRun struct {
	value float64
	end   int
}

// counted are sorted waits as runs of one value each, ascending.
type counted []waitRun

// countedFrom returns the runs of the waits counted per value in counts.
func countedFrom(counts map[float64]int) counted {
	c := make(counted, 0, len(counts))
	for _, w := range slices.Sorted(maps.Keys(counts)) {
		c = append(c, waitRun{value: w, end: c.len() + counts[w]})
	}
	return c
}

func (c counted) len() int {
	if len(c) == 0 {
		return 0
	}
	return c[len(c)-1].end
}

func (c counted) at(i int) float64 {
	k, _ := slices.BinarySearchFunc(c, i, func(r waitRun, i int) int { return cmp.Compare(r.end, i+1) })
	return c[k].value
}

// runs yields each distinct wait and how many times it was counted, in
// ascending order.
func (c counted) runs() iter.Seq2[float64, int] {
	return func(yield func(float64, int) bool) {
		from := 0
		for _, r := range c {
			if !yield(r.value, r.end-from) {
				return
			}
			from = r.end
		}
	}
}

// mean adds the waits one by one in ascending order, as stats.Mean adds
// them when they are listed (with its path for sums past the largest
// float: each scaled down by a power of two), so that the two agree to
// the last bit.
func (c counted) mean() float64 {
	n := c.len()
	if n == 0 {
		return math.NaN()
	}
	l := float64(n)
	e := 0
	if math.IsInf(c.sum(0), 0) {
		_, e = math.Frexp(l)
	}
	return math.Ldexp(c.sum(e)/l, e)
}

// sum adds the waits one by one in ascending order, each times 2^−e.
func (c counted) sum(e int) float64 {
	s := 0.0
	for v, n := range c.runs() {
		v = math.Ldexp(v, -e)
		for range n {
			s += v
		}
	}
	return s
}

// addTo adds each counted wait to counts.
func (c counted) addTo(counts map[float64]int) {
	for v, n := range c.runs() {
		counts[v] += n
	}
}

// list returns the counted waits one by one.
func (c counted) list() []float64 {
	out := make([]float64, 0, c.len())
	for v, n := range c.runs() {
		for range n {
			out = append(out, v)
		}
	}
	return out
}
