package admission

import (
	"time"

	"github.com/ptuprobe/ptuprobe/retryafter"
)

// answered is what an answer at now to attempt a teaches the Policy's
// per-client state — the Pace, then the Gates (the Throttle, the
// Adaptive rate, the RetryQuota, Policy.Gates) — refused when it was an
// admission refusal. It all belongs to the primary target: an answer of
// the fallback teaches nothing. note is what it did, for the Decision's
// Reason.
func (r *request) answered(a *Attempt, now time.Time, adv retryafter.Advice, refused bool) (note Reason) {
	if a.Fallback {
		return Reason{}
	}
	w := r.words()
	if r.t.p.Pace != nil {
		w = r.paceAnswer(a, now, adv, refused, w)
	}
	return r.seal(r.learn(a, now, refused, w))
}
