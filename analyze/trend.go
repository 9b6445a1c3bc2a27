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
// waitRanking returns the ranking of y (one made before for the same
// waits, or from a sorted copy); scratch, at least as long, is room for a
// sorted copy of x, and is overwritten. A measure whose range is at most
// spread × its largest value is taken as constant.
func trendOf(x, y []float64, spread float64, waitRanking func() ranking, scratch []float64) Trend {
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
		// x's ranking first: waitRanking may use scratch too.
		rx := rankingOf(sortInto(scratch, x))
		tr.Rho = spearman(x, y, rx, waitRanking())
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

// sortInto copies v into the start of dst (at least as long) sorted,
// and returns that part.
func sortInto(dst, v []float64) []float64 {
	s := dst[:len(v)]
	copy(s, v)
	slices.Sort(s)
	return s
}

// ranking is the rank of each distinct value of a set, ties given the
// average of the ranks they span: values ascending, avg[i] the rank of
// values[i]. Loads and advised waits repeat (whole ms, whole seconds, a
// count per window), so it is small, and finding a value's rank by
// binary search in it stays in cache.
type ranking struct{ values, avg []float64 }

// rankingOf ranks the values of sorted.
func rankingOf(sorted []float64) ranking {
	var r ranking
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j] == sorted[i] {
			j++
		}
		r.values = append(r.values, sorted[i])
		r.avg = append(r.avg, float64(i+1+j)/2) // the mean of ranks i+1 … j
		i = j
	}
	return r
}

// of returns the rank of x, one of the ranked values.
func (r ranking) of(x float64) float64 {
	lo, hi := 0, len(r.values)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if r.values[m] < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return r.avg[lo]
}

// spearman is Spearman's ρ of x and y: Pearson's correlation of their
// ranks (rx and ry rank the values of x and of y), ties sharing the
// average of their ranks. Neither may be constant. A value's rank is
// looked up once for a run of equal values (the load before consecutive
// 429s often is).
func spearman(x, y []float64, rx, ry ranking) float64 {
	mean := float64(len(x)+1) / 2
	var sxy, sxx, syy float64
	lastX, lastY, a, b := math.NaN(), math.NaN(), 0.0, 0.0
	for i := range x {
		if x[i] != lastX {
			lastX, a = x[i], rx.of(x[i])-mean
		}
		if y[i] != lastY {
			lastY, b = y[i], ry.of(y[i])-mean
		}
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
		slopes = make([]float64, 0, total)
		for i := range n {
			for j := i + 1; j < n; j++ {
				if dx := x[j] - x[i]; dx != 0 {
					slopes = append(slopes, (y[j]-y[i])/dx)
				}
			}
		}
	} else {
		slopes = make([]float64, 0, MaxSlopePairs)
		rng := rand.New(rand.NewPCG(0x7e11, uint64(n)))
		for tries := 0; len(slopes) < MaxSlopePairs && tries < 20*MaxSlopePairs; tries++ {
			i, j := rng.IntN(n), rng.IntN(n-1)
			if j >= i {
				j++
			}
			if dx := x[j] - x[i]; dx != 0 {
				slopes = append(slopes, (y[j]-y[i])/dx)
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
// an even count), reordering v.
func median(v []float64) float64 {
	k := len(v) / 2
	upper := selectKth(v, k)
	if len(v)%2 == 1 {
		return upper
	}
	// selectKth left every value before k at most v[k].
	return (slices.Max(v[:k]) + upper) / 2
}

// selectKth reorders v so that v[k] is the value a sort would put there,
// with none greater before it and none smaller after, and returns it:
// quickselect with a three-way partition (many equal slopes are common)
// around a median of three, which sorts what is left when it keeps
// choosing badly.
func selectKth(v []float64, k int) float64 {
	lo, hi := 0, len(v)-1
	for budget := 2*bits.Len(uint(len(v))) + 8; hi > lo; budget-- {
		if budget == 0 {
			slices.Sort(v[lo : hi+1])
			break
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
		switch {
		case k < lt:
			hi = lt - 1
		case k > gt:
			lo = gt + 1
		default:
			return v[k]
		}
	}
	return v[k]
}
