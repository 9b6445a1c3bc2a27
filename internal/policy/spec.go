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
	IgnoreAdvice    bool // always back off, whatever the server advised
	// Floor waits the longer of the advised wait and the backoff
	// (honor-backoff): the header as a floor.
	Floor bool
	// AboveBackoff, with Floor, bounds the advised wait to the backoff
	// plus this much (admission.Policy.MaxAboveBackoff: the AWS SDKs'
	// 2026 x-amz-retry-after, 5 s); 0 for none.
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
	// Throttle, RetryQuota and Adaptive: each client has its own
	// client-side throttling (admission.Throttle, the SRE book's), retry
	// quota (admission.StandardRetryQuota, the AWS SDKs') or adaptive
	// rate (admission.Adaptive, the AWS SDKs' adaptive mode).
	Throttle, RetryQuota, Adaptive bool
	// GRPCThrottling: the retry quota is gRPC's retry throttling
	// (admission.ThrottlingRetryQuota(GRPCMaxTokens, GRPCTokenRatio))
	// instead of the AWS SDKs'.
	GRPCThrottling bool
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

// Builtin describes one built-in policy for help texts.
type Builtin struct {
	Name, What string
}

// Builtins lists the built-in policies in the order `--policy` help and
// the default run use. fixed:D and poll:D take a duration from 50ms to 1m.
// Every retrying built-in but sdk and stacked runs under the lab's fair
// caps (--budget, --max-attempts).
var Builtins = []Builtin{
	{"none", "one attempt; a refusal is the answer (models a client without retries)"},
	{"honor", "honour retry-after-ms / retry-after, jitter ×[1, 1.2]"},
	{"honor-no-jitter", "honor without jitter: clients told the same wait return together"},
	{"fixed:1s", "ignore the header, retry after a fixed 1 s"},
	{"backoff", "ignore the header, exponential backoff with full jitter (500 ms, cap 8 s)"},
	{"poll:250ms", "ignore the header, retry every 250 ms"},
	{"sdk", "models the OpenAI SDKs: the header when it is at most 60 s, else backoff; 2 retries, no jitter, no budget"},
	{"stacked", "models an application's 3 retries (1 s apart) around sdk: two retry owners"},
	{"redirect", "straight to the fallback deployment on any refusal"},
	{"budget", "the documents' rule: sleep when the advised wait fits the budget, else redirect, else give up"},
	{"cooldown", "budget, plus a shared cooldown: after a refusal advising W, hold the client's requests until then"},
	{"honor-backoff", "wait max(advised × jitter, exponential backoff with full jitter): the header as a floor"},
	{"slots", "honour the header; refused clients of the fleet take distinct retry slots 100 ms apart"},
	{"pace", "learn the admitted rate (AIMD on refusals) and send at it, queueing within the budget; honour the header"},
	// The field's best-known client policies, each under the lab's fair
	// caps; docs/policies.md cites each one's source.
	{"honor-full-jitter", "honour the header with full jitter over it: advised × U[1, 2]"},
	{"sre-throttle", "honor, plus the SRE book's client-side throttling: reject locally with p = max(0, (requests − 2·accepts)/(requests + 1)) over 2 min"},
	{"honor-aws-quota", "honor, plus the AWS SDKs' standard retry quota: 500 tokens, a retry takes 5, a success gives 1 back; none left, no retry (was retry-quota)"},
	{"honor-aws-adaptive", "honor, plus the AWS SDKs' adaptive rate limiter: each send takes a token of a bucket filled at a CUBIC rate (β 0.7, C 0.4) (was adaptive)"},
	{"decorrelated", "ignore the header, decorrelated jitter (AWS blog): wait U[500 ms, 3 × the last wait], cap 8 s"},
	{"utilization", "pace, learning also from the utilization the target reports (over 90%, or nothing remaining, is congestion)"},
	// The AWS SDKs' retry modes whole, and gRPC's retry throttling;
	// docs/policies.md cites the source lines each follows.
	{"aws-standard", "models the AWS SDKs' standard mode, 2026 update: 3 attempts, the 500-token quota (a throttle's retry takes 5), full-jitter backoff from 1 s (cap 20 s), the advised wait honoured between the backoff and 5 s above it; no budget"},
	{"aws-standard-pre2026", "models the AWS SDKs' standard mode before 2026 (aws-sdk-go-v2): 3 attempts, the 500-token quota, full-jitter backoff U[0, 2^i s) (cap 20 s), the header ignored; no budget"},
	{"aws-adaptive", "models the AWS SDKs' adaptive mode: aws-standard plus the client-side rate limiter (a token bucket filled at a CUBIC rate, β 0.7, C 0.4)"},
	{"grpc-throttle", "honor (gRPC's server pushback), plus gRPC's retry throttling (proposal A6): maxTokens 10, a failure takes 1, a success gives 0.1; retries only above 5"},
	{"sdk-one-owner", "models the OpenAI SDKs alone with stacked's whole attempt count, 12: one owner, to compare with stacked's two"},
}

// renamed are built-ins' old names, still accepted for one more round
// (as docs/flags.md's renamed flags are): the policy they name publishes
// its new name.
var renamed = map[string]string{
	"retry-quota": "honor-aws-quota",
	"adaptive":    "honor-aws-adaptive",
}

// The gRPC retry throttling grpc-throttle runs: proposal A6 sets no
// default; these are the gRPC retry guide's example (grpc.io, "Retry").
const (
	GRPCMaxTokens  = 10
	GRPCTokenRatio = 0.1
)

