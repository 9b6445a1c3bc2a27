package analyze

import (
	"math"
	"runtime"
	"slices"
	"sync"
)

// Sorted waits: what Analysis does with them, at the scale of millions.

// sortEach sorts the waits of each group in place, the groups spread over
// the cores: sorting is most of an Analysis of millions of waits.
func sortEach(groups []*Group) {
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, g := range groups {
		wg.Go(func() {
			sem <- struct{}{}
			slices.Sort(g.Waits)
			<-sem
		})
	}
	wg.Wait()
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
	n := len(sorted)
	switch {
	case n == 0 || math.IsNaN(percent) || percent <= 0 || percent > 100:
		return math.NaN()
	case n == 1:
		return sorted[0]
	}
	rank := (percent / 100) * float64(n-1)
	k := int(rank)
	f := rank - float64(k)
	if k+1 >= n || f == 0 || sorted[k+1] == sorted[k] {
		return sorted[k]
	}
	delta := sorted[k+1] - sorted[k]
	if math.IsInf(delta, 1) { // no wait is that large, but stay exact
		return (1-f)*sorted[k] + f*sorted[k+1]
	}
	return sorted[k] + f*delta
}
