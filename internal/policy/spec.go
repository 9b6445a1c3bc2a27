package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
)

// Spec is a client policy as the lab runs it: what the retry owner does
// with a refusal. Durations are model time on the simulator.
type Spec struct {
	Name string // published name: a built-in's name, or the custom name
	Base string // the built-in it starts from
	// Models names the client a built-in models, which keeps that
	// client's own caps instead of the lab's fair ones (none, sdk,
	// stacked); "" for a policy under the fair caps.
	Models string

	Attempts int           // attempts per request, the first included
	Budget   time.Duration // whole request; 0 means none (modelled clients only)
	Jitter   float64       // wait × U[1, 1+Jitter]; 0 means none
	MaxWait  time.Duration // 0 means none beyond the budget
	// LongWaitBackoff: an advised wait over MaxWait is replaced by the
	// backoff (the OpenAI SDKs above 60 s) instead of ending the request.
	LongWaitBackoff bool
	// Advice is what it does with the advised wait: honour it, ignore it
	// (always back off) or take it as a floor under the backoff
	// (honor-backoff).
	Advice admission.Advice
	// AboveBackoff, with FloorAdvice, bounds the advised wait to the
	// backoff plus this much (admission.Policy.MaxAboveBackoff: the AWS
	// SDKs' 2026 x-amz-retry-after, 5 s); 0 for none.
	AboveBackoff time.Duration
	// Backoff: Exponential(BackoffBase, BackoffCap) with full jitter, or
	// a constant BackoffBase when Constant.
	BackoffBase, BackoffCap time.Duration
	Constant                bool
	Fallback                bool // redirect to the fallback when the wait does not fit
	RedirectFirst           bool // redirect on the first refusal
	Cooldown                bool // shared cooldown across one client's requests
	// Slots: refused requests of the whole fleet take distinct retry
	// slots SlotWidth apart (admission.Slots).
	Slots     bool
	SlotWidth time.Duration
	// Pace: each client paces its sends at the rate it learns
	// (admission.Pace).
	Pace bool
	// Utilization: the Pace also learns from the utilization the target
	// reports, this target in percent (admission.PaceConfig.Utilization);
	// 0 for none.
	Utilization float64
	// Gates make each client's own admission.Gates, in the order it asks
	// them: client-side throttling (admission.Throttle, the SRE book's), a
	// retry quota (admission.RetryQuota: the AWS SDKs', gRPC's retry
	// throttling), an adaptive rate (admission.Adaptive, the AWS SDKs'
	// adaptive mode). Each is per client, as each is per Transport.
	Gates []NewGate
	// Decorrelated: the backoff is decorrelated jitter from BackoffBase
	// to BackoffCap (admission.Decorrelated).
	Decorrelated bool
	// SDK marks retries with X-Stainless-Retry-Count and returns the last
	// refusal as a response, as the OpenAI SDKs do.
	SDK bool
	// AppAttempts and AppDelay: an application retry loop around the
	// client (stacked owners): this many calls, AppDelay apart.
	AppAttempts int
	AppDelay    time.Duration

	// ownAttempts and ownBudget: a custom spec set them, so the lab's fair
	// caps do not replace them.
	ownAttempts, ownBudget bool
}

// Fair caps of the lab when no flag changes them.
const (
	DefaultBudget      = 30 * time.Second
	DefaultMaxAttempts = 20
)

// MaxAttempts bounds a policy's attempts per request; MaxPolicies the
// policies of one lab.
const (
	MaxAttempts = 200
	MaxPolicies = 32
)

// minPollWait is the shortest fixed or polling wait a spec accepts.
const minPollWait = 50 * time.Millisecond

// Fair gives s the lab's fair caps, budget and attempts, unless it models
// a named client or is a custom spec that set its own.
func (s Spec) Fair(budget time.Duration, attempts int) Spec {
	if s.Models != "" {
		return s
	}
	if !s.ownBudget {
		s.Budget = budget
	}
	if !s.ownAttempts {
		s.Attempts = attempts
	}
	return s
}

// OwnCaps reports whether s runs under caps of its own rather than the
// lab's: a modelled client, or a custom spec that set them.
func (s Spec) OwnCaps() bool { return s.Models != "" || s.ownAttempts || s.ownBudget }

// Parse parses a --policy value: a built-in name, or
// NAME=BASE,key=value,… where BASE is a built-in and the keys are
// attempts, budget, jitter, max-wait, fallback (on/off), cooldown (on/off),
// advice (honor/ignore/floor), backoff (BASE-CAP, e.g. 500ms-8s, or
// fixed-DURATION), slots (off or a width such as 100ms) and pace (on/off).
// A key given twice, a name that is a built-in's, or a bad name is an
// error.
func Parse(v string) (Spec, error) {
	v = strings.TrimSpace(v)
	if s, ok := builtin(v); ok {
		return s, nil
	}
	name, rest, custom := strings.Cut(v, "=")
	if !custom {
		return Spec{}, fmt.Errorf("unknown policy %q (built-in: %s; or NAME=BASE,key=value,…)", clip(v), builtinNames())
	}
	if err := checkName(name); err != nil {
		return Spec{}, err
	}
	if isBuiltinName(name) {
		return Spec{}, fmt.Errorf("policy name %q is a built-in's: choose another", name)
	}
	parts := strings.Split(rest, ",")
	s, ok := builtin(strings.TrimSpace(parts[0]))
	if !ok {
		return Spec{}, fmt.Errorf("policy %s: unknown base %q (built-in: %s)", name, clip(parts[0]), builtinNames())
	}
	s.Name = name
	seen := map[string]bool{}
	for _, kv := range parts[1:] {
		k, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return Spec{}, fmt.Errorf("policy %s: %q is not key=value", name, clip(kv))
		}
		if seen[k] {
			return Spec{}, fmt.Errorf("policy %s: %s is given twice", name, clip(k))
		}
		seen[k] = true
		if err := s.set(k, val); err != nil {
			return Spec{}, fmt.Errorf("policy %s: %s: %v", name, clip(k), err)
		}
	}
	return s, s.check()
}

