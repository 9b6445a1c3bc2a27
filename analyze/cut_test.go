package analyze

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ptuprobe/ptuprobe/results"
)

// TestCut checks cut against the plain split, on blocks of one timeline
// (its single copy) and of several: the rows of each run in order, each
// run exactly its size, and none sharing the scratch it was cut from,
// which the caller reuses.
func TestCut(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(31, 7))
	for trial := range 200 {
		n := 1 + rng.IntN(5)
		size := 1 + rng.IntN(300)
		es, tls := make([]int, size), make([]int32, size)
		one := trial%2 == 0 // half the blocks hold one timeline only
		tl := int32(rng.IntN(n))
		for i := range es {
			if !one {
				tl = int32(rng.IntN(n))
			}
			es[i], tls[i] = rng.Int(), tl
		}
		want := make([][]int, n)
		for i, e := range es {
			want[tls[i]] = append(want[tls[i]], e)
		}
		runs := cut(es, tls, n)
		for i := range es {
			es[i] = -1 // the scratch, reused
		}
		if len(runs) != n {
			t.Fatalf("trial %d: %d runs, want %d", trial, len(runs), n)
		}
		for i, run := range runs {
			if !slices.Equal(run, want[i]) || cap(run) != len(want[i]) {
				t.Fatalf("trial %d: run %d = %v (cap %d), want %v", trial, i, run, cap(run), want[i])
			}
		}
	}
	if runs := cut([]int(nil), nil, 3); runs != nil {
		t.Errorf("cut of nothing = %v, want nil", runs)
	}
}

// TestRecentTimelinesFind checks that where find starts looking changes
// nothing of what it finds: rows that take turns by worker, rows of one
// worker, rows of a timeline it never noted, and rows of one it evicted.
func TestRecentTimelinesFind(t *testing.T) {
	t.Parallel()
	rec := func(worker, run string) *results.Record {
		r := results.Blank()
		r.Group, r.Shape, r.RunID, r.Worker = results.GroupScheduled, results.ShapeScheduled, run, worker
		return &r
	}
	var r recentTimelines
	tls := map[string]*loadTimeline{}
	for w := range 4 {
		worker := fmt.Sprintf("%d/4", w)
		tls[worker] = &loadTimeline{index: int32(w)}
		r.note(rec(worker, "r1"), tls[worker])
	}
	rng := rand.New(rand.NewPCG(31, 8))
	for i := range 1000 {
		w := i % 4 // in turn, then at random
		if i >= 500 {
			w = rng.IntN(4)
		}
		worker := fmt.Sprintf("%d/4", w)
		if got := r.find(rec(worker, "r1")); got != tls[worker] {
			t.Fatalf("row %d (worker %s): found %v, want %v", i, worker, got, tls[worker])
		}
		if got := r.find(rec(worker, "r2")); got != nil {
			t.Fatalf("row %d: a run never noted found %v", i, got)
		}
	}
	for k := range len(r.entries) - 1 { // fills the 4 free entries, then evicts workers 0/4 to 2/4
		r.note(rec("0/1", fmt.Sprint("other", k)), &loadTimeline{})
	}
	for w := range 4 {
		worker := fmt.Sprintf("%d/4", w)
		want := tls[worker]
		if w < 3 {
			want = nil
		}
		if got := r.find(rec(worker, "r1")); got != want {
			t.Errorf("after eviction, worker %s: found %v, want %v", worker, got, want)
		}
	}
}

// TestSortByAt checks the radix sort of a block's runs against the
// comparison sorts it replaces: arrivals in exactly the order of a
// stable sort by their intended times' sort keys (−0 before +0), placed
// 429s in byPlaced order, each the same elements; on short and long
// runs, with many ties, both zeros and times of every magnitude.
func TestSortByAt(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(31, 9))
	narrow := false // times whose keys differ in a few digits: an odd number of passes
	at := func() float64 {
		if narrow {
			return 4096 + 16*float64(rng.IntN(128)) // one digit of the keys differs
		}
		switch rng.IntN(6) {
		case 0:
			return float64(rng.IntN(20)) // ties
		case 1:
			return []float64{0, math.Copysign(0, -1)}[rng.IntN(2)]
		case 2:
			return rng.Float64() * 1e12
		}
		return float64(rng.IntN(3_600_000_000)) / 1000 // microseconds over an hour
	}
	var sc loadScratch
	passes := map[int]bool{} // parities of the radix sorts' passes
	for k, n := range []int{0, 1, 7, radixFrom - 1, radixFrom, radixFrom + 1, 5000, 20000, radixFrom, 5000} {
		narrow = k >= 8
		as := make([]arrival, n)
		ps := make([]placed, n)
		for i := range n {
			as[i] = arrival{at: at(), budget: int32(i)}
			ps[i] = placed{at: as[i].at, waitMS: float64(rng.IntN(4)), utilPct: float64(rng.IntN(3)), group: int32(rng.IntN(3))}
		}
		if n >= radixFrom {
			or, and := uint64(0), ^uint64(0)
			for _, a := range as {
				or, and = or|sortKey(a.at), and&sortKey(a.at)
			}
			passes[len(planRadix(or^and).passes)%2] = true
		}
		want := slices.Clone(as)
		slices.SortStableFunc(want, func(a, b arrival) int { return cmp.Compare(sortKey(a.at), sortKey(b.at)) })
		sortByAt(as, func(a *arrival) float64 { return a.at }, &sc.tmpArrivals, &sc)
		if !slices.Equal(as, want) {
			t.Fatalf("%d arrivals: not in the stable order of their times", n)
		}
		wantP := slices.Clone(ps)
		sortByAt(ps, func(p *placed) float64 { return p.at }, &sc.tmpPlaced, &sc)
		sortTies(ps)
		if !slices.IsSortedFunc(ps, byPlaced) {
			t.Fatalf("%d placed: not in byPlaced order", n)
		}
		byAll := func(a, b placed) int { return cmp.Or(byPlaced(a, b), cmp.Compare(a.group, b.group)) }
		slices.SortFunc(wantP, byAll)
		got := slices.Clone(ps)
		slices.SortFunc(got, byAll)
		if !slices.Equal(got, wantP) {
			t.Fatalf("%d placed: not the same 429s", n)
		}
	}
	if !passes[0] || !passes[1] {
		t.Errorf("the radix sorts took only an even or only an odd number of passes: %v", passes)
	}
}
