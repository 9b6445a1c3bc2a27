package analyze

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// Why Spearman's ρ and a Theil–Sen line. Advised waits are the
// short-median, long-tail kind: a few 429s after a rested deployment's
// burst allowance wait ten times longer than the rest. A least-squares
// line is pulled by those few wherever they fall; the median of pairwise
// slopes (Theil–Sen) lets up to 29% of the points lie anywhere, and like
// Spearman's ρ it reads order, not distance, so the two agree in kind:
// ρ says whether the waits rose with the measure, the line by how much per
// unit when they did so steadily enough (|ρ| ≥ LineFitsRho) for one number
// to say it.

// trendOf describes waits y against measures x (the same length):
// waitRanks returns the ranks of y (made once for the waits of a group
// when every one of its points has the measure); rx, at least as long, is
// room for the ranks of x, and is overwritten; rk ranks them. A measure
// whose range is at most spread × its largest value is taken as constant.
func trendOf(x, y []float64, spread float64, waitRanks func() []float64, rx []float64, rk *ranker) Trend {
	tr := Trend{N: len(x)}
	if len(x) == 0 {
		tr.Reason = TrendTooFew
		return tr
	}
	tr.Min, tr.Max = minMax(x)
	switch {
	case len(x) < MinTrend429s:
		tr.Reason = TrendTooFew
	case tr.Max-tr.Min <= spread*math.Abs(tr.Max):
		tr.Reason = TrendMeasureConstant
	case constant(y):
		tr.Reason = TrendWaitsConstant
	default:
		rx = rx[:len(x)]
		rk.ranks(x, rx)
		tr.Rho = spearman(rx, waitRanks())
		if math.Abs(tr.Rho) >= LineFitsRho {
			tr.Line = theilSen(x, y)
		}
	}
	return tr
}

// minMax returns the least and the greatest of v (not empty, no NaN).
func minMax(v []float64) (lo, hi float64) {
	lo, hi = v[0], v[0]
	for _, x := range v[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// constant reports whether every value of v is the same.
func constant(v []float64) bool {
	for _, x := range v[1:] {
		if x != v[0] {
			return false
		}
	}
	return true
}

// spearman is Spearman's ρ of two measures given their ranks (ranks: ties
// share the average of their ranks), Pearson's correlation of the ranks.
// Neither may be constant.
func spearman(rx, ry []float64) float64 {
	mean := float64(len(rx)+1) / 2
	var sxy, sxx, syy float64
	for i := range rx {
		a, b := rx[i]-mean, ry[i]-mean
		sxy += a * b
		sxx += a * a
		syy += b * b
	}
	return math.Max(-1, math.Min(1, sxy/math.Sqrt(sxx*syy)))
}

// theilSen fits y against x: the median slope over pairs with different
// x (every pair up to MaxSlopePairs, else a sample of that many drawn with
// a fixed seed, so the same points give the same line), and the median
// intercept under it. x must not be constant. It returns nil when no pair
// with different x is found (a sample of a measure that almost never
// varies).
func theilSen(x, y []float64) *Line {
	n := len(x)
	total := n * (n - 1) / 2
	var slopes []float64
	sampled := total > MaxSlopePairs
	if !sampled {
		slopes = make([]float64, 0, max(total, n)) // room for the intercepts after
		for i := range n {
			for j := i + 1; j < n; j++ {
				if dx := x[j] - x[i]; dx != 0 {
					slopes = append(slopes, (y[j]-y[i])/dx)
				}
			}
		}
	} else {
		slopes = make([]float64, 0, max(MaxSlopePairs, n))
		// Each point's measure and wait side by side: a pair drawn at
		// random then costs two misses of the cache, not four.
		xy := make([][2]float64, n)
		for i := range xy {
			xy[i] = [2]float64{x[i], y[i]}
		}
		rng := rand.New(rand.NewPCG(0x7e11, uint64(n)))
		for tries := 0; len(slopes) < MaxSlopePairs && tries < 20*MaxSlopePairs; tries++ {
			i, j := rng.IntN(n), rng.IntN(n-1)
			if j >= i {
				j++
			}
			a, b := &xy[i], &xy[j]
			if dx := b[0] - a[0]; dx != 0 {
				slopes = append(slopes, (b[1]-a[1])/dx)
			}
		}
	}
	if len(slopes) == 0 {
		return nil
	}
	line := &Line{Slope: median(slopes), Pairs: len(slopes), Sampled: sampled}
	rest := slopes[:0] // reused: the slopes are no longer needed
	for i := range n {
		rest = append(rest, y[i]-line.Slope*x[i])
	}
	line.Intercept = median(rest)
	return line
}

// median returns the median of v (the mean of the two middle values for
// an even count).
func median(v []float64) float64 {
	k := len(v) / 2
	if len(v)%2 == 1 {
		return orderStats(v, []int{k})[0]
	}
	mid := orderStats(v, []int{k - 1, k})
	return (mid[0] + mid[1]) / 2
}

// selectKth reorders v so that v[k] is the value a sort would put there,
// with none greater before it and none smaller after, and returns it.
func selectKth(v []float64, k int) float64 {
	selectRanks(v, []int{k})
	return v[k]
}

// selectRanks reorders v so that v[k] is the value a sort would put there
// for each k of ks (ascending, distinct, each an index of v), with none
// greater before it and none smaller after: quickselect with a three-way
// partition (many equal values are common) around a median of three,
// going on into each side that holds a k, which sorts what is left when
// it keeps choosing badly. Its order statistics are a sort's, exactly.
func selectRanks(v []float64, ks []int) {
	selectIn(v, 0, len(v)-1, ks, 2*bits.Len(uint(len(v)))+8)
}

// selectIn is selectRanks within v[lo:hi+1], which holds every k of ks,
// for at most budget more partitions.
func selectIn(v []float64, lo, hi int, ks []int, budget int) {
	for ; len(ks) > 0 && hi > lo; budget-- {
		if budget == 0 {
			slices.Sort(v[lo : hi+1])
			return
		}
		a, b, c := v[lo], v[lo+(hi-lo)/2], v[hi]
		pivot := max(min(a, b), min(max(a, b), c))
		lt, i, gt := lo, lo, hi
		for i <= gt {
			switch {
			case v[i] < pivot:
				v[lt], v[i] = v[i], v[lt]
				lt++
				i++
			case v[i] > pivot:
				v[i], v[gt] = v[gt], v[i]
				gt--
			default:
				i++
			}
		}
		// v[lt:gt+1] all equal pivot: the ks there are found.
		left, _ := slices.BinarySearch(ks, lt)
		right, _ := slices.BinarySearch(ks, gt+1)
		if left > 0 {
			selectIn(v, lo, lt-1, ks[:left], budget-1)
		}
		ks, lo = ks[right:], gt+1
	}
}
