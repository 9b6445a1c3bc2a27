package policylab

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Spec is a client policy as the lab runs it: what the retry owner does
// with a refusal. Durations are model time; the lab scales them with the
// simulator's time scale.
type Spec struct {
	Name string // published name: a built-in's name, or the custom name
	Base string // the built-in it starts from

	Attempts int           // attempts per request, the first included
	Budget   time.Duration // whole request; 0 means none
	Jitter   float64       // wait × U[1, 1+Jitter]; 0 means none
	MaxWait  time.Duration // 0 means none beyond the budget
	// LongWaitBackoff: an advised wait over MaxWait is replaced by the
	// backoff (the OpenAI SDKs above 60 s) instead of ending the request.
	LongWaitBackoff bool
	IgnoreAdvice    bool // always back off, whatever the server advised
	// Backoff: Exponential(BackoffBase, BackoffCap) with full jitter, or
	// a constant BackoffBase when Constant.
	BackoffBase, BackoffCap time.Duration
	Constant                bool
	Fallback                bool // redirect to the fallback when the wait does not fit
	RedirectFirst           bool // redirect on the first refusal
	Cooldown                bool // shared cooldown across requests
	// SDK marks retries with X-Stainless-Retry-Count and returns the last
	// refusal as a response, as the OpenAI SDKs do.
	SDK bool
	// AppAttempts and AppDelay: an application retry loop around the
	// client (stacked owners): this many calls, AppDelay apart.
	AppAttempts int
	AppDelay    time.Duration
}

// Builtin describes one built-in policy for help texts.
type Builtin struct {
	Name, What string
}

// Builtins lists the built-in policies in the order `--policy` help and
// the default run use. fixed:D and poll:D take any duration.
var Builtins = []Builtin{
	{"none", "one attempt; a refusal is the answer"},
	{"honor", "honour retry-after-ms / retry-after, jitter ×[1, 1.2], 3 attempts within a 30 s budget"},
	{"honor-no-jitter", "honor without jitter: clients told the same wait return together"},
	{"fixed:1s", "ignore the header, retry after a fixed 1 s, 3 attempts"},
	{"backoff", "ignore the header, exponential backoff with full jitter (500 ms, cap 8 s), 5 attempts"},
	{"sdk", "what the OpenAI SDKs do: the header when it is at most 60 s, else exponential backoff; 2 retries, no jitter, no budget"},
	{"stacked", "an application's 3 retries (1 s apart) around sdk: two retry owners"},
	{"poll:250ms", "ignore the header, retry every 250 ms within the 30 s budget"},
	{"redirect", "straight to the fallback deployment on any refusal"},
	{"budget", "the documents' rule: sleep when the advised wait fits the 30 s budget, redirect when it does not, give up otherwise"},
	{"cooldown", "budget, plus a shared cooldown: after a refusal advising W, hold every new request until then"},
}

// DefaultPolicies are the policies run when none is named.
func DefaultPolicies() []string {
	names := make([]string, len(Builtins))
	for i, b := range Builtins {
		names[i] = b.Name
	}
	return names
}

const defaultBudget = 30 * time.Second

func honor(name string) Spec {
	return Spec{Name: name, Base: "honor", Attempts: 3, Budget: defaultBudget, Jitter: 0.2,
		BackoffBase: 500 * time.Millisecond, BackoffCap: 8 * time.Second}
}

// builtin returns the built-in named name.
func builtin(name string) (Spec, bool) {
	if kind, d, ok := strings.Cut(name, ":"); ok && (kind == "fixed" || kind == "poll") {
		wait, err := time.ParseDuration(d)
		if err != nil || wait <= 0 || wait > time.Minute {
			return Spec{}, false
		}
		s := honor(name)
		s.Base, s.IgnoreAdvice, s.Constant, s.BackoffBase, s.Jitter = kind, true, true, wait, 0
		if kind == "poll" {
			s.Attempts = min(MaxAttempts, int(math.Ceil(float64(defaultBudget)/float64(wait)))+1)
		}
		return s, true
	}
	s := honor(name)
	switch name {
	case "none":
		s = Spec{Name: name, Base: name, Attempts: 1, SDK: false}
	case "honor":
	case "honor-no-jitter":
		s.Jitter = 0
	case "backoff":
		s.IgnoreAdvice, s.Attempts, s.Jitter = true, 5, 0
	case "sdk", "stacked":
		s = Spec{Name: name, Base: name, Attempts: 3, MaxWait: time.Minute, LongWaitBackoff: true,
			BackoffBase: 500 * time.Millisecond, BackoffCap: 8 * time.Second, SDK: true}
		if name == "stacked" {
			s.AppAttempts, s.AppDelay = 4, time.Second
		}
	case "redirect":
		s.RedirectFirst, s.Fallback, s.Attempts = true, true, 2
	case "budget":
		s.Fallback = true
	case "cooldown":
		s.Fallback, s.Cooldown = true, true
	default:
		return Spec{}, false
	}
	s.Base = strings.SplitN(name, ":", 2)[0]
	return s, true
}

