package report

import (
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/results"
)

// row is one live attempt: status, advised wait (None for none), lateness.
func row(status int, waitMS, lateMS float64) results.Record {
	r := results.Blank()
	r.RunID, r.Shape, r.Group, r.Attempt = "abcd0123", results.ShapeBurst, results.GroupBurst, 1
	r.IntendedMS, r.SentMS, r.Status = 1000, 1000+lateMS, status
	if waitMS >= 0 {
		r.WaitMS, r.WaitSource = waitMS, results.WaitRetryAfterMS
	} else if status == 429 {
		r.WaitSource = results.WaitInvalid
	}
	return r
}

func TestWriteRunSummary(t *testing.T) {
	t.Parallel()
	mixed := []results.Record{
		row(200, -1, 0.5), row(200, -1, 12.345), row(429, 43, 1), row(429, 1990.5, 0),
		row(429, 40, 3), row(429, -1, 0), row(503, -1, 0), row(0, -1, 0),
	}
	mixed[0].LatencyMS, mixed[1].LatencyMS = 10, 30.5
	mixed[1].Spillover = true
	mixed[7].Error = results.ClassReset
	var oneTo100 []results.Record
	for i := 1; i <= 100; i++ {
		oneTo100 = append(oneTo100, row(429, float64(i), 0))
	}
	// A retry owner's run: two requests sent, one on its retry; three given
	// up before their first send, one cut by a stop while it waited.
	owned := []results.Record{row(429, 40, 0), row(200, -1, 0), row(200, -1, 0)}
	owned[2].Attempt = 2
	for _, d := range []string{results.DecisionGiveUpLocal, results.DecisionGiveUpLocal, results.DecisionGiveUpLocal, results.DecisionInterrupted} {
		r := row(0, -1, 0)
		r.Decision, r.Error, r.SentMS, r.LatencyMS = d, results.ClassPaced, results.None, results.None
		owned = append(owned, r)
	}
	cases := []struct {
		name string
		recs []results.Record
		want []string
	}{
		{"nothing sent", nil, []string{
			"requests: 0 planned, 0 attempts sent",
			"429s: 0",
			"sends late by more than 10 ms: 0 (max 0 ms)",
		}},
		{"every kind of row", mixed, []string{
			"requests: 8 planned, 8 attempts sent (no response ×1, 200 ×2, 429 ×4, 503 ×1)",
			// Type 7 over the two successes' latencies.
			"succeeded: 2 of 8 planned (25%), latency p50 20.25 ms, p99 30.3 ms",
			"errors: reset ×1",
			// Three waits: below --min-group, yet the summary shows them.
			"429s: 4, advised wait p50 43 ms, p99 1,951.55 ms, 1 without a usable wait",
			"served by spillover: 1",
			"sends late by more than 10 ms: 1 (max 12.35 ms)",
		}},
		{"requests not sent", owned, []string{
			"requests: 6 planned, 3 attempts sent (200 ×2, 429 ×1), 3 given up without being sent, 1 interrupted before being sent",
			"succeeded: 2 of 6 planned (33.3%), latency p50 0 ms, p99 0 ms",
			"429s: 1, advised wait p50 40 ms, p99 40 ms",
			"sends late by more than 10 ms: 0 (max 0 ms)",
		}},
		{"type 7 percentiles", oneTo100, []string{
			"requests: 100 planned, 100 attempts sent (429 ×100)",
			"succeeded: 0 of 100 planned (0%)",
			"429s: 100, advised wait p50 50.5 ms, p99 99.01 ms",
			"sends late by more than 10 ms: 0 (max 0 ms)",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tally := analyze.NewTally(false)
			for i := range c.recs {
				tally.Observe(&c.recs[i])
			}
			a, err := tally.Analysis(nil, analyze.DefaultMinGroup)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			if err := WriteRunSummary(&b, a); err != nil {
				t.Fatal(err)
			}
			if want := strings.Join(c.want, "\n") + "\n"; b.String() != want {
				t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
			}
		})
	}
}
