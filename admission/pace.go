package admission

import (
	"math"
	"sync"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// The recommended pacing, DefaultPaceConfig's.
const (
	// DefaultPaceDecrease is the factor a refusal cuts the rate by (0.5,
	// as TCP halves, left 15% of the deployment idle on the lab; see
	// docs/policies.md).
	DefaultPaceDecrease = 0.75
	// DefaultPaceIncrease is the rate's growth per second while its
	// requests are admitted: 2% a second, so a rate halved by a refusal
	// is back in about 35 s.
	DefaultPaceIncrease = 0.02
	// DefaultPaceMinRate is the lowest rate a refusal cuts to, requests
	// per second.
	DefaultPaceMinRate = 0.05
)

// PaceConfig tunes a Pace. Every field must be set (DefaultPaceConfig
// gives the recommended values).
type PaceConfig struct {
	// Decrease is what a refusal multiplies the rate by, in (0, 1).
	Decrease float64
	// Increase is the rate's relative growth per second of admitted
	// sending, in (0, 1].
	Increase float64
	// MinRate is the floor of the rate, requests per second (> 0).
	MinRate float64
}

// DefaultPaceConfig is the recommended pacing: cut to 3/4 on a refusal, grow
// 2% a second while admitted, never under 0.05 requests per second.
func DefaultPaceConfig() PaceConfig {
	return PaceConfig{Decrease: DefaultPaceDecrease, Increase: DefaultPaceIncrease, MinRate: DefaultPaceMinRate}
}

// paceWindow is how many recent sends measure the rate a client was
// sending at when it is first refused.
const paceWindow = 16

// Pace is a client-side limiter that learns the rate a deployment admits
// from what it answers, and sends at that rate: the proactive counterpart
// of honouring the advised wait. Every attempt a Transport with
// Policy.Pace sends to its primary target takes the next send slot, 1/rate
// after the one before; an attempt whose slot does not come within its
// request's budget is not sent (the request is given up, or redirected, at
// once: a controlled refusal that costs the deployment nothing).
//
// What it learns, and from whom:
//   - Additive increase, multiplicative decrease (TCP's AIMD, and the AIMD
//     limit of Netflix's concurrency-limits and its Go port
//     platinummonkey/go-concurrency-limits): a refusal multiplies the rate
//     by Decrease; admitted sending grows it by Increase a second. Growth
//     is relative to the rate, so a fleet of N clients that each get a
//     share converges at the same pace whatever the share is, and each
//     refusal cuts the client that met it, which is what makes the
//     shares fair.
//   - One cut per congestion event (TCP's fast recovery, Envoy's adaptive
//     concurrency filter measures in windows for the same reason): a
//     refusal of an attempt sent before the last cut does not cut again,
//     so the answers to a burst already in flight count once.
//   - The rate is a rate, not a concurrency limit (gRPC's retry throttling
//     and Envoy's filter limit concurrency): an LLM deployment's limit is
//     tokens per minute drained at a steady rate, and its latency is set by
//     the output length, so a concurrency limit would admit a different
//     rate for every response length.
//   - Until the first refusal the client is not paced (it has learned
//     nothing); the first refusal sets the rate to Decrease × the rate of
//     its last sends.
//   - The advised wait is a floor for every send, not only the refused
//     request's retry: after a refusal advising W nothing is sent before
//     W has passed (the shared cooldown's rule), so a client never
//     returns early.
//
// A Pace belongs to one client (one Transport, or several that share one
// deployment's quota from one process); it is safe for concurrent use.
type Pace struct {
	cfg PaceConfig

	mu      sync.Mutex
	rate    float64   // requests per second; 0 until the first refusal
	next    time.Time // the next free send slot
	hold    time.Time // nothing is sent before: the latest advised wait's end
	cut     time.Time // when the rate was last cut
	grown   time.Time // when the rate last grew
	sends   [paceWindow]time.Time
	nsends  int
	refused int64
	latency time.Duration // smoothed time admitted attempts take to be answered
	spread  time.Duration // its smoothed deviation
	gen     uint64        // counts the cuts: a slot taken before one is taken again
	last    time.Time     // the latest slot an attempt went in
}

// NewPace returns a Pace with cfg, or an error naming the field out of
// range.
func NewPace(cfg PaceConfig) (*Pace, error) {
	switch {
	case !(cfg.Decrease > 0 && cfg.Decrease < 1):
		return nil, valid.Errorf("Decrease", "must be between 0 and 1 (a refusal cuts the rate)")
	case !(cfg.Increase > 0 && cfg.Increase <= 1):
		return nil, valid.Errorf("Increase", "must be above 0 and at most 1 (growth per second)")
	case !(cfg.MinRate > 0) || math.IsInf(cfg.MinRate, 0):
		return nil, valid.Errorf("MinRate", "must be a positive number of requests per second")
	}
	return &Pace{cfg: cfg}, nil
}

// Rate is the rate the Pace sends at, requests per second; 0 while it has
// met no refusal (it does not pace yet).
func (p *Pace) Rate() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rate
}

