package sim

import (
	"math"
	"time"
)

// quota is one limit of the model as an answer reports it, in the
// dialects that write limits on every answer (openai, anthropic, ietf):
// what it allows, what is left, and the model time until it resets.
//
// Reset follows remaining: a limit with something left resets when it is
// back to its initial state (a window's end; an empty bucket), as OpenAI
// defines its reset headers; an exhausted one (remaining 0) resets when it
// admits again (a window's end; the bucket back at 100%), which is the
// wait a refusal advises. So a refusal's exhausted limit always resets
// after exactly the model's wait.
type quota struct {
	set              bool
	limit, remaining int64
	reset            time.Duration // model time
	window           time.Duration // model time: the policy's window (ietf w)
}

// quotaOf is the PTU bucket as a token limit at now: the limit is the
// capacity (100%), what remains is the room under it. The PTU admits any
// request while at or under 100%, so remaining is at least 1 until the
// level is over 100%, and 0 exactly when the next request is refused
// (burst allowance aside).
func (b *bucket) quotaOf(now time.Time, depth time.Duration) quota {
	b.advance(now)
	q := quota{set: true, limit: max(1, int64(math.Floor(b.capacity))), window: depth}
	if b.level > b.capacity {
		q.reset = b.waitBelowFull(now)
		return q
	}
	q.remaining = max(1, int64(math.Floor(b.capacity-b.level)))
	q.reset = time.Duration(math.Ceil(b.level / b.forecast(now) * 1e9))
	return q
}

// quotaOf is a window's limit at now. It reads without moving the
// counter (only a call arriving moves it): a counter still on an earlier
// window reports the window of now untouched.
func (w *window) quotaOf(now time.Time) quota {
	q := quota{set: true, limit: w.limit, remaining: w.remaining(), window: w.size}
	i := w.indexAt(now)
	if i > w.index {
		q.remaining = w.limit
	}
	end := (max(i, w.index) + 1) * int64(w.size)
	q.reset = max(0, time.Duration(end-now.UnixNano()))
	return q
}

// exhausted is q with nothing left: the limit that refused a request,
// whatever crumb it has left, since that crumb does not fit the request.
func (q quota) exhausted() quota {
	q.remaining = 0
	return q
}

// tighter is the one of two limits of the same kind a caller meets first:
// the one with less left; of two with nothing left, the one that resets
// later, since both must reset before a request fits.
func tighter(a, b quota) quota {
	switch {
	case !a.set:
		return b
	case !b.set:
		return a
	case a.remaining == 0 && b.remaining == 0:
		if b.reset > a.reset {
			return b
		}
		return a
	case b.remaining < a.remaining:
		return b
	}
	return a
}

// limits are the two kinds of limit an answer reports. The PTU bucket is a
// token limit only: a PTU deployment limits no requests, so it reports
// none rather than a ceiling the model does not enforce. outputWeight is
// how many tokens of the token limit one output token costs (the PTU's
// OutputWeight; 1 elsewhere), for anthropic's output-tokens headers.
type limits struct {
	requests, tokens quota
	outputWeight     float64
}

// standardLimits are the standard deployment's windows after a decision at
// now; reqRefused and tokRefused mark the windows that refused it.
func (s *standard) limitsOf(now time.Time, reqRefused, tokRefused bool) limits {
	l := limits{requests: s.requests.quotaOf(now), tokens: s.tokens.quotaOf(now), outputWeight: 1}
	if reqRefused {
		l.requests = l.requests.exhausted()
	}
	if tokRefused {
		l.tokens = l.tokens.exhausted()
	}
	return l
}

// gatewayLimits are a caller's limits on the gateway after a decision at
// now: of its organization's and its key's windows, the tighter of each
// kind. A refused call reports the window that refused it as exhausted.
func gatewayLimits(now time.Time, org, key *ceiling, r gatewayRefusal, refused bool) limits {
	oq, kq := org.requests.quotaOf(now), key.requests.quotaOf(now)
	ot, kt := org.tokens.quotaOf(now), key.tokens.quotaOf(now)
	if refused {
		switch {
		case r.holder == holderOrg && r.limit == limitRequests:
			oq = oq.exhausted()
		case r.holder == holderOrg:
			ot = ot.exhausted()
		case r.limit == limitRequests:
			kq = kq.exhausted()
		default:
			kt = kt.exhausted()
		}
	}
	return limits{requests: tighter(oq, kq), tokens: tighter(ot, kt), outputWeight: 1}
}
