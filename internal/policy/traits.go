package policy

import "github.com/ptuprobe/ptuprobe/admission"

// Traits are what a verdict reads of a policy — how it treats the advice,
// its jitter, its owners, its redirect, whether it adds anything to
// honouring the header, its caps — so that a rename can never change a
// verdict.
type Traits struct {
	// Models names the client a built-in models ("" for a policy under
	// the lab's fair caps); OwnCaps is true for it and for a custom spec
	// that set its own caps.
	Models  string
	OwnCaps bool
	// Advice is what it does with the advised wait.
	Advice Advice
	// Jitter: an honoured wait is stretched by U[1, 1+Jitter].
	Jitter float64
	// Owners counts the retry owners of one request: 2 for an
	// application's retry loop around an SDK's.
	Owners int
	// Redirect says when it sends to the fallback deployment.
	Redirect Redirect
	// Attempts is its attempts cap, the first included: its inner owner's
	// when it has two; Calls are the outer owner's calls of it (1 for
	// one owner), so a request sends at most Attempts × Calls.
	Attempts, Calls int
	// Extras: it adds state or a wait of its own to the advice it acts on
	// (a shared cooldown, slots, a pace, a throttle, a retry quota, an
	// adaptive rate, a backoff as the wait's floor, a fixed or
	// decorrelated backoff, an SDK's long-wait backoff).
	Extras bool
}

// Advice is what a policy does with the advised wait: admission.Advice,
// the one advice type. The names below are admission's, kept for the
// lab's verdicts that read them.
type Advice = admission.Advice

// The ways a policy treats the advice: admission's.
const (
	HonourAdvice = admission.HonourAdvice // waits what the server advised (and its jitter)
	IgnoreAdvice = admission.IgnoreAdvice // waits its own backoff, whatever was advised
	FloorAdvice  = admission.FloorAdvice  // the longer of the advice and its backoff
)

// Redirect is when a policy sends to the fallback deployment.
type Redirect int

// When a policy redirects.
const (
	NeverRedirect    Redirect = iota
	RedirectWhenLate          // when the advised wait does not fit its budget
	RedirectFirst             // on the first refusal, whatever the wait
)

// Traits are s's.
func (s Spec) Traits() Traits {
	t := Traits{Models: s.Models, OwnCaps: s.OwnCaps(), Advice: s.Advice, Jitter: s.Jitter, Owners: 1, Attempts: s.Attempts,
		Calls: max(s.AppAttempts, 1)}
	if s.AppAttempts > 1 {
		t.Owners = 2
	}
	switch {
	case s.RedirectFirst:
		t.Redirect = RedirectFirst
	case s.Fallback:
		t.Redirect = RedirectWhenLate
	}
	t.Extras = s.Cooldown || s.Slots || s.Pace || len(s.Gates) > 0 || s.Advice == admission.FloorAdvice ||
		s.Constant || s.Decorrelated || s.LongWaitBackoff
	return t
}

// PlainHonour reports whether t honours the header and adds nothing to
// it: one owner, under the fair caps, no redirect, no extras (its jitter
// aside).
func (t Traits) PlainHonour() bool {
	return t.Advice == HonourAdvice && !t.Extras && t.Owners == 1 && t.Models == "" && t.Redirect == NeverRedirect
}
