package dispatch

import (
	"math/rand/v2"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
)

// RetryPolicy resends a request that was answered 429 with a usable
// advised wait, after that wait stretched by a random jitter: the
// operating rule of one retry owner that honours the header. The zero
// value and nil retry nothing.
//
// A retry is recorded as its own row with the same seq and the next
// attempt number; its intended_ms is when the policy meant to resend it
// (the 429's completion plus the jittered wait), its sent_ms when it went.
type RetryPolicy struct {
	// MaxAttempts is the most attempts per request, the first included;
	// 1 or less means no retry.
	MaxAttempts int
	// Jitter stretches each wait by a factor drawn uniformly from
	// [1, 1+Jitter], so clients told the same wait do not return at once.
	Jitter float64
	// MaxWait gives up on a request whose advised wait is longer.
	MaxWait time.Duration
	// Rand returns a number in [0, 1); nil means math/rand/v2.
	Rand func() float64
}

// next returns how long to wait before attempt+1, or false to stop.
func (p *RetryPolicy) next(r *results.Record, attempt int) (time.Duration, bool) {
	if p == nil || attempt >= p.MaxAttempts || !r.Is429() || !r.HasWait() {
		return 0, false
	}
	wait := time.Duration(r.WaitMS * float64(time.Millisecond))
	if p.MaxWait > 0 && wait > p.MaxWait {
		return 0, false
	}
	if p.Jitter > 0 {
		u := rand.Float64
		if p.Rand != nil {
			u = p.Rand
		}
		wait = time.Duration(float64(wait) * (1 + p.Jitter*u()))
	}
	return wait, true
}

// MaxAttemptsLimit bounds RetryPolicy.MaxAttempts: retries do not count
// against a run's request cap, so this keeps the total bounded.
const MaxAttemptsLimit = 10

// Validate reports a setting out of range as a *valid.Error naming the
// field; nil is a valid policy (no retries).
func (p *RetryPolicy) Validate() error {
	switch {
	case p == nil:
		return nil
	case p.MaxAttempts < 1 || p.MaxAttempts > MaxAttemptsLimit:
		return valid.Errorf("MaxAttempts", "must be between 1 and %d", MaxAttemptsLimit)
	case !(p.Jitter >= 0 && p.Jitter <= 1):
		return valid.Errorf("Jitter", "must be between 0 and 1")
	case p.MaxWait <= 0 || p.MaxWait > 24*time.Hour:
		return valid.Errorf("MaxWait", "must be positive and at most 24h")
	}
	return nil
}
