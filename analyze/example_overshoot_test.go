package analyze_test

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/results"
)

// ExampleOfferedLoad places each 429 against the load offered in the
// second before it: a run that sends 2 requests a second, then 4, each
// second's last request refused. Tokens are prompt_tokens + max_tokens of
// every request in the window, a refused one counting the mean prompt of
// the run.
func ExampleOfferedLoad() {
	var file bytes.Buffer
	w, _ := results.NewWriter(&file)
	at := 0.0
	for _, rate := range []int{2, 2, 4, 4} {
		for k := range rate {
			r := results.Blank()
			r.RunID, r.Shape, r.Group, r.Attempt = "0123abcd", results.ShapeScheduled, results.GroupScheduled, 1
			r.IntendedMS, r.SentMS, r.Status = at, at, 200
			r.PromptTokens, r.MaxTokens = 1000, 100
			if k == rate-1 {
				r.Status, r.PromptTokens = 429, results.None // a refusal reports no usage
				r.WaitMS, r.WaitSource = float64(25*rate), results.WaitRetryAfterMS
			}
			w.Write(&r)
			at += 1000 / float64(rate)
		}
	}

	t := analyze.NewTally(false, analyze.OfferedLoad(time.Second))
	if err := t.Read(context.Background(), &file, analyze.Input{Name: "results.csv", Ordinal: 1}, analyze.ForeignColumns{}); err != nil {
		fmt.Println(err)
		return
	}
	a, _ := t.Analysis(nil, analyze.DefaultMinGroup)
	g := a.Overshoot.Groups[0]
	for _, p := range g.Points {
		fmt.Printf("%s: wait %g ms after %g requests/s, %g tokens/s\n", g.Label, p.WaitMS, p.RequestsPerSec, p.TokensPerSec)
	}
	fmt.Println(g.Requests.Reason) // four 429s are too few to describe
	// Output:
	// Scheduled-shaped source: wait 50 ms after 2 requests/s, 2200 tokens/s
	// Scheduled-shaped source: wait 50 ms after 2 requests/s, 2200 tokens/s
	// Scheduled-shaped source: wait 100 ms after 4 requests/s, 4400 tokens/s
	// Scheduled-shaped source: wait 100 ms after 4 requests/s, 4400 tokens/s
	// too-few
}
