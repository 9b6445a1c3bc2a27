package sim

import "time"

// ceiling is one holder's pair of limits on the gateway: requests per
// second and tokens per minute, each on its own clock-aligned window.
// Keys and organizations each have one.
type ceiling struct {
	requests window // per second
	tokens   window // per minute
}

func newCeiling(rps, tpm int) *ceiling {
	return &ceiling{
		requests: newWindow(time.Second, int64(rps)),
		tokens:   newWindow(time.Minute, int64(tpm)),
	}
}

// gatewayRefusal says which ceiling refused a call and how long until
// that ceiling's window ends.
type gatewayRefusal struct {
	holder string // holderOrg or holderKey
	limit  string // limitRequests or limitTokens
	wait   time.Duration
}

// The holders and limits a gateway refusal names, in its message's words.
const (
	holderOrg     = "organization"
	holderKey     = "key"
	limitRequests = "requests per second"
	limitTokens   = "tokens per minute"
)

// check moves both counters to now (a call arriving is what moves them)
// and reports whether one more request of est tokens fits.
func (c *ceiling) check(now time.Time, est int64, holder string) (gatewayRefusal, bool) {
	c.requests.arrive(now)
	c.tokens.arrive(now)
	if !c.requests.fits(1) {
		return gatewayRefusal{holder: holder, limit: limitRequests, wait: c.requests.resetIn(now)}, false
	}
	if !c.tokens.fits(est) {
		return gatewayRefusal{holder: holder, limit: limitTokens, wait: c.tokens.resetIn(now)}, false
	}
	return gatewayRefusal{}, true
}

// charge counts one request and est tokens; it returns the minute the
// tokens were charged to, which the correction must find again.
func (c *ceiling) charge(est int64) int64 {
	c.requests.add(1)
	return c.tokens.add(est)
}

// gatewayTicket is what an admitted gateway call needs to reconcile its
// estimate when it completes.
type gatewayTicket struct {
	org, key        *ceiling
	orgMin, keyMin  int64
	estimate        int64
	reportsNoTokens bool // e.g. image generation: the estimate stays
	correctedOrg    bool
	correctedKey    bool
}

// gatewayAdmit applies the gateway contract to one call: the organization
// is checked first, then the key; both must have room in both of their
// windows; only then is the call charged to both. Refusals are never
// queued. Called with s.mu held.
func (g *gatewayLimiter) gatewayAdmit(now time.Time, ks *keyState, est int64) (gatewayTicket, gatewayRefusal, bool) {
	org := g.orgs[ks.org]
	if r, ok := org.check(now, est, holderOrg); !ok {
		return gatewayTicket{}, r, false
	}
	if r, ok := ks.limits.check(now, est, holderKey); !ok {
		return gatewayTicket{}, r, false
	}
	return gatewayTicket{
		org: org, key: ks.limits,
		orgMin: org.charge(est), keyMin: ks.limits.charge(est),
		estimate: est,
	}, gatewayRefusal{}, true
}

// gatewayReconcile replaces the estimate with the reported usage on each
// counter that is still on the minute it was charged to. A counter that a
// later call has moved to a new minute is left alone — the correction has
// nothing to land on — and the two counters move independently, so one
// may take the correction and the other not. Called with s.mu held.
func (t *gatewayTicket) reconcile(actual int64) {
	if t.reportsNoTokens {
		return
	}
	delta := actual - t.estimate
	t.correctedOrg = t.org.tokens.correct(t.orgMin, delta)
	t.correctedKey = t.key.tokens.correct(t.keyMin, delta)
}
