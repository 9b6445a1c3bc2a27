package admission

import (
	"time"

	"github.com/ptuprobe/ptuprobe/retryafter"
)

// answered is what an answer at now to attempt a teaches the Policy's
// per-client state — the Pace, the Throttle, the Adaptive rate and the
// RetryQuota — refused when it was an admission refusal. It all belongs
// to the primary target: an answer of the fallback teaches nothing. note
// is what it did, for the Decision's Reason.
func (r *request) answered(a *Attempt, now time.Time, adv retryafter.Advice, refused bool) (note string) {
	if a.Fallback {
		return ""
	}
	p := &r.t.p
	if p.Pace != nil {
		note += r.paceAnswer(a, now, adv, refused)
	}
	if p.Throttle != nil && !refused {
		p.Throttle.accepted(now)
	}
	if p.Adaptive != nil {
		note += p.Adaptive.answered(now, refused).note()
	}
	if q := p.RetryQuota; q != nil {
		switch {
		case refused:
			q.refused()
		case a.Status >= 200 && a.Status < 300:
			q.succeeded(r.retryCost)
		}
	}
	return note
}
