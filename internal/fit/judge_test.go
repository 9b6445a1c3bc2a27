package fit

import (
	"math"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/sim"
)

// TestMinWaits: the fewest waits a KS within the threshold tests is where
// the 10% critical value, 1.224/√n, comes within it: 67 at 0.15.
func TestMinWaits(t *testing.T) {
	t.Parallel()
	c := math.Sqrt(-math.Log(0.05) / 2)
	for _, th := range []float64{DefaultThreshold, 0.1, 0.3, 1} {
		n := minWaitsAt(th)
		if c/math.Sqrt(float64(n)) > th || n > 1 && c/math.Sqrt(float64(n-1)) <= th {
			t.Errorf("threshold %v: MinWaits %d, critical value there %.4f, one fewer %.4f", th, n, c/math.Sqrt(float64(n)), c/math.Sqrt(float64(n-1)))
		}
	}
	if n := minWaitsAt(DefaultThreshold); n != 67 {
		t.Errorf("MinWaits(%v) = %d, docs/fit.md says 67", DefaultThreshold, n)
	}
}

// waits is n waits of ms each.
func waits(n int, ms float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = ms
	}
	return out
}

// TestJudge: a fit whose fitted groups hold too few waits to test is
// insufficient, never good (issue 35: one refusal fitted as good); a
// group below the minimum is untested and does not spoil a fit whose
// other groups suffice; a failed test makes a fit poor, however few the
// refusals.
func TestJudge(t *testing.T) {
	t.Parallel()
	group := func(name string, n int, ks float64, held bool) groupScore {
		return groupScore{group: name, ks: ks, heldOut: held, recorded: waits(n, 1000), twin: waits(n, 1000)}
	}
	for _, c := range []struct {
		name      string
		groups    []groupScore
		agreement float64
		quality   string
		says      string
	}{
		{"one event", []groupScore{group("burst-shaped", 1, 0, false)}, 1, sim.FitInsufficient,
			"the fitted groups hold 1 usable waits in all (burst-shaped's 1 (KS 0)), and a group's KS tests a distribution from 67 on"},
		{"two small groups", []groupScore{group("a", 40, 0, false), group("b", 40, 0, false)}, 0.99, sim.FitInsufficient, "hold 80 usable waits"},
		{"one group suffices", []groupScore{group("burst-shaped", 125, 0.02, false), group("scheduled-shaped", 25, 0.9, false)}, 0.99, sim.FitGood,
			"not tested, with fewer than 67 usable waits: scheduled-shaped's 25 (KS 0.9)"},
		{"a tested group fails", []groupScore{group("burst-shaped", 125, 0.4, false), group("scheduled-shaped", 25, 0, false)}, 0.99, sim.FitPoor,
			"burst-shaped's waits are 0.4 from the recorded"},
		{"few refusals, wrong twin", []groupScore{group("a", 3, 0, false)}, 0.5, sim.FitPoor, "for only 50% of the sends"},
		{"held out decides nothing", []groupScore{group("a", 100, 0, false), group("b", 100, 0.9, true)}, -1, sim.FitGood, "held out, b is 0.9"},
	} {
		q, why := judge(score{groups: c.groups, agreement: c.agreement}, DefaultThreshold, DefaultMinAgreement, minWaitsAt(DefaultThreshold))
		if q != c.quality || !strings.Contains(why, c.says) {
			t.Errorf("%s: %s: %s\nwant %s saying %q", c.name, q, why, c.quality, c.says)
		}
	}
}
