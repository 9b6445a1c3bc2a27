package analyze_test

import (
	"context"
	"fmt"
	"math"
	"os"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/results"
)

// Example reproduces the published reference table from the published
// events: a foreign CSV whose "source" column names the group, renamed to
// the published labels.
func Example() {
	f, err := os.Open("testdata/upstream/retry_after_ms_events.csv")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	t := analyze.NewTally(false)
	cols := analyze.ForeignColumns{Value: "retry_after_ms", Group: "source"}
	if err := t.Read(context.Background(), f, analyze.Input{Name: f.Name(), Ordinal: 1}, cols); err != nil {
		fmt.Println(err)
		return
	}
	labels := analyze.Labels{"task013": "Burst-shaped source", "task019": "Scheduled-shaped source"}
	a, err := t.Analysis(labels, analyze.DefaultMinGroup)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Published numbers carry at most 2 decimals.
	r := func(v float64) float64 { return math.Round(v*100) / 100 }
	for _, g := range append([]analyze.Group{a.Overall}, a.Groups...) {
		fmt.Printf("%s: n=%d p50=%g p90=%g p99=%g max=%g\n", g.Label, g.Count(),
			r(g.Stats["p50_ms"]), r(g.Stats["p90_ms"]), r(g.Stats["p99_ms"]), r(g.Stats["max_ms"]))
	}
	// Output:
	// Overall: n=193 p50=43 p90=50.8 p99=16921.12 max=17258
	// Burst-shaped source: n=167 p50=43 p90=49 p99=16983.26 max=17258
	// Scheduled-shaped source: n=26 p50=3 p90=60 p99=60 max=60
}

// ExampleCountedWaits counts a live run as its attempts complete, keeping
// a count per distinct advised wait rather than every wait: memory stays
// flat however long the run, and the statistics are those of every wait.
func ExampleCountedWaits() {
	t := analyze.NewTally(false, analyze.CountedWaits())
	for i := range 100_000 { // e.g. from dispatch's Observe hook
		rec := results.Blank()
		rec.Shape, rec.Attempt, rec.Status = results.ShapeScheduled, 1, 429
		rec.WaitMS, rec.WaitSource = float64(40+i%7), results.WaitRetryAfterMS
		t.Observe(&rec)
	}
	done, refused := t.Counts()
	a, err := t.Analysis(nil, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d attempts, %d refused; advised wait p50 %g ms, p99 %g ms, mean %g ms\n",
		done, refused, a.Overall.Percentile(50), a.Overall.Percentile(99), a.Overall.Stats["mean_ms"])
	// Output:
	// 100000 attempts, 100000 refused; advised wait p50 43 ms, p99 46 ms, mean 42.99995 ms
}

// ExampleRequests_FailedNotAdmission tells failures apart: of 10 requests
// 6 succeeded, 3 were refused by admission and 1 failed otherwise, the
// part a deployment's rate limit does not explain.
func ExampleRequests_FailedNotAdmission() {
	r := analyze.Requests{Requests: 10, Succeeded: 6, HTTP429: 3, HTTP5xx: 1}
	fmt.Println(r.Failed(), r.FailedNotAdmission())
	// Output:
	// 4 1
}
