package analyze

import (
	"math/rand/v2"
	"testing"

	"github.com/ptuprobe/ptuprobe/results"
)

// streamedAnalysis is the Analysis of n streamed requests in two groups,
// one in twenty refused, their times drawn from seed.
func streamedAnalysis(b *testing.B, n int, seed uint64, slower float64) *Analysis {
	b.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	t := NewTally(false, CountedWaits(), WithSLO(SLO{TTFT: 300e6}))
	r := results.Blank()
	r.Shape, r.Attempt = results.ShapeScheduled, 1
	for i := range n {
		r.Group, r.Seq = []string{"a", "b"}[i%2], i
		r.IntendedMS, r.SentMS = float64(i), float64(i)
		r.Status, r.WaitMS, r.WaitSource = 200, results.None, results.WaitNone
		r.TTFTMS = slower + 50 + 200*rng.ExpFloat64()
		r.TPOTMS, r.ITLP50MS, r.ITLMaxMS = 5+rng.Float64()*10, 5+rng.Float64()*5, 20+rng.Float64()*200
		r.CompletionTokens, r.PromptTokens = 100, 1000
		r.LatencyMS, r.TTFBMS = r.TTFTMS+99*r.TPOTMS, 5
		if i%20 == 0 {
			r.Status, r.WaitMS, r.WaitSource = 429, float64(rng.IntN(5000)), results.WaitRetryAfterMS
			r.TTFTMS, r.TPOTMS, r.ITLP50MS, r.ITLMaxMS = results.None, results.None, results.None, results.None
		}
		t.Observe(&r)
	}
	a, err := t.FinalAnalysis(nil, DefaultMinGroup)
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// BenchmarkCompare1M: the comparison of two runs of 1,000,000 streamed
// requests each (analyze --baseline, after both analyses), every figure
// of Overall and two groups with its bootstrap.
func BenchmarkCompare1M(b *testing.B) {
	a := streamedAnalysis(b, 1_000_000, 1, 10)
	base := streamedAnalysis(b, 1_000_000, 2, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		c := Compare(a, base)
		if ch := c.Find(OverallLabel, "ttft_p99_ms"); ch == nil || ch.Noise == NoiseNotEstimate {
			b.Fatalf("no TTFT change: %+v", ch)
		}
	}
}
