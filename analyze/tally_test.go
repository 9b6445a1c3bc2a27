package analyze

import (
	"math"
	"sync"
	"testing"

	"github.com/ptuprobe/ptuprobe/results"
)

// TestObserveConcurrently is the live path of a traffic command: workers
// observe records while progress lines read Counts and a summary takes an
// Analysis. Run it with -race.
func TestObserveConcurrently(t *testing.T) {
	t.Parallel()
	tally := NewTally(false)
	const workers = 4
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			// Worker w sends waits w+1, w+1+workers, …: together 1..100.
			for i := w + 1; i <= 100; i += workers {
				r := attempt(results.GroupBurst, results.ShapeBurst, 429, float64(i), results.WaitRetryAfterMS)
				tally.Observe(&r)
				ok := attempt(results.GroupBurst, results.ShapeBurst, 200, -1, results.WaitNone)
				ok.Spillover = i%10 == 0
				ok.SentMS = ok.IntendedMS + float64(i)/4 // late by more than 10 ms from i = 41
				tally.Observe(&ok)
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			done, n429 := tally.Counts()
			if n429 > done {
				t.Errorf("Counts() = %d done, %d 429s", done, n429)
			}
			if _, err := tally.Analysis(nil, 1); err != nil {
				t.Error(err)
			}
		}
	})
	none := attempt(results.GroupScheduled, results.ShapeScheduled, 429, -1, results.WaitNone)
	invalid := attempt(results.GroupScheduled, results.ShapeScheduled, 429, -1, results.WaitInvalid)
	failed := attempt(results.GroupScheduled, results.ShapeScheduled, 0, -1, results.WaitNone)
	failed.Error = results.ClassReset
	for _, r := range []*results.Record{&none, &invalid, &failed} {
		wg.Go(func() { tally.Observe(r) })
	}
	wg.Wait()

	if done, n429 := tally.Counts(); done != 203 || n429 != 102 {
		t.Errorf("Counts() = %d, %d; want 203, 102", done, n429)
	}
	a, err := tally.Analysis(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	tot := a.Totals
	checks := []struct {
		name      string
		got, want float64
	}{
		{"attempts", float64(tot.Attempts), 203},
		{"429s", float64(tot.Total429), 102},
		{"status 200", float64(tot.ByStatus[200]), 100},
		{"no response", float64(tot.ByStatus[0]), 1},
		{"reset", float64(tot.ByErrorClass[results.ClassReset]), 1},
		{"no wait", float64(tot.NoWait.None + tot.NoWait.Invalid), 2},
		{"spillover", float64(tot.Spillover), 10},
		{"late", float64(tot.Late), 60},
		{"max late ms", tot.MaxLateMS, 25},
		{"usable waits", float64(a.Overall.Count()), 100},
		// Hyndman–Fan type 7 over 1..100.
		{"p50", a.Overall.Stats["p50_ms"], 50.5},
		{"p99", a.Overall.Stats["p99_ms"], 99.01},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestPercentileType7(t *testing.T) {
	t.Parallel()
	oneTo100 := make([]float64, 100)
	for i := range oneTo100 {
		oneTo100[i] = float64(i + 1)
	}
	cases := []struct {
		sorted  []float64
		percent float64
		want    float64
	}{
		{oneTo100, 50, 50.5},
		{oneTo100, 99, 99.01},
		{oneTo100, 90, 90.1},
		{oneTo100, 100, 100},
		{[]float64{1, 2, 3, 4}, 25, 1.75},
		{[]float64{7}, 99, 7},
	}
	for _, c := range cases {
		if got := Percentile(c.sorted, c.percent); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Percentile(n=%d, %v) = %v, want %v", len(c.sorted), c.percent, got, c.want)
		}
	}
	for _, bad := range []float64{0, -1, 101} {
		if got := Percentile(oneTo100, bad); !math.IsNaN(got) {
			t.Errorf("Percentile(%v) = %v, want NaN", bad, got)
		}
	}
	if got := Percentile(nil, 50); !math.IsNaN(got) {
		t.Errorf("Percentile of nothing = %v, want NaN", got)
	}
}
