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
// segments; at chart resolution the difference cannot be seen. It makes
// two passes over sorted and allocates only the steps it returns.
func ECDF(sorted []float64, maxSteps int) []Step {
	n := len(sorted)
	if n == 0 {
		return nil
	}
	// steps counts the leading step and one per distinct wait; step j ≥ 1
	// ends at the last index of the j-th distinct wait.
	steps := 1
	for i := range n {
		if i+1 == n || sorted[i+1] != sorted[i] {
			steps++
		}
	}
	keep, stride := steps, 1.0
	if maxSteps >= 2 && steps > maxSteps {
		keep, stride = maxSteps, float64(steps-1)/float64(maxSteps-1)
	}
	out := make([]Step, 0, keep+1)
	out = append(out, Step{Wait: sorted[0], Share: 0})
	k, next := 1, int(stride+0.5) // the k-th kept step is step next
	j := 0
	for i := 0; i < n && k < keep; i++ {
		if i+1 < n && sorted[i+1] == sorted[i] {
			continue
		}
		if j++; j == next {
			out = append(out, Step{Wait: sorted[i], Share: float64(i+1) / float64(n)})
			k++
			next = int(float64(k)*stride + 0.5)
		}
	}
	if last := (Step{Wait: sorted[n-1], Share: 1}); out[len(out)-1] != last {
		out = append(out, last)
	}
	return out
}
