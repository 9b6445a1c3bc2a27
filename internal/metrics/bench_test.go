package metrics

import (
	"context"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/results"
)

// BenchmarkObserve is the per-attempt cost of the metrics alone: one
// Record (200s, 429s with a wait, a retry, a reset) observed.
func BenchmarkObserve(b *testing.B) {
	tr, _ := newTraffic(b)
	g := tr.Plan("scheduled-shaped", 1)
	recs := []*results.Record{
		record("scheduled-shaped", 1, 200, "", -1, 10, 10.1),
		record("scheduled-shaped", 1, 429, "", 250, 10, 10.3),
		record("scheduled-shaped", 2, 200, "", -1, 300, 300.1),
		record("scheduled-shaped", 1, 0, results.ClassReset, -1, 10, 10.1),
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			g.Observe(recs[i%len(recs)])
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				g.Observe(recs[i%len(recs)])
			}
		})
	})
}

// BenchmarkDispatch is the engine's cost per request (every arrival due at
// once, an instant Sender, a Sink that keeps nothing) without and with the
// metrics: their Sender wrapper (sent, in flight) and their Observe.
func BenchmarkDispatch(b *testing.B) {
	for _, withMetrics := range []bool{false, true} {
		name := "without"
		if withMetrics {
			name = "with-metrics"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var s dispatch.Sender = instant{}
			o := dispatch.Options{Group: "scheduled-shaped", MaxRequests: b.N + 1}
			if withMetrics {
				tr, _ := newTraffic(b)
				g := tr.Plan(o.Group, b.N)
				s, o.Observe = g.Sender(s), g.Observe
			}
			b.ResetTimer()
			if _, err := dispatch.Run(context.Background(), &zeroOffsets{n: b.N}, s, discard{}, o); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// zeroOffsets is a plan of n arrivals, all due at the start.
type zeroOffsets struct{ n int }

func (z *zeroOffsets) Next() (time.Duration, int, bool) {
	if z.n == 0 {
		return 0, 0, false
	}
	z.n--
	return 0, results.None, true
}

type discard struct{}

func (discard) Write(*results.Record) error { return nil }
