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