func (s *Spec) set(k, v string) error {
	switch k {
	case "attempts":
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", clip(v))
		}
		s.Attempts, s.ownAttempts = n, true
	case "budget", "max-wait":
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("%q is not a positive duration like 10s", clip(v))
		}
		if k == "budget" {
			s.Budget, s.ownBudget = d, true
		} else {
			s.MaxWait = d
		}
	case "jitter":
		if v == "none" {
			s.Jitter = 0
			return nil
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 0 && f <= 1) {
			return fmt.Errorf("%q is not a number from 0 to 1", clip(v))
		}
		s.Jitter = f
	case "fallback", "cooldown", "pace":
		on, err := parseOnOff(v)
		if err != nil {
			return err
		}
		switch k {
		case "fallback":
			s.Fallback = on
		case "cooldown":
			s.Cooldown = on
		default:
			s.Pace = on
		}
	case "slots":
		if v == "off" {
			s.Slots = false
			return nil
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > time.Minute {
			return fmt.Errorf("%q: want off or a width from 1ms to 1m, e.g. 100ms", clip(v))
		}
		s.Slots, s.SlotWidth = true, d
	case "advice":
		s.AboveBackoff = 0 // a bound on the advice above the backoff is FloorAdvice's own
		a, ok := adviceOf[v]
		if !ok {
			return fmt.Errorf("%q: want honor, ignore or floor", clip(v))
		}
		s.Advice = a
	case "backoff":
		return s.setBackoff(v)
	default:
		return fmt.Errorf("unknown key (known: attempts, budget, jitter, max-wait, fallback, cooldown, advice, backoff, slots, pace)")
	}
	return nil
}

func (s *Spec) setBackoff(v string) error {
	if d, ok := strings.CutPrefix(v, "fixed-"); ok {
		w, err := time.ParseDuration(d)
		if err != nil || w < minPollWait {
			return fmt.Errorf("%q: want fixed-DURATION of at least %v, e.g. fixed-1s", clip(v), minPollWait)
		}
		s.Constant, s.BackoffBase = true, w
		return nil
	}
	lo, hi, ok := strings.Cut(v, "-")
	base, err1 := time.ParseDuration(lo)
	capd, err2 := time.ParseDuration(hi)
	if !ok || err1 != nil || err2 != nil || base <= 0 || capd < base {
		return fmt.Errorf("%q: want BASE-CAP, e.g. 500ms-8s, or fixed-DURATION", clip(v))
	}
	s.Constant, s.BackoffBase, s.BackoffCap = false, base, capd
	return nil
}

func (s *Spec) check() error {
	switch {
	case s.Attempts < 1 || s.Attempts > MaxAttempts:
		return fmt.Errorf("policy %s: attempts must be from 1 to %d", s.Name, MaxAttempts)
	case s.Budget < 0 || s.Budget > time.Hour:
		return fmt.Errorf("policy %s: budget must be positive and at most 1h", s.Name)
	case s.MaxWait < 0 || s.MaxWait > time.Hour:
		return fmt.Errorf("policy %s: max-wait must be positive and at most 1h", s.Name)
	case s.BackoffBase > time.Hour || s.BackoffCap > time.Hour:
		return fmt.Errorf("policy %s: backoff must be at most 1h", s.Name)
	case s.Slots && s.Advice == admission.IgnoreAdvice:
		return fmt.Errorf("policy %s: slots act on the advised wait, so not with advice=ignore", s.Name)
	case s.Cooldown && s.Advice == admission.IgnoreAdvice:
		return fmt.Errorf("policy %s: cooldown acts on the advised wait, so not with advice=ignore", s.Name)
	}
	return nil
}

// adviceOf is the advice key's values.
var adviceOf = map[string]admission.Advice{"honor": admission.HonourAdvice, "ignore": admission.IgnoreAdvice, "floor": admission.FloorAdvice}

func parseOnOff(v string) (bool, error) {
	switch v {
	case "on", "true", "yes":
		return true, nil
	case "off", "false", "no":
		return false, nil
	}
	return false, fmt.Errorf("%q: want on or off", clip(v))
}

// checkName accepts a policy name that is safe in a CSV cell, a Markdown
// table and a file: a lower-case letter, then lower-case letters, digits
// and - _ . :, at most 32 in all.
func checkName(n string) error {
	if n == "" || len(n) > 32 {
		return fmt.Errorf("policy name %q: 1 to 32 characters", clip(n))
	}
	if n[0] < 'a' || n[0] > 'z' {
		return fmt.Errorf("policy name %q: must start with a lower-case letter", clip(n))
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:", r)) {
			return fmt.Errorf("policy name %q: lower-case letters, digits and - _ . : only", clip(n))
		}
	}
	return nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
