package analyze

// LongTailRatio is the p99/p50 ratio from which a distribution is read as
// "short median, long tail".
const LongTailRatio = 10

// Tail is the shape of a group's advised waits as the summary reads it.
type Tail struct {
	P50, P99 float64
	// Ratio is p99/p50; 0 when p50 is 0 (then Long is p99 > 0).
	Ratio float64
	// Long is true for a short median with a long tail: p99/p50 ≥ LongTailRatio.
	Long bool
}

// TailOf reads the tail of g; ok is false when g's percentiles are withheld.
func TailOf(g *Group) (t Tail, ok bool) {
	if g.Stats == nil {
		return Tail{}, false
	}
	t.P50, t.P99 = g.Stats["p50_ms"], g.Stats["p99_ms"]
	if t.P50 > 0 {
		t.Ratio = t.P99 / t.P50
		t.Long = t.Ratio >= LongTailRatio
	} else {
		t.Long = t.P99 > 0
	}
	return t, true
}