// stackedCalls are stacked's application calls (its 3 retries and the
// first), each an SDK call of 3 attempts: sdk-one-owner has their product.
const stackedCalls = 4

// DefaultPolicies are the policies run when none is named.
func Defaults() []string { return names(Builtins) }

// names are bs' names.
func names(bs []Builtin) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Name
	}
	return out
}

// builtinNames lists every built-in, for an error naming them.
func builtinNames() string { return strings.Join(Defaults(), ", ") }

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

func honor(name string) Spec {
	return Spec{Name: name, Base: "honor", Attempts: DefaultMaxAttempts, Budget: DefaultBudget, Jitter: 0.2,
		BackoffBase: 500 * time.Millisecond, BackoffCap: 8 * time.Second}
}

// builtin returns the built-in named name.
func builtin(name string) (Spec, bool) {
	if kind, d, ok := strings.Cut(name, ":"); ok && (kind == "fixed" || kind == "poll") {
		wait, err := time.ParseDuration(d)
		if err != nil || wait < minPollWait || wait > time.Minute {
			return Spec{}, false
		}
		s := honor(name)
		s.Base, s.IgnoreAdvice, s.Constant, s.BackoffBase, s.Jitter = kind, true, true, wait, 0
		return s, true
	}
	if n, ok := renamed[name]; ok {
		name = n
	}
	s := honor(name)
	switch name {
	case "none":
		s = Spec{Name: name, Base: name, Attempts: 1, Models: "a client without retries"}
	case "honor", "pace":
		s.Pace = name == "pace"
	case "honor-no-jitter":
		s.Jitter = 0
	case "honor-full-jitter":
		s.Jitter = 1
	case "sre-throttle":
		s.Throttle = true
	case "honor-aws-quota":
		s.RetryQuota = true
	case "honor-aws-adaptive":
		s.Adaptive = true
	case "grpc-throttle":
		s.RetryQuota, s.GRPCThrottling = true, true
	case "aws-standard", "aws-adaptive":
		// The 2026 update: aws-sdk-go-v2's backoffDelay2026 with a
		// throttle's 1 s base, the exponent from 0, the cap before the
		// jitter (admission.Exponential's), and x-amz-retry-after held
		// between the backoff and 5 s above it.
		s = Spec{Name: name, Attempts: 3, Floor: true, AboveBackoff: 5 * time.Second,
			BackoffBase: time.Second, BackoffCap: 20 * time.Second, RetryQuota: true, Adaptive: name == "aws-adaptive",
			Models: "the AWS SDKs' " + strings.TrimPrefix(name, "aws-") + " retry mode (2026 update)"}
	case "aws-standard-pre2026":
		// backoffDelayLegacy: rand × 2^attempt s, attempt 1 on the first
		// retry; no header read.
		s = Spec{Name: name, Attempts: 3, IgnoreAdvice: true, BackoffBase: 2 * time.Second, BackoffCap: 20 * time.Second,
			RetryQuota: true, Models: "the AWS SDKs' standard retry mode before 2026"}
	case "decorrelated":
		s.IgnoreAdvice, s.Jitter, s.Decorrelated = true, 0, true
	case "utilization":
		s.Pace, s.Utilization = true, admission.DefaultPaceUtilization
	case "backoff":
		s.IgnoreAdvice, s.Jitter = true, 0
	case "honor-backoff":
		s.Floor = true
	case "slots":
		s.Slots, s.SlotWidth, s.Jitter = true, admission.DefaultSlotWidth, 0
	case "sdk", "stacked", "sdk-one-owner":
		s = Spec{Name: name, Base: name, Attempts: 3, MaxWait: time.Minute, LongWaitBackoff: true,
			BackoffBase: 500 * time.Millisecond, BackoffCap: 8 * time.Second, SDK: true,
			Models: "the OpenAI SDKs (2 retries, no budget)"}
		switch name {
		case "stacked":
			s.AppAttempts, s.AppDelay = stackedCalls, time.Second
			s.Models = "an application's 3 retries around the OpenAI SDKs"
		case "sdk-one-owner":
			s.Attempts = s.Attempts * stackedCalls
			s.Models = "the OpenAI SDKs alone, with stacked's attempts"
		}
	case "redirect":
		s.RedirectFirst, s.Fallback = true, true
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

// isBuiltinName reports whether n is a built-in's name, fixed:D and
// poll:D included, so a custom policy cannot shadow one.
func isBuiltinName(n string) bool {
	if kind, _, ok := strings.Cut(n, ":"); ok && (kind == "fixed" || kind == "poll") {
		return true
	}
	_, ok := builtin(n)
	return ok
}

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
		switch v {
		case "honor":
			s.IgnoreAdvice, s.Floor = false, false
		case "ignore":
			s.IgnoreAdvice, s.Floor = true, false
		case "floor":
			s.IgnoreAdvice, s.Floor = false, true
		default:
			return fmt.Errorf("%q: want honor, ignore or floor", clip(v))
		}
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
	case s.Slots && s.IgnoreAdvice:
		return fmt.Errorf("policy %s: slots act on the advised wait, so not with advice=ignore", s.Name)
	case s.Cooldown && s.IgnoreAdvice:
		return fmt.Errorf("policy %s: cooldown acts on the advised wait, so not with advice=ignore", s.Name)
	}
	return nil
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
