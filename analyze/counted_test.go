package analyze

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/results"
)

// withoutWaits is a copy of a with every group's waits dropped, listed or
// counted: what must agree between a Tally with CountedWaits and one
// without.
func withoutWaits(a *Analysis) Analysis {
	c := *a
	strip := func(g Group) Group {
		g.Waits, g.counted = nil, nil
		return g
	}
	c.Overall = strip(c.Overall)
	c.Groups = make([]Group, len(a.Groups))
	for i, g := range a.Groups {
		c.Groups[i] = strip(g)
	}
	return c
}

// sameStats fails unless got and want hold the same statistics, bit for
// bit, and the same counts.
func sameStats(t *testing.T, got, want *Analysis) {
	t.Helper()
	pairs := [][2]*Group{{&got.Overall, &want.Overall}}
	if len(got.Groups) != len(want.Groups) {
		t.Fatalf("%d groups, want %d", len(got.Groups), len(want.Groups))
	}
	for i := range want.Groups {
		pairs = append(pairs, [2]*Group{&got.Groups[i], &want.Groups[i]})
	}
	for _, p := range pairs {
		g, w := p[0], p[1]
		if g.Count() != w.Count() {
			t.Fatalf("%s: count %d, want %d", w.Label, g.Count(), w.Count())
		}
		for _, p := range []float64{37.5, 50, 99} { // whatever the minimum group size
			if gp, wp := g.Percentile(p), w.Percentile(p); math.Float64bits(gp) != math.Float64bits(wp) {
				t.Fatalf("%s: Percentile(%v) = %v, want %v", w.Label, p, gp, wp)
			}
		}
		if len(g.Stats) != len(w.Stats) {
			t.Fatalf("%s: stats %v, want %v", w.Label, g.Stats, w.Stats)
		}
		for name, v := range w.Stats {
			if math.Float64bits(g.Stats[name]) != math.Float64bits(v) {
				t.Fatalf("%s %s: %v, want %v (bits %x, want %x)", w.Label, name, g.Stats[name], v, math.Float64bits(g.Stats[name]), math.Float64bits(v))
			}
		}
	}
	if g, w := withoutWaits(got), withoutWaits(want); !reflect.DeepEqual(g, w) {
		t.Fatalf("analyses differ beyond their waits:\n got %s\nwant %s", describe(&g), describe(&w))
	}
}

// TestCountedWaitsAgree: a Tally that counts its waits per value gives the
// Analysis of one that lists them, statistics to the last bit, whether
// records are observed one by one or read from files in blocks, and when
// a group has more distinct waits than it counts (read from a file in
// blocks only under -long: .ci/run).
func TestCountedWaitsAgree(t *testing.T) {
	t.Parallel()
	few := func(rng *rand.Rand, i int) results.Record { // long runs of equal waits
		r := attempt([]string{"a", "b", "c"}[rng.IntN(3)], results.ShapeBurst, 429, float64(rng.IntN(37))*1.5, results.WaitRetryAfterMS)
		if i%11 == 0 {
			r.WaitMS = 1e12 // the cap: still usable
		}
		return r
	}
	many := func(rng *rand.Rand, i int) results.Record { // one group past MaxCountedWaits
		group, w := "steady", float64(rng.IntN(40))
		if i%2 == 0 {
			group, w = "spread", float64(i)/4
		}
		return attempt(group, results.ShapeScheduled, 429, w, results.WaitRetryAfterMS)
	}
	cases := []struct {
		name string
		rows int
		rec  func(*rand.Rand, int) results.Record
	}{
		{"every path of addRecord", 30_000, variedRecord},
		{"few distinct waits", 20_000, few},
		{"a group past the count", 2*MaxCountedWaits + 1000, many},
		{"one wait", 1, few},
		{"no rows", 0, few},
	}
	for _, c := range cases {
		if testkit.Race && c.rows > MaxCountedWaits {
			continue // counting past the cap runs no goroutine the others do not
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(c.rows), 3))
			listedT, countedT := NewTally(false), NewTally(false, CountedWaits())
			var file strings.Builder
			w, err := results.NewWriter(&file)
			if err != nil {
				t.Fatal(err)
			}
			toFile := c.rows <= MaxCountedWaits || *long
			for i := range c.rows {
				r := c.rec(rng, i)
				listedT.Observe(&r)
				countedT.Observe(&r)
				if !toFile {
					continue
				}
				if err := w.Write(&r); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			labels := Labels{"team-a": "Team A", "team,b": "team b", `t"q`: "tq"}
			for _, minGroup := range []int{1, 5} {
				want, err := listedT.Analysis(labels, minGroup)
				if err != nil {
					t.Fatal(err)
				}
				got, err := countedT.Analysis(labels, minGroup)
				if err != nil {
					t.Fatal(err)
				}
				sameStats(t, got, want)
			}
			// The same rows read from a file, in blocks on every core.
			read := func(opts ...TallyOption) *Analysis {
				tl := NewTally(false, opts...)
				if err := tl.Read(context.Background(), strings.NewReader(file.String()), Input{Name: "r.csv", Ordinal: 1}, ForeignColumns{}); err != nil {
					t.Fatal(err)
				}
				a, err := tl.Analysis(labels, 3)
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			if c.rows > MaxCountedWaits && !*long {
				return // past the count, read in blocks: -long's (.ci/run); in memory above
			}
			sameStats(t, read(CountedWaits()), read())
		})
	}
}

