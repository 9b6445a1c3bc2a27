package analyze_test

import (
	"fmt"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/results"
)

// ExampleParseSLO reads the --slo grammar: any subset of ttft, tpot, itl
// and e2e, or a bare duration, which is e2e.
func ExampleParseSLO() {
	for _, v := range []string{"ttft=500ms,e2e=10s", "10s", "ttfb=1s"} {
		slo, err := analyze.ParseSLO(v)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Printf("%s (needs a stream: %v)\n", slo, slo.NeedsStream())
	}
	// Output:
	// ttft=500ms,e2e=10s (needs a stream: true)
	// e2e=10s (needs a stream: false)
	// error: unknown term "ttfb" (names: ttft, tpot, itl, e2e)
}

// ExampleAnalysis_Goodput counts the goodput of four planned requests
// under a TTFT objective: one refused, one never sent, one answered too
// late; the refused and the unsent count against it.
func ExampleAnalysis_Goodput() {
	slo, _ := analyze.ParseSLO("ttft=200ms")
	t := analyze.NewTally(false, analyze.WithSLO(slo))
	for seq, ttft := range []float64{120, 350, -1, -1} {
		r := results.Blank()
		r.Shape, r.Group, r.Seq, r.Attempt = results.ShapeScheduled, "chat", seq, 1
		r.SentMS, r.LatencyMS, r.Status = float64(100*seq), 900, 200
		r.TTFTMS = ttft
		switch seq {
		case 2:
			r.Status = 429
		case 3: // its retry owner gave up before sending it
			r.Status, r.SentMS, r.LatencyMS = 0, results.None, results.None
			r.Decision, r.Error = results.DecisionGiveUpLocal, results.ClassPaced
		}
		t.Observe(&r)
	}
	a, _ := t.Analysis(nil, 1)
	for _, g := range a.Goodput() {
		fmt.Printf("%s: %d of %d planned met %s (%.0f%%)\n", g.Group, g.Met, g.Planned, a.SLO, g.SharePct)
	}
	// Output:
	// Overall: 1 of 4 planned met ttft=200ms (25%)
	// chat: 1 of 4 planned met ttft=200ms (25%)
}

// ExampleCompare sets a run beside its baseline: the first tokens came
// 40 ms later for every request, beyond the noise of 200 requests a run;
// the success share did not change.
func ExampleCompare() {
	run := func(extra float64) *analyze.Analysis {
		t := analyze.NewTally(false)
		for seq := range 200 {
			r := results.Blank()
			r.Shape, r.Group, r.Seq, r.Attempt, r.Status = results.ShapeScheduled, "chat", seq, 1, 200
			r.SentMS, r.TTFTMS = float64(10*seq), 100+float64(seq%20)+extra
			r.LatencyMS = r.TTFTMS + 400
			t.Observe(&r)
		}
		a, _ := t.Analysis(nil, 1)
		return a
	}
	c := analyze.Compare(run(40), run(0))
	for _, figure := range []string{"ttft_p50_ms", "success_pct"} {
		ch := c.Find(analyze.OverallLabel, figure)
		fmt.Printf("%s: %g → %g (%+g), %s the noise (%d resamples)\n", figure, ch.Base, ch.Now, ch.Delta, ch.Noise, c.Resamples)
	}
	// Output:
	// ttft_p50_ms: 109.5 → 149.5 (+40), beyond the noise (1000 resamples)
	// success_pct: 100 → 100 (+0), within the noise (1000 resamples)
}
