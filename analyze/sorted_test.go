package analyze

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/montanaflynn/stats"
)

// TestPercentileSortedAgrees: the published percentiles are stats'
// to the bit, for every statistic and sizes small and large, with ties.
func TestPercentileSortedAgrees(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	percents := []float64{0.001, 1, 33.3, 99.99, 100}
	for _, s := range Statistics {
		if s.Percent > 0 {
			percents = append(percents, s.Percent)
		}
	}
	for _, n := range []int{1, 2, 3, 5, 7, 10, 99, 100, 101, 1000, 4321, 100_000} {
		waits := make([]float64, n)
		for i := range waits {
			switch rng.IntN(3) {
			case 0:
				waits[i] = float64(rng.IntN(50)) // ties
			case 1:
				waits[i] = rng.Float64() * 20000
			default:
				waits[i] = math.Round(rng.ExpFloat64()*1e6) / 8
			}
		}
		slices.Sort(waits)
		for _, p := range percents {
			want, _ := stats.Percentile(waits, p)
			if got := percentileSorted(waits, p); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("n=%d p%v: %v, stats.Percentile %v", n, p, got, want)
			}
			if got := Percentile(waits, p); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("Percentile n=%d p%v: %v, stats.Percentile %v", n, p, got, want)
			}
		}
	}
	for _, p := range []float64{0, -1, 101, math.NaN()} {
		if got := percentileSorted([]float64{1, 2}, p); !math.IsNaN(got) {
			t.Errorf("p%v = %v, want NaN", p, got)
		}
	}
	if got := percentileSorted(nil, 50); !math.IsNaN(got) {
		t.Errorf("no waits: %v, want NaN", got)
	}
	// Percentile still takes waits that are not sorted, or hold a NaN.
	if got := Percentile([]float64{3, 1, 2}, 50); got != 2 {
		t.Errorf("Percentile of unsorted waits = %v, want 2", got)
	}
	if got := Percentile([]float64{math.NaN(), 1, 2}, 50); !math.IsNaN(got) {
		t.Errorf("Percentile with a NaN = %v, want NaN", got)
	}
}

// TestMergeSorted: merging sorted runs gives them sorted together.
func TestMergeSorted(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	for k := range 12 {
		var runs [][]float64
		var all []float64
		for range k {
			run := make([]float64, rng.IntN(300))
			for i := range run {
				run[i] = float64(rng.IntN(100))
			}
			slices.Sort(run)
			runs = append(runs, run)
			all = append(all, run...)
		}
		slices.Sort(all)
		got := mergeSorted(slices.Clone(runs), len(all))
		if !slices.Equal(got, all) || cap(got) != len(all) {
			t.Fatalf("%d runs: merged %v (cap %d), want %v", k, got, cap(got), all)
		}
	}
}
