package admission

import (
	"math"
	"sync"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// The recommended pacing, DefaultPaceConfig's.
const (
	// defaultPaceDecrease is the factor a refusal cuts the rate by (0.5,
	// as TCP halves, left 15% of the deployment idle on the lab; see
	// docs/policies.md).
	defaultPaceDecrease = 0.75
	// defaultPaceIncrease is the rate's growth per second while its
	// requests are admitted: 2% a second, so a rate halved by a refusal
	// is back in about 35 s.
	defaultPaceIncrease = 0.02
	// defaultPaceMinRate is the lowest rate a refusal cuts to, requests
	// per second.
	defaultPaceMinRate = 0.05
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
	// Utilization, when above 0, is a utilization target in percent, at
	// most 100: the Pace then also learns from the capacity the target
	// reports on every answer, admitted ones included, and needs no
	// refusal to start (see Pace, "Pacing on reported utilization").
	// 0 (DefaultPaceConfig's) paces on refusals alone.
	Utilization float64
}

// DefaultPaceUtilization is a utilization target for PaceConfig.Utilization:
// 90%, a tenth of the deployment's depth kept free for the bursts of a
// fleet that reads late.
const DefaultPaceUtilization = 90

// DefaultPaceConfig is the recommended pacing: cut to 3/4 on a refusal, grow
// 2% a second while admitted, never under 0.05 requests per second.
func DefaultPaceConfig() PaceConfig {
	return PaceConfig{Decrease: defaultPaceDecrease, Increase: defaultPaceIncrease, MinRate: defaultPaceMinRate}
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
//     refusal of an attempt sent before the last cut, or in a send slot
//     taken before it, does not cut again, so the answers to a burst
//     already in flight count once — through a Coordinator too, where
//     the send times are each process's clock and the count of cuts a
//     slot was taken under is not.
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
// # Pacing on reported utilization
//
// With PaceConfig.Utilization a Pace reads what the target says of its
// capacity on every answer, as retryafter reads it: an Azure OpenAI
// provisioned deployment's azure-openai-deployment-utilization, else the
// used share of x-ratelimit-remaining-requests/-tokens (or their IETF and
// Anthropic peers) against their limits. A reading over the target, or a
// limit with nothing remaining, is a congestion signal like a refusal,
// before any refusal: the rate is cut (once per congestion event, as for
// refusals) and sends are held until the target is expected back under
// it — the exhausted limit's reset, or the decline between the two
// latest utilization readings extrapolated, never further ahead than
// they are apart; rising readings give no estimate and hold nothing. A
// reading is taken as of the attempt's send: the simulator reports the
// level the request found (Azure does not document when its header is
// measured, and a non-streamed answer brings it only with the whole
// completion). A reading at or under the target grows the rate as an
// admitted answer does.
//
// A Pace belongs to one client (one Transport, or several that share one
// deployment's quota from one process); it is safe for concurrent use.
type Pace struct {
	cfg PaceConfig

	mu      sync.Mutex
	state   paceState
	latency time.Duration // smoothed time admitted attempts take to be answered
	spread  time.Duration // its smoothed deviation
	// last is the latest utilization reading, by send time (in process:
	// only this client's own answers estimate the decline).
	last utilizationReading
}

// paceState is what a Pace learns of the deployment, which a Coordinator
// may keep instead (PaceStep): Pace keeps the answers' latency to itself.
type paceState struct {
	rate    float64   // requests per second; 0 until the first refusal
	next    time.Time // the next free send slot
	hold    time.Time // nothing is sent before: the latest advised wait's end
	cut     time.Time // when the rate was last cut
	grown   time.Time // when the rate last grew
	sends   [paceWindow]time.Time
	nsends  int
	refused int64
	gen     uint64    // counts the cuts: a slot taken before one is taken again
	last    time.Time // the latest slot an attempt went in
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
	case !(cfg.Utilization >= 0 && cfg.Utilization <= 100):
		return nil, valid.Errorf("Utilization", "must be a percentage from 0 (off) to 100, e.g. %v", DefaultPaceUtilization)
	}
	return &Pace{cfg: cfg}, nil
}

// Rate is the rate the Pace sends at, requests per second; 0 while it has
// met no refusal (it does not pace yet). With a Coordinator it is the
// in-process rate, which learns only while the Coordinator fails.
func (p *Pace) Rate() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state.rate
}

