package analyze

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// radixSample draws n numbers of the kinds analyze sorts and ranks: whole
// ms that repeat, ms to the microsecond, long tails, zeros of both signs
// and, with negative, numbers below zero.
func radixSample(rng *rand.Rand, n int, negative bool) []float64 {
	v := make([]float64, n)
	for i := range v {
		switch rng.IntN(6) {
		case 0:
			v[i] = float64(rng.IntN(40)) // ties
		case 1:
			v[i] = math.Round(rng.Float64()*9e6) / 1000
		case 2:
			v[i] = rng.ExpFloat64() * 1e9
		case 3:
			v[i] = math.Copysign(0, -1)
		case 4:
			v[i] = math.SmallestNonzeroFloat64 * float64(rng.IntN(3))
		default:
			v[i] = rng.Float64() * 100
		}
		if negative && rng.IntN(4) == 0 {
			v[i] = -v[i]
		}
	}
	return v
}

// referenceRanks ranks v by sorting a copy and searching it: the average
// of the 1-based positions each value's ties span.
func referenceRanks(v []float64) []float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	r := make([]float64, len(v))
	for i, x := range v {
		lo := sort.Search(len(s), func(k int) bool { return s[k] >= x })
		hi := sort.Search(len(s), func(k int) bool { return s[k] > x })
		r[i] = float64(lo+1+hi) / 2
	}
	return r
}

// TestRadixAgreesWithSorting: sortFloats gives slices.Sort's order,
// ranks the ranks of a sorted copy and orderStats its values, to the bit,
// on both sides of radixFrom, with ties, both zeros and negative numbers.
func TestRadixAgreesWithSorting(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(31, 7))
	for _, n := range []int{1, 2, 3, 17, radixFrom - 1, radixFrom, radixFrom + 1, 5000, 70_000} {
		for _, negative := range []bool{false, true} {
			v := radixSample(rng, n, negative)
			checkRadix(t, v)
		}
	}
	// Every key digit in use, and none but the top one.
	wide := make([]float64, 3000)
	for i := range wide {
		wide[i] = math.Float64frombits(rng.Uint64()&^(0x7ff<<52) | 0x3ff<<52) // in [1, 2)
	}
	checkRadix(t, wide)
	checkRadix(t, slices.Repeat([]float64{7}, 2000))
}

func checkRadix(t *testing.T, v []float64) {
	t.Helper()
	want := slices.Clone(v)
	slices.Sort(want)
	got := slices.Clone(v)
	sortFloats(got)
	for i := range got {
		// −0 == +0: a sort may order them either way, and a comparison
		// cannot tell; every other value is the same bits.
		if got[i] != want[i] || (got[i] != 0 && math.Float64bits(got[i]) != math.Float64bits(want[i])) {
			t.Fatalf("n %d: sorted[%d] = %v, slices.Sort %v", len(v), i, got[i], want[i])
		}
		if i > 0 && got[i] < got[i-1] {
			t.Fatalf("n %d: not sorted at %d", len(v), i)
		}
	}
	// Order statistics, a few and every one, of v left as it was.
	for _, ks := range [][]int{{0}, {len(v) / 2}, {0, len(v) / 3, len(v) / 2, len(v) - 1}, seq(len(v))} {
		ks = slices.Compact(ks)
		before := slices.Clone(v)
		got := orderStats(v, ks)
		if !slices.EqualFunc(v, before, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) {
			t.Fatalf("n %d: orderStats reordered its values", len(v))
		}
		for i, k := range ks {
			if got[i] != want[k] || (got[i] != 0 && math.Float64bits(got[i]) != math.Float64bits(want[k])) {
				t.Fatalf("n %d: order statistic %d = %v, sorted %v", len(v), k, got[i], want[k])
			}
		}
	}
	r := make([]float64, len(v))
	ranks(v, r)
	if ref := referenceRanks(v); !slices.Equal(r, ref) {
		for i := range r {
			if r[i] != ref[i] {
				t.Fatalf("n %d: rank of v[%d] = %v is %v, want %v", len(v), i, v[i], r[i], ref[i])
			}
		}
	}
}

// seq is 0 … n−1.
func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// FuzzRadix holds sortFloats, ranks and orderStats to sorting, over any
// numbers but NaN.
func FuzzRadix(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0x80}, uint16(3))
	f.Fuzz(func(t *testing.T, b []byte, repeat uint16) {
		var v []float64
		for len(b) >= 8 {
			x := math.Float64frombits(uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
				uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56)
			b = b[8:]
			if !math.IsNaN(x) {
				v = append(v, x)
			}
		}
		if len(v) == 0 {
			return
		}
		// Long enough for the radix sort: the fuzzer's values, repeated.
		for orig := len(v); len(v) < radixFrom+int(repeat%512); {
			v = append(v, v[len(v)%orig])
		}
		checkRadix(t, v)
	})
}

// TestSelectedAgreesWithSorting: the percentiles of latencies found by
// selection (selectPublished) are those of the sorted latencies, to the
// bit, for the published percents and any other, with ties; and
// selectRanks leaves every k it was given where a sort puts it.
func TestSelectedAgreesWithSorting(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	percents := []float64{0.001, 1, 25, 33.3, 99.9, 99.99}
	for _, p := range requestPercentiles {
		percents = append(percents, p.Percent)
	}
	for _, n := range []int{1, 2, 3, 4, 5, 10, 99, 100, 101, 1000, 4321, 100_000} {
		v := radixSample(rng, n, false)
		sorted := slices.Clone(v)
		slices.Sort(sorted)
		s := selected{v: slices.Clone(v)}
		s.selectPublished()
		for _, p := range percents {
			want := percentileSorted(sorted, p)
			if got := percentileOf(s, p); math.Float64bits(got) != math.Float64bits(want) && (got != 0 || want != 0) {
				t.Fatalf("n %d p%v: %v by selection, %v sorted", n, p, got, want)
			}
		}
		if !slices.Equal(slicesSorted(s.v), sorted) {
			t.Fatalf("n %d: selection lost or changed values", n)
		}
	}
}

func slicesSorted(v []float64) []float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s
}

// FuzzSelectRanks holds selectRanks to sorting: every k given holds the
// value a sort puts there, none greater before it, none smaller after.
func FuzzSelectRanks(f *testing.F) {
	f.Add([]byte{3, 1, 2, 2, 9, 0, 7, 7, 7, 1}, []byte{0, 4, 9})
	f.Fuzz(func(t *testing.T, values, at []byte) {
		if len(values) == 0 {
			return
		}
		v := make([]float64, len(values))
		for i, b := range values {
			v[i] = float64(b % 37) // many ties
		}
		var ks []int
		for _, b := range at {
			ks = append(ks, int(b)%len(v))
		}
		slices.Sort(ks)
		ks = slices.Compact(ks)
		sorted := slicesSorted(v)
		selectRanks(v, ks)
		for _, k := range ks {
			if v[k] != sorted[k] || slices.Max(v[:k+1]) != v[k] || slices.Min(v[k:]) != v[k] {
				t.Fatalf("k %d: %v, want %v, partitioned (%v)", k, v[k], sorted[k], v)
			}
		}
	})
}
