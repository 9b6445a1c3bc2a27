package sim

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// limiter is the admission model of one profile: ptu (the PTU bucket and
// its spillover), gateway (per-key and per-organization ceilings) or
// window (a fixed window). New chooses it once, from Config.Profile, and
// nothing else decides by the profile's name (Validate checks which
// settings go with which profile): a new model is a new implementation,
// and a new cost (the prompt's tokens, a refusal's) goes through these
// methods.
type limiter interface {
	// track returns the holder a call is charged to and counted under,
	// creating it on first sight; ok is false when the key table is full
	// and the key is new. Called with s.mu held.
	track(keys *keyTable, key string) (ks *keyState, ok bool)
	// admit decides on call c arriving at now: admitted, and charged, or
	// refused with wait, the model time until a retry could be admitted
	// (what the refusal advises), and with lim, the limits the answer
	// reports, either way. A refusal may charge something too: admit
	// alone decides what a decision costs. Called with s.mu held.
	admit(now time.Time, c call) admission
	// complete replaces an admitted call's charge (a, admit's) by its
	// actual cost, its completion of completion tokens, at now, once its
	// answer is complete or its client left. Called with s.mu held.
	complete(now time.Time, c call, a admission, completion int)
	// report adds the limiter's state to st. Called with s.mu held.
	report(now time.Time, st *Stats)
	// capacity is what the limiter sustains for requests of promptTokens
	// and maxTokens from keys clients, in requests per second of model
	// time, and the formula in words (Config.Capacity).
	capacity(promptTokens, maxTokens, keys int) (float64, string)
	// style is how the limiter's deployment speaks beside its decisions.
	style() style
}

// style is what a limiter changes of the wire.
type style struct {
	// gateway: an API gateway — its own metered routes (messages, token
	// counting, images) beside chat, the Messages error envelope in the
	// azure and ietf dialects, a 403 when the key table is full, and in
	// azure retry-after only with GatewayRetryAfter.
	gateway bool
	// utilization: answers may carry azure-openai-deployment-utilization
	// (the PTU bucket's level; UtilizationHeader).
	utilization bool
}

// call is what a limiter decides on: the request's sizes, and what the
// route and the caller add to them. (Values, not pointers: what an
// interface's method is handed escapes to the heap.)
type call struct {
	prompt, cached, maxTokens int
	estimate                  float64   // ptu: the weighted estimate charged
	spill                     bool      // ptu: what the PTU refuses may spill to the standard deployment
	ks                        *keyState // gateway: the caller, whose ceilings it checks
	est                       int64     // gateway: the estimate charged (prompt + max_tokens; images)
	image                     bool      // gateway: image generation, which reports no tokens
	completion                int       // gateway: the completion's length given (request.Completion)
}

// admission is a limiter's decision on one call.
type admission struct {
	admitted bool
	viaBurst bool           // ptu: admitted over 100% on the burst allowance
	standard bool           // served (or refused) by the standard deployment
	spilled  bool           // ptu: admitted by the standard deployment
	wait     time.Duration  // refused: model time until a retry could be admitted
	lim      limits         // the limits of the deployment or caller that answered
	util     float64        // ptu: the utilization the call found
	remReq   int64          // the standard deployment's or gateway's remaining requests
	remTok   int64          // and tokens
	ticket   gatewayTicket  // gateway: what its completion corrects
	refusal  gatewayRefusal // gateway: the ceiling that refused
}

// newLimiter is the limiter c.Profile names, starting at start; std is
// the standard deployment spillover serves (nil: none) and n the counts
// it keeps.
func newLimiter(c Config, start time.Time, std *standard, n *counters) limiter {
	switch c.Profile {
	case ProfileGateway:
		g := &gatewayLimiter{cfg: c, n: n, orgs: make([]*ceiling, c.GatewayOrgs)}
		for i := range g.orgs {
			g.orgs[i] = newCeiling(c.GatewayOrgRPS, c.GatewayOrgTPM)
		}
		return g
	case ProfileWindow:
		return &windowLimiter{cfg: c, fixed: newWindow(c.WindowSize, int64(c.WindowLimit))}
	}
	p := &ptuLimiter{cfg: c, bucket: newBucket(c), standard: std, n: n}
	p.bucket.tenant = newNeighbour(c.Neighbour(), c.Seed, start)
	return p
}

// ptuLimiter is the PTU deployment: its bucket, and the standard
// deployment what it refuses may spill to.
type ptuLimiter struct {
	cfg      Config
	bucket   bucket
	standard *standard // nil without spillover
	n        *counters
}

