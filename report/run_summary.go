package report

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ptuprobe/ptuprobe/analyze"
)

// WriteRunSummary writes the end-of-run summary of a traffic command from
// the Analysis of its live analyze.Tally: the requests planned beside the
// HTTP attempts sent, by status, and those never sent (given up locally
// by their retry owner, or interrupted while they waited); the share of
// planned requests that succeeded; error classes, 429s with the p50 and
// p99 of their advised waits (type 7, from the first wait on, whatever
// the Analysis's minimum group size), 429s without a usable wait,
// spillover and late sends. For example:
//
//	requests: 30 planned, 28 attempts sent (no response ×1, 200 ×9, 429 ×16, 503 ×2), 2 given up without being sent
//	succeeded: 9 of 30 planned (30%), latency p50 12 ms, p99 40.5 ms
//	errors: reset ×1
//	429s: 16, advised wait p50 43 ms, p99 1990.5 ms, 3 without a usable wait
//	served by spillover: 2
//	sends late by more than 10 ms: 0 (max 1.25 ms)
func WriteRunSummary(w io.Writer, a *analyze.Analysis) error {
	t, r := &a.Totals, &a.Overall.Requests
	var b strings.Builder
	attempts := "attempts"
	if t.Attempts == 1 {
		attempts = "attempt"
	}
	fmt.Fprintf(&b, "requests: %d planned, %d %s sent", r.Planned, t.Attempts, attempts)
	if len(t.ByStatus) > 0 {
		codes := slices.Sorted(maps.Keys(t.ByStatus))
		parts := make([]string, len(codes))
		for i, c := range codes {
			label := strconv.Itoa(c)
			if c == 0 {
				label = "no response"
			}
			parts[i] = fmt.Sprintf("%s ×%d", label, t.ByStatus[c])
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(parts, ", "))
	}
	if r.GivenUpUnsent > 0 {
		fmt.Fprintf(&b, ", %d given up without being sent", r.GivenUpUnsent)
	}
	if r.InterruptedUnsent > 0 {
		fmt.Fprintf(&b, ", %d interrupted before being sent", r.InterruptedUnsent)
	}
	b.WriteByte('\n')
	if pct, ok := r.PlannedSuccessPct(); ok {
		fmt.Fprintf(&b, "succeeded: %d of %d planned (%s%%)", r.Succeeded, r.Planned, Number(math.Round(pct*10)/10))
		if r.Latencies() > 0 {
			fmt.Fprintf(&b, ", latency p50 %s, p99 %s", Millis(r.LatencyPercentile(50)), Millis(r.LatencyPercentile(99)))
		}
		b.WriteByte('\n')
	}
	if r.Streamed > 0 {
		fmt.Fprintf(&b, "tokens: %d streamed, ttft p50 %s, p99 %s", r.Streamed, Millis(r.TTFTPercentile(50)), Millis(r.TTFTPercentile(99)))
		if r.TPOTs() > 0 {
			fmt.Fprintf(&b, ", tpot p50 %s, p99 %s", Millis(r.TPOTPercentile(50)), Millis(r.TPOTPercentile(99)))
		}
		if r.ITLs() > 0 {
			fmt.Fprintf(&b, ", itl max %s", Millis(r.ITLMaxMS))
		}
		b.WriteByte('\n')
	}
	if gp := a.Goodput(); gp != nil {
		fmt.Fprintf(&b, "goodput under %s: %d of %d planned (%s%%)\n", a.SLO, gp[0].Met, gp[0].Planned, Number(math.Round(gp[0].SharePct*10)/10))
	}
	if len(t.ByErrorClass) > 0 {
		classes := sortedKeys(t.ByErrorClass)
		parts := make([]string, len(classes))
		for i, c := range classes {
			parts[i] = fmt.Sprintf("%s ×%d", c, t.ByErrorClass[c])
		}
		fmt.Fprintf(&b, "errors: %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(&b, "429s: %d", t.Total429)
	if o := &a.Overall; o.Count() > 0 {
		fmt.Fprintf(&b, ", advised wait p50 %s, p99 %s", Millis(o.Percentile(50)), Millis(o.Percentile(99)))
	}
	if n := t.NoWait.None + t.NoWait.Invalid; n > 0 {
		fmt.Fprintf(&b, ", %d without a usable wait", n)
	}
	b.WriteByte('\n')
	if t.Spillover > 0 {
		fmt.Fprintf(&b, "served by spillover: %d\n", t.Spillover)
	}
	fmt.Fprintf(&b, "sends late by more than %d ms: %d (max %s ms)\n", analyze.LateAfterMS, t.Late, Number(t.MaxLateMS))
	_, err := io.WriteString(w, b.String())
	return err
}
