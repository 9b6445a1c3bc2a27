package report

import (
	"fmt"

	"github.com/ptuprobe/ptuprobe/analyze"
)

// Reading is the one-paragraph reading of the Overall distribution,
// worded as a description of these runs, never as a promise about a
// deployment. It is plain text; summary.md escapes its labels.
func Reading(a *analyze.Analysis) string { return reading(a, func(s string) string { return s }) }

// reading is Reading with each group label passed through label.
func reading(a *analyze.Analysis, label func(string) string) string {
	const caveat = " This describes the recorded runs only; it is not a guarantee of what a deployment will advise for other traffic or at another time."
	n := a.Overall.Count()
	if n == 0 {
		return "These runs recorded no 429 with a usable advised wait, so there is no distribution to describe." + caveat
	}
	t, ok := analyze.TailOf(&a.Overall)
	if !ok {
		return fmt.Sprintf("These runs recorded %d responses with status 429 and a usable advised wait, fewer than the %d needed to publish percentiles.%s", n, a.MinGroup, caveat)
	}
	s := fmt.Sprintf("In these runs, %s responses with status 429 carried a usable advised wait: half advised %s or less, 99%% advised %s or less, and the longest was %s.",
		Grouped(float64(n)), Millis(t.P50), Millis(t.P99), Millis(a.Overall.Stats["max_ms"]))
	switch {
	case t.Long && t.P50 > 0:
		s += fmt.Sprintf(" That is a short median with a long tail: p99 is %s× p50.", Grouped(t.Ratio))
	case t.Long:
		s += " That is a short median with a long tail: the median wait was 0 ms."
	default:
		s += fmt.Sprintf(" p99 is %s× p50, under the %d× from which this summary reads a long tail.", Grouped(t.Ratio), analyze.LongTailRatio)
	}
	if len(a.Groups) > 1 {
		s += " By group:"
		for i := range a.Groups {
			g := &a.Groups[i]
			if gt, ok := analyze.TailOf(g); ok {
				s += fmt.Sprintf(" %s — median %s, p99 %s (n = %d);", label(g.Label), Millis(gt.P50), Millis(gt.P99), g.Count())
			} else {
				s += fmt.Sprintf(" %s — n = %d, too few for percentiles;", label(g.Label), g.Count())
			}
		}
		s = s[:len(s)-1] + "."
	}
	return s + caveat
}