func (p *ptuLimiter) track(keys *keyTable, key string) (*keyState, bool) {
	return keys.lookup(key, 1, nil)
}

func (p *ptuLimiter) admit(now time.Time, c call) (a admission) {
	a.util = p.bucket.utilization(now) // as the request found it
	v := p.bucket.admit(now, c.estimate)
	a.admitted, a.viaBurst, a.wait = v.admitted, v.viaBurst, v.wait
	if !v.admitted {
		// The refusal's cost: the work of judging it, RefusalCost of
		// the request's estimate, drains like any other.
		p.bucket.level += p.cfg.RefusalCost * c.estimate
	}
	a.lim = limits{tokens: p.bucket.quotaOf(now, p.cfg.BucketDepth), outputWeight: p.cfg.OutputWeight}
	if v.admitted || !c.spill {
		return a
	}
	sv := p.standard.admit(now, c.standardEstimate())
	a.standard = true
	a.remReq, a.remTok = sv.remainingRequests, sv.remainingTokens
	if sv.admitted {
		a.admitted, a.spilled = true, true
		a.lim = p.standard.limitsOf(now, false, false)
		p.n.spilled++
		return a
	}
	// A retry can succeed as soon as either deployment has room; the
	// answer reports the deployment that has it first.
	if sv.wait < a.wait {
		a.wait = sv.wait
		a.lim = p.standard.limitsOf(now, sv.requestsRefused, sv.tokensRefused)
	}
	p.n.spillRefused++
	return a
}

func (p *ptuLimiter) complete(now time.Time, c call, a admission, completion int) {
	if a.standard {
		return // standard deployments count estimated tokens
	}
	p.bucket.correct(now, p.cfg.EstimatedCost(c.prompt, c.cached, completion)-c.estimate)
}

func (p *ptuLimiter) report(now time.Time, st *Stats) {
	st.UtilizationPct = p.bucket.utilization(now)
	st.BurstAllowance = p.bucket.allowanceLeft(now)
	if n := p.bucket.tenant; n != nil {
		st.NeighbourBatches = n.batches
	}
}

// capacity: the bucket's drain D = PTU × TokensPerPTU / 60 weighted
// tokens a second over a request's mean actual cost, prompt +
// OutputWeight × the mean completion (drawn uniformly from ⌈0.3 m⌉ to m
// tokens).
func (p *ptuLimiter) capacity(promptTokens, maxTokens, _ int) (float64, string) {
	c := p.cfg
	lo, hi := completionRange(maxTokens)
	meanCompletion := float64(lo+hi) / 2
	cost := float64(promptTokens) + c.OutputWeight*meanCompletion
	rps := c.DrainTokensPerSecond() / cost
	return rps, fmt.Sprintf("drain %s weighted tokens/s (PTU %g × %g tokens/min ÷ 60) ÷ mean cost %s (prompt %d + %g × mean completion %s) = %s req/s",
		strconv.FormatFloat(c.DrainTokensPerSecond(), 'f', 1, 64), c.PTU, c.TokensPerPTU, strconv.FormatFloat(cost, 'f', 1, 64),
		promptTokens, c.OutputWeight, strconv.FormatFloat(meanCompletion, 'f', 1, 64), strconv.FormatFloat(rps, 'f', 3, 64))
}

func (p *ptuLimiter) style() style { return style{utilization: true} }

// windowLimiter is the window profile: WindowLimit requests per
// clock-aligned window of WindowSize.
type windowLimiter struct {
	cfg   Config
	fixed window
	owed  float64 // refusals' cost not yet a whole request (RefusalCost)
}

func (l *windowLimiter) track(keys *keyTable, key string) (*keyState, bool) {
	return keys.lookup(key, 1, nil)
}

// admit admits a request while the window has room, else refuses it with
// the time to the window's end.
func (l *windowLimiter) admit(now time.Time, _ call) (a admission) {
	l.fixed.arrive(now)
	q := l.fixed.quotaOf(now)
	if l.fixed.fits(1) {
		l.fixed.add(1)
		a.admitted = true
		q.remaining--
	} else {
		a.wait = max(q.reset, time.Nanosecond)
		q = q.exhausted()
		// A refusal's cost: RefusalCost of a request, counted in the
		// window once it adds up to a whole one.
		l.owed += l.cfg.RefusalCost
		for ; l.owed >= 1; l.owed-- {
			l.fixed.add(1)
		}
	}
	a.lim = limits{requests: q, outputWeight: l.cfg.OutputWeight}
	return a
}

// complete: a window counts requests, which completing does not change.
func (l *windowLimiter) complete(time.Time, call, admission, int) {}

func (l *windowLimiter) report(time.Time, *Stats) {}

