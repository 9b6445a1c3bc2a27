package sim

import "time"

// Cold is how a PTU deployment forecasts the wait it advises: at its
// drain while it has recent work to learn its throughput from, and at
// DrainPct% of it while it is cold — it has completed no request in the
// last After, or none yet. The forecast sets the advice only; admission
// and the drain stay the bucket's. So the refusals of the first wave that
// meets a rested deployment and overruns its burst allowance are told to
// wait for the allowance's lift drained at the cold forecast (seconds),
// and once that wave's first answers are out every later refusal is
// told one request's overshoot at the drain (tens of milliseconds): the
// waits are bimodal with nothing between (the package doc has the
// arithmetic, "Why the waits have an empty middle"). Off while DrainPct
// is 0.
type Cold struct {
	DrainPct float64
	After    time.Duration
}

// Cold is the forecast c's fields describe.
func (c Config) Cold() Cold {
	return Cold{DrainPct: c.ColdDrainPct, After: c.ColdAfter}
}

// On reports whether a cold deployment forecasts anything but its drain.
func (c Cold) On() bool { return c.DrainPct > 0 }

// check reports the forecast's problems under Config's field names.
func (c Cold) check(bad func(field, format string, a ...any)) {
	switch {
	case !(c.DrainPct >= 0) || c.DrainPct > 100:
		bad("ColdDrainPct", "%v: want 0..100 (0: off)", c.DrainPct)
	case !c.On():
	case c.After <= 0 || c.After > time.Hour:
		bad("ColdAfter", "%v: want > 0 and <= 1h", c.After)
	}
}
