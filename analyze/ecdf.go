package analyze

// Step is one point of an empirical CDF: Share of the waits are ≤ Wait.
type Step struct {
	Wait  float64
	Share float64
}

// ECDF returns the steps of the empirical CDF of sorted waits: a leading
// (first wait, 0) so the curve rises from zero, then one step per distinct
// wait. With more than maxSteps distinct waits it keeps evenly spaced ones
// and always the last, so a million waits draw as a curve, not a million
// segments; at chart resolution the difference cannot be seen.
func ECDF(sorted []float64, maxSteps int) []Step {
	n := len(sorted)
	if n == 0 {
		return nil
	}
	steps := []Step{{Wait: sorted[0], Share: 0}}
	for i := 0; i < n; i++ {
		if i+1 < n && sorted[i+1] == sorted[i] {
			continue
		}
		steps = append(steps, Step{Wait: sorted[i], Share: float64(i+1) / float64(n)})
	}
	if maxSteps < 2 || len(steps) <= maxSteps {
		return steps
	}
	kept := make([]Step, 0, maxSteps+1)
	stride := float64(len(steps)-1) / float64(maxSteps-1)
	for k := 0; k < maxSteps; k++ {
		kept = append(kept, steps[int(float64(k)*stride+0.5)])
	}
	if last := steps[len(steps)-1]; kept[len(kept)-1] != last {
		kept = append(kept, last)
	}
	return kept
}