// apply takes step s: it fills in the Pace's settings and, for a reserve,
// the answers' expected time; it learns the latency of an admitted
// answer; then the step goes to shared (a Coordinator), or, when shared
// is nil or fails, to the in-process state. A shared reserve is held to
// the deadline as the in-process one is.
func (p *Pace) apply(shared func(PaceStep) (PaceResult, error), s PaceStep) PaceResult {
	p.mu.Lock()
	if s.Config == (PaceConfig{}) {
		s.Config = p.cfg // a step that sets its own is a reading's cut
	}
	switch s.Op {
	case PaceReserve:
		s.Margin = p.latency + 4*p.spread
	case PaceAdmitted:
		p.learn(s.Now, s.Sent)
	}
	if shared == nil {
		defer p.mu.Unlock()
		return p.state.step(s)
	}
	p.mu.Unlock()
	if r, err := shared(s); err == nil {
		if s.Op == PaceReserve && r.OK && !s.Deadline.IsZero() && !r.At.Add(s.Margin).Before(s.Deadline) {
			// Whatever the shared state says, a slot whose answer would
			// come after the deadline is not waited for: a local refusal.
			r.OK = false
		}
		return r
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state.step(s)
}

// learn updates the answers' expected time with one sent at sent and
// answered at now: TCP's retransmission timer estimate (RFC 6298), a
// smoothed mean and deviation, the answer expected within mean + 4
// deviations.
func (p *Pace) learn(now, sent time.Time) {
	d := now.Sub(sent)
	switch {
	case d <= 0:
	case p.latency == 0:
		p.latency, p.spread = d, d/2
	default:
		dev := d - p.latency
		if dev < 0 {
			dev = -dev
		}
		p.spread += (dev - p.spread) / 4
		p.latency += (d - p.latency) / 8
	}
}

// step applies one step to the state (PaceOp says what each does).
func (s *paceState) step(st PaceStep) PaceResult {
	switch st.Op {
	case PaceReserve:
		return s.reserve(st.Now, st.Deadline, st.Margin)
	case PaceConfirm:
		if s.gen != st.Gen {
			return PaceResult{}
		}
		if st.At.After(s.last) {
			s.last = st.At
		}
		return PaceResult{At: st.At, Gen: st.Gen, OK: true}
	case PaceAdmitted:
		s.grow(st.Now, st.Config)
	case PaceRefused:
		s.cutFor(st.Now, st.Sent, st.Gen, st.Wait, st.Config)
	}
	return PaceResult{}
}

func (s *paceState) reserve(now, deadline time.Time, margin time.Duration) PaceResult {
	at := now
	if s.hold.After(at) {
		at = s.hold
	}
	if s.rate > 0 && s.next.After(at) {
		at = s.next
	}
	if !deadline.IsZero() && !at.Add(margin).Before(deadline) {
		return PaceResult{At: at, Gen: s.gen}
	}
	if s.rate > 0 {
		s.next = at.Add(spacing(s.rate))
	}
	s.sends[s.nsends%paceWindow] = at
	s.nsends++
	return PaceResult{At: at, Gen: s.gen, OK: true}
}

// paceGrowthStep bounds the time one admitted answer grows the rate for,
// so a client that was idle does not come back at many times its rate.
const paceGrowthStep = 10 * time.Second

func (s *paceState) grow(now time.Time, cfg PaceConfig) {
	if s.rate == 0 {
		return
	}
	if s.grown.Before(s.cut) {
		s.grown = s.cut
	}
	if dt := now.Sub(s.grown); dt > 0 {
		s.rate *= 1 + cfg.Increase*seconds(min(dt, paceGrowthStep))
		s.grown = now
	}
}

func (s *paceState) cutFor(now, sent time.Time, gen uint64, wait time.Duration, cfg PaceConfig) {
	s.refused++
	if wait > 0 && now.Add(wait).After(s.hold) {
		s.hold = now.Add(wait)
	}
	if s.rate > 0 && (sent.Before(s.cut) || gen < s.gen) {
		// An answer to what was sent before the last cut, by the time or
		// by the count of cuts: with a Coordinator, the time is another
		// process's clock, which may run ahead of the one that cut.
		return
	}
	if s.rate == 0 {
		s.rate = s.recentRate(now)
	}
	s.rate = max(s.rate*cfg.Decrease, cfg.MinRate)
	s.cut, s.grown = now, now
	// The slots taken at the old rate are void (their holders take new
	// ones); the next is 1/rate after the last one used, never sooner
	// than the old spacing had it.
	s.gen++
	s.next = s.last.Add(spacing(s.rate))
	if s.next.Before(now) {
		s.next = now
	}
}

// recentRate is the rate of the last sends, at most paceWindow of them,
// up to now; with fewer than two, one per second.
func (s *paceState) recentRate(now time.Time) float64 {
	n := min(s.nsends, paceWindow)
	if n < 2 {
		return 1
	}
	first := s.sends[(s.nsends-n)%paceWindow]
	span := seconds(now.Sub(first))
	if span <= 0 {
		return float64(n) // n sends at one instant: n per second
	}
	return float64(n) / span
}

// The state's arithmetic is on whole microseconds, the unit a
// Coordinator's store keeps (admission/redisstate's scripts reckon in
// them), so that the in-process state and a shared one given the same
// steps answer the same slots: at nanoseconds, slots 1e9/rate apart drift
// a microsecond from the script's every few slots.

// spacing is the time between send slots at rate.
func spacing(rate float64) time.Duration {
	return time.Duration(math.Floor(1e6/rate)) * time.Microsecond
}

// seconds is d in seconds, from its whole microseconds.
func seconds(d time.Duration) float64 { return float64(d.Microseconds()) / 1e6 }
