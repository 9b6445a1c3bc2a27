package policy

import (
	"net/http"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
)

// Env is what a Spec's admission.Policy gets from where it runs rather
// than from the Spec: the time scale of its durations, the clock and the
// randomness of its client, the state its fleet shares, and the fallback
// its redirects go to.
type Env struct {
	// Scale divides the Spec's durations: wall time against a simulator
	// running Scale times faster; 1 (or 0) on the lab's virtual clock and
	// against a real target.
	Scale float64
	// Clock and Rand are the client's (admission.Policy's); nil for the
	// runtime clock and math/rand.
	Clock admission.Clock
	Rand  func() float64
	// Slots are the retry slots the fleet's clients share in process (a
	// simulated fleet, or Transports of one process); nil gives a Spec
	// with Slots its own.
	Slots *admission.Slots
	// Coordinator keeps the fleet's shared state (admission.Coordinator:
	// in memory, or admission/redisstate's Redis); set only for a Spec
	// that Shares.
	Coordinator admission.Coordinator
	// Fallback is the redirect's target; set only for a Spec with
	// Fallback.
	Fallback func(*http.Request) (*http.Request, error)
}

// Build is the admission.Policy s describes for one client in env: the
// retry owner's settings, its own state (a Pace, a throttle, a retry
// quota, an adaptive rate: per client, as each is per Transport), the
// fleet's Slots or its own, and env's clock, randomness, Coordinator and
// fallback as s uses them.
func (s Spec) Build(env Env) (*admission.Policy, error) {
	p := s.policy(max(env.Scale, 0))
	p.Clock, p.Rand = env.Clock, env.Rand
	if s.Slots {
		p.Slots = env.Slots
		if p.Slots == nil {
			p.Slots = admission.NewSlots(s.SlotWidth)
		}
	}
	if s.Shares() {
		p.Coordinator = env.Coordinator
	}
	if s.Fallback {
		p.Fallback = env.Fallback
	}
	if err := s.perClient(p); err != nil {
		return nil, err
	}
	return p, nil
}

// policy is the admission.Policy's settings of s, its durations divided
// by scale (0 meaning 1).
func (s Spec) policy(scale float64) *admission.Policy {
	if scale == 0 {
		scale = 1
	}
	if s.Attempts == 1 && !s.Fallback {
		// One attempt: the refusal is the answer, as it is.
		return &admission.Policy{MaxAttempts: 1, ReturnLastResponse: true}
	}
	p := &admission.Policy{
		MaxAttempts:        s.Attempts,
		Budget:             scaled(s.Budget, scale),
		Jitter:             s.Jitter,
		MaxWait:            scaled(s.MaxWait, scale),
		RedirectFirst:      s.RedirectFirst,
		SharedCooldown:     s.Cooldown,
		ReturnLastResponse: s.SDK,
		MarkRetries:        s.SDK,
		Backoff:            admission.Exponential(admission.DefaultBackoffBase, admission.DefaultBackoffCap),
	}
	if s.LongWaitBackoff {
		p.OverMaxWait = admission.BackoffOverMaxWait
	}
	p.Advice = s.Advice
	if s.Advice == admission.FloorAdvice {
		p.MaxAboveBackoff = scaled(s.AboveBackoff, scale)
	}
	switch {
	case s.Constant:
		p.Backoff = admission.Constant(scaled(s.BackoffBase, scale))
	case s.Decorrelated:
		p.ChainedBackoff = admission.Decorrelated(scaled(s.BackoffBase, scale), scaled(s.BackoffCap, scale))
	case s.BackoffBase > 0:
		p.Backoff = admission.Exponential(scaled(s.BackoffBase, scale), scaled(s.BackoffCap, scale))
	}
	return p
}

// perClient gives p the state s keeps per client (per Transport): its
// own Pace and Gates (client-side throttling, a retry quota, an adaptive
// rate), as s has them.
func (s Spec) perClient(p *admission.Policy) error {
	var err error
	if s.Pace {
		cfg := admission.DefaultPaceConfig()
		cfg.Utilization = s.Utilization
		if p.Pace, err = admission.NewPace(cfg); err != nil {
			return err
		}
	}
	for _, newGate := range s.Gates {
		g, err := newGate()
		if err != nil {
			return err
		}
		p.Gates = append(p.Gates, g)
	}
	return nil
}

// Shares reports whether s has state a fleet can share through a
// Coordinator: a shared cooldown, Slots or a Pace.
func (s Spec) Shares() bool {
	return s.Attempts > 1 && (s.Cooldown || s.Slots || s.Pace)
}

func scaled(d time.Duration, scale float64) time.Duration {
	return time.Duration(float64(d) / scale)
}