// TestCountedWaitsStayCounted: a group of few distinct waits keeps no
// list of them, however many it counts; past MaxCountedWaits distinct
// values it lists them.
func TestCountedWaitsStayCounted(t *testing.T) {
	t.Parallel()
	tl := NewTally(false, CountedWaits())
	for i := range 100_000 {
		r := attempt("g", results.ShapeBurst, 429, float64(i%250), results.WaitRetryAfterMS)
		tl.Observe(&r)
	}
	g := tl.groups["g"]
	if g.listedCount() != 0 || len(g.counts) != 250 {
		t.Fatalf("listed %d waits and counted %d values, want 0 and 250", g.listedCount(), len(g.counts))
	}
	a, err := tl.Analysis(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if a.Overall.Waits != nil || a.Overall.Count() != 100_000 || a.Overall.Stats["p50_ms"] != 124.5 || a.Overall.Stats["max_ms"] != 249 {
		t.Fatalf("Overall: %d listed, count %d, stats %v", len(a.Overall.Waits), a.Overall.Count(), a.Overall.Stats)
	}
	for i := range MaxCountedWaits {
		r := attempt("g", results.ShapeBurst, 429, 1000+float64(i), results.WaitRetryAfterMS)
		tl.Observe(&r)
	}
	if g.counts != nil || g.listedCount() != 100_000+MaxCountedWaits {
		t.Fatalf("past the count: %d values still counted, %d listed", len(g.counts), g.listedCount())
	}
}

// TestCountedMean: the mean of counted waits adds them in the order
// stats.Mean adds them listed, so rounding agrees, also for sums that
// overflow to infinity.
func TestCountedMean(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 9))
	for trial := range 200 {
		counts := map[float64]int{}
		for range 1 + rng.IntN(300) {
			counts[float64(rng.IntN(50))/3+rng.Float64()*float64(trial%3)] += 1 + rng.IntN(20)
		}
		if trial == 0 {
			counts = map[float64]int{math.MaxFloat64 / 2: 3, 1: 2}
		}
		c := countedFrom(counts)
		l := listed(c.list())
		if got, want := c.mean(), l.mean(); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("trial %d: mean %v, want %v", trial, got, want)
		}
		for i := range l.len() {
			if c.at(i) != l.at(i) {
				t.Fatalf("trial %d: at(%d) = %v, want %v", trial, i, c.at(i), l.at(i))
			}
		}
		for _, p := range []float64{0.5, 10, 25, 50, 75, 90, 95, 99, 99.9, 100} {
			if got, want := percentileOf(c, p), percentileOf(l, p); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("trial %d p%v: %v, want %v", trial, p, got, want)
			}
		}
	}
}