// MaxAttempts bounds a policy's attempts per request.
const MaxAttempts = 200

// ParseSpec parses a --policy value: a built-in name, or
// NAME=BASE,key=value,… where BASE is a built-in and the keys are
// attempts, budget, jitter, max-wait, fallback (on/off), cooldown (on/off),
// advice (honor/ignore) and backoff (BASE-CAP, e.g. 500ms-8s, or
// fixed-DURATION).
func ParseSpec(v string) (Spec, error) {
	v = strings.TrimSpace(v)
	if s, ok := builtin(v); ok {
		return s, nil
	}
	name, rest, custom := strings.Cut(v, "=")
	if !custom {
		return Spec{}, fmt.Errorf("unknown policy %q (built-in: %s; or NAME=BASE,key=value,…)", clip(v), strings.Join(DefaultPolicies(), ", "))
	}
	if err := checkName(name); err != nil {
		return Spec{}, err
	}
	parts := strings.Split(rest, ",")
	s, ok := builtin(strings.TrimSpace(parts[0]))
	if !ok {
		return Spec{}, fmt.Errorf("policy %s: unknown base %q (built-in: %s)", name, clip(parts[0]), strings.Join(DefaultPolicies(), ", "))
	}
	s.Name = name
	for _, kv := range parts[1:] {
		k, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return Spec{}, fmt.Errorf("policy %s: %q is not key=value", name, clip(kv))
		}
		if err := s.set(k, val); err != nil {
			return Spec{}, fmt.Errorf("policy %s: %s: %v", name, k, err)
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
		s.Attempts = n
	case "budget", "max-wait":
		d, err := parseDurationOrNone(v)
		if err != nil {
			return err
		}
		if k == "budget" {
			if d <= 0 && v != "none" {
				return fmt.Errorf("must be positive (or none)")
			}
			s.Budget = d
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
	case "fallback", "cooldown":
		on, err := parseOnOff(v)
		if err != nil {
			return err
		}
		if k == "fallback" {
			s.Fallback = on
		} else {
			s.Cooldown = on
		}
	case "advice":
		switch v {
		case "honor":
			s.IgnoreAdvice = false
		case "ignore":
			s.IgnoreAdvice = true
		default:
			return fmt.Errorf("%q: want honor or ignore", clip(v))
		}
	case "backoff":
		if d, ok := strings.CutPrefix(v, "fixed-"); ok {
			w, err := time.ParseDuration(d)
			if err != nil || w <= 0 {
				return fmt.Errorf("%q: want fixed-DURATION, e.g. fixed-1s", clip(v))
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
	default:
		return fmt.Errorf("unknown key (known: attempts, budget, jitter, max-wait, fallback, cooldown, advice, backoff)")
	}
	return nil
}

func (s *Spec) check() error {
	switch {
	case s.Attempts < 1 || s.Attempts > MaxAttempts:
		return fmt.Errorf("policy %s: attempts must be from 1 to %d", s.Name, MaxAttempts)
	case s.Budget < 0 || s.Budget > time.Hour:
		return fmt.Errorf("policy %s: budget must be positive and at most 1h, or none", s.Name)
	case s.MaxWait < 0 || s.MaxWait > time.Hour:
		return fmt.Errorf("policy %s: max-wait must be positive and at most 1h, or none", s.Name)
	case s.BackoffBase > time.Hour || s.BackoffCap > time.Hour:
		return fmt.Errorf("policy %s: backoff must be at most 1h", s.Name)
	}
	return nil
}

func parseDurationOrNone(v string) (time.Duration, error) {
	if v == "none" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration like 10s (or none)", clip(v))
	}
	return d, nil
}

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
// table and a file: lower-case letters, digits and - _ . :, at most 32.
func checkName(n string) error {
	if n == "" || len(n) > 32 {
		return fmt.Errorf("policy name %q: 1 to 32 characters", clip(n))
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