// capacity: WindowLimit requests per WindowSize.
func (l *windowLimiter) capacity(_, _, _ int) (float64, string) {
	c := l.cfg
	rps := float64(c.WindowLimit) / c.WindowSize.Seconds()
	return rps, fmt.Sprintf("%d requests per %v window = %s req/s", c.WindowLimit, c.WindowSize, strconv.FormatFloat(rps, 'f', 3, 64))
}

func (l *windowLimiter) style() style { return style{} }

// gatewayLimiter is the gateway profile: every key's and organization's
// requests per second and tokens per minute.
type gatewayLimiter struct {
	cfg  Config
	orgs []*ceiling
	n    *counters
}

func (g *gatewayLimiter) track(keys *keyTable, key string) (*keyState, bool) {
	return keys.lookup(key, g.cfg.GatewayOrgs, func() *ceiling {
		return newCeiling(g.cfg.GatewayKeyRPS, g.cfg.GatewayKeyTPM)
	})
}

// admit checks the call's estimate against its organization, then its
// key (gatewayAdmit), and reports the tighter of their limits; a refusal
// advises the wait to the end of the refusing window.
func (g *gatewayLimiter) admit(now time.Time, c call) (a admission) {
	ks := c.ks
	a.ticket, a.refusal, a.admitted = g.gatewayAdmit(now, ks, c.est)
	a.wait = a.refusal.wait
	org := g.orgs[ks.org]
	if !a.admitted && g.cfg.RefusalCost > 0 {
		// A refusal's cost: RefusalCost of its estimate, charged to the
		// tokens of its organization and its key.
		cost := int64(math.Round(g.cfg.RefusalCost * float64(c.est)))
		ks.limits.tokens.arrive(now)
		org.tokens.add(cost)
		ks.limits.tokens.add(cost)
	}
	a.lim = gatewayLimits(now, org, ks.limits, a.refusal, !a.admitted)
	a.remReq = min(org.requests.remaining(), ks.limits.requests.remaining())
	a.remTok = min(org.tokens.remaining(), ks.limits.tokens.remaining())
	return a
}

// complete replaces the estimate with prompt + completion tokens where
// the counters are still on the minute it was charged to (an image keeps
// its estimate), and counts what could and could not be corrected.
func (g *gatewayLimiter) complete(_ time.Time, c call, a admission, completion int) {
	t := &a.ticket
	if c.image {
		t.reportsNoTokens = true
	}
	t.reconcile(int64(c.prompt + completion))
	switch {
	case t.reportsNoTokens:
	case t.correctedOrg && t.correctedKey:
		g.n.reconciledOrg++
		g.n.reconciledKey++
	default:
		if t.correctedOrg {
			g.n.reconciledOrg++
		}
		if t.correctedKey {
			g.n.reconciledKey++
		}
		g.n.reconcileMissed++
	}
}

func (g *gatewayLimiter) report(_ time.Time, st *Stats) {
	for i, o := range g.orgs {
		st.Orgs = append(st.Orgs, CeilingStats{Name: "org-" + strconv.Itoa(i), RequestsThisSecond: o.requests.used, TokensThisMinute: o.tokens.used})
	}
}

// capacity: the tightest ceiling: organizations × OrgRPS, keys × KeyRPS,
// and the token ceilings over the request's estimate (prompt +
// max_tokens), which they charge.
func (g *gatewayLimiter) capacity(promptTokens, maxTokens, keys int) (float64, string) {
	c := g.cfg
	est := float64(promptTokens + maxTokens)
	rps := min(float64(c.GatewayOrgs*c.GatewayOrgRPS), float64(c.GatewayOrgs)*float64(c.GatewayOrgTPM)/60/est,
		float64(keys*c.GatewayKeyRPS), float64(keys)*float64(c.GatewayKeyTPM)/60/est)
	return rps, fmt.Sprintf("the gateway's tightest ceiling for %d keys: min(orgs × %d req/s, orgs × %d tokens/min ÷ 60 ÷ %g, keys × %d req/s, keys × %d tokens/min ÷ 60 ÷ %g) = %s req/s",
		keys, c.GatewayOrgRPS, c.GatewayOrgTPM, est, c.GatewayKeyRPS, c.GatewayKeyTPM, est, strconv.FormatFloat(rps, 'f', 3, 64))
}

func (g *gatewayLimiter) style() style { return style{gateway: true} }

// standardEstimate is what the standard deployment charges a call: its
// estimated tokens, prompt − cached + max_tokens, unweighted.
func (c call) standardEstimate() int64 {
	return int64(c.prompt - c.cached + c.maxTokens)
}
