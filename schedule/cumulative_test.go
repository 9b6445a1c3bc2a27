package schedule

// cumulative is what the tests check inverse against; the plan needs only
// inverse.

// cumulative returns Λ(t) within the phase, t in seconds.
func (p Phase) cumulative(t float64) float64 {
	d := p.Duration.Seconds()
	return p.From*t + (p.To-p.From)*t*t/(2*d)
}
