package analyze

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/ptuprobe/ptuprobe/results"
)

// TestThroughputTimeline reads a results file back: tokens in the second
// an answer completed, 429s in the second they were sent, attempts
// offered in the second they were meant for; an answer without a usage
// adds no token, a row past a day is counted apart.
func TestThroughputTimeline(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w, err := results.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	row := func(seq int, intended, sent, latency float64, status, prompt, completion int) {
		r := results.Blank()
		r.RunID, r.Shape, r.Group, r.Seq, r.Attempt = "7e570037", results.ShapeScheduled, "g", seq, 1
		r.IntendedMS, r.SentMS, r.LatencyMS, r.Status = intended, sent, latency, status
		r.PromptTokens, r.CompletionTokens = prompt, completion
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	row(0, 100, 100, 950, 200, 500, 20)   // completes at 1.05 s
	row(1, 900, 1200, 100, 200, 400, 10)  // offered at 0.9 s, completes at 1.3 s
	row(2, 1500, 1500, 5, 429, -1, -1)    // refused at 1.5 s
	row(3, 2100, 2100, 300, 200, -1, -1)  // no usage
	row(4, 2500, 2999, 1, 429, -1, -1)    // refused at 2.999 s
	row(5, 3000, 3000, 2000, 200, 100, 5) // completes at 5 s
	row(6, 9e7, 9e7, 1, 429, -1, -1)      // past a day
	tally := NewTally(false)
	if err := tally.Read(context.Background(), &buf, Input{Name: "r.csv", Ordinal: 1}, ForeignColumns{}); err != nil {
		t.Fatal(err)
	}
	a, err := tally.Analysis(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []ThroughputSecond{
		{Offered: 2}, {Tokens: 930, Refused: 1, Offered: 1}, {Refused: 1, Offered: 2}, {Offered: 1}, {}, {Tokens: 105},
	}
	if got := a.Throughput(); !slices.Equal(got, want) || a.ThroughputBeyond != 2 {
		t.Errorf("timeline %+v (beyond %d), want %+v (beyond 2: offered and sent)", got, a.ThroughputBeyond, want)
	}
	tpm := TokensPerMinute(want)
	if tpm[0] != 0 || tpm[1] != 930*60/2 || tpm[5] != 1035*60/6 {
		t.Errorf("tokens per minute %v", tpm)
	}
	long := make([]ThroughputSecond, 70)
	long[0].Tokens, long[65].Tokens = 600, 60
	if tpm := TokensPerMinute(long); tpm[59] != 600 || tpm[60] != 0 || tpm[65] != 60 {
		t.Errorf("a trailing minute: %v", tpm[55:])
	}
}