// reserve takes the send slot of an attempt ready at now: when it may go.
// An attempt whose answer would not come before deadline (when deadline is
// set) — its slot plus the time admitted attempts take to be answered,
// mean and four deviations —
// takes none: ok is false and at is the slot it would have had. Sending
// it would spend the deployment's capacity on an answer too late to use.
func (p *Pace) reserve(now, deadline time.Time) (at time.Time, ok bool) {
	at, _, ok = p.reserveGen(now, deadline)
	return at, ok
}

// reserveGen is reserve, and the cut count the slot was taken under: a
// slot taken before a cut is spaced at the old rate, so its holder takes
// another (current reports whether it must).
func (p *Pace) reserveGen(now, deadline time.Time) (at time.Time, gen uint64, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	gen = p.gen
	at = now
	if p.hold.After(at) {
		at = p.hold
	}
	if p.rate > 0 && p.next.After(at) {
		at = p.next
	}
	if !deadline.IsZero() && !at.Add(p.latency+4*p.spread).Before(deadline) {
		return at, gen, false
	}
	if p.rate > 0 {
		p.next = at.Add(time.Duration(float64(time.Second) / p.rate))
	}
	p.sends[p.nsends%paceWindow] = at
	p.nsends++
	return at, gen, true
}

// confirm reports whether no cut came since the slot at was taken under
// gen; if none did, the attempt goes in it.
func (p *Pace) confirm(gen uint64, at time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gen != gen {
		return false
	}
	if at.After(p.last) {
		p.last = at
	}
	return true
}

// paceGrowthStep bounds the time one admitted answer grows the rate for,
// so a client that was idle does not come back at many times its rate.
const paceGrowthStep = 10 * time.Second

// admitted grows the rate for an attempt sent at sent and answered at now
// that was not refused, and learns how long answers take.
func (p *Pace) admitted(now, sent time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// TCP's retransmission timer estimate (RFC 6298): a smoothed mean and
	// deviation, the answer expected within mean + 4 deviations.
	if d := now.Sub(sent); d > 0 {
		if p.latency == 0 {
			p.latency, p.spread = d, d/2
		} else {
			dev := d - p.latency
			if dev < 0 {
				dev = -dev
			}
			p.spread += (dev - p.spread) / 4
			p.latency += (d - p.latency) / 8
		}
	}
	if p.rate == 0 {
		return
	}
	if p.grown.Before(p.cut) {
		p.grown = p.cut
	}
	if dt := now.Sub(p.grown); dt > 0 {
		p.rate *= 1 + p.cfg.Increase*min(dt, paceGrowthStep).Seconds()
		p.grown = now
	}
}

// refusedAt cuts the rate for an attempt sent at sent and refused at now
// with the advised wait (negative: none usable), and holds every send
// until the wait has passed.
func (p *Pace) refusedAt(now, sent time.Time, wait time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refused++
	if wait > 0 && now.Add(wait).After(p.hold) {
		p.hold = now.Add(wait)
	}
	if p.rate > 0 && sent.Before(p.cut) {
		return // an answer to what was sent before the last cut
	}
	if p.rate == 0 {
		p.rate = p.recentRate(now)
	}
	p.rate = max(p.rate*p.cfg.Decrease, p.cfg.MinRate)
	p.cut, p.grown = now, now
	// The slots taken at the old rate are void (their holders take new
	// ones); the next is 1/rate after the last one used, never sooner
	// than the old spacing had it.
	p.gen++
	p.next = p.last.Add(time.Duration(float64(time.Second) / p.rate))
	if p.next.Before(now) {
		p.next = now
	}
}

// recentRate is the rate of the last sends, at most paceWindow of them,
// up to now; with fewer than two, one per second.
func (p *Pace) recentRate(now time.Time) float64 {
	n := min(p.nsends, paceWindow)
	if n < 2 {
		return 1
	}
	first := p.sends[(p.nsends-n)%paceWindow]
	span := now.Sub(first).Seconds()
	if span <= 0 {
		return float64(n) // n sends at one instant: n per second
	}
	return float64(n) / span
}
