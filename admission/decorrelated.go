package admission

import (
	"math"
	"time"
)

// ChainedBackoff is a Backoff that also depends on the wait it gave the
// request before: previous is its own last result for this request, 0
// before the request's first retry (Policy.ChainedBackoff). rand returns a
// number in [0, 1); a negative result counts as 0.
type ChainedBackoff func(retry int, previous time.Duration, rand func() float64) time.Duration

// Decorrelated is decorrelated jitter, after the AWS Architecture Blog's
// "Exponential Backoff and Jitter": each wait is drawn uniformly from
// [base, 3 × the previous wait), at most cap, the first from
// [base, 3 × base). Each client's waits wander apart instead of doubling
// in step, and never fall under base. A non-positive base gives no wait;
// a non-positive cap, no cap.
func Decorrelated(base, cap time.Duration) ChainedBackoff {
	return func(_ int, previous time.Duration, rand func() float64) time.Duration {
		if base <= 0 {
			return 0
		}
		previous = max(previous, base)
		upper := float64(previous) * 3
		w := float64(base) + rand()*(upper-float64(base))
		if cap > 0 && w > float64(cap) {
			w = float64(cap)
		}
		return time.Duration(min(w, math.MaxInt64/2))
	}
}
