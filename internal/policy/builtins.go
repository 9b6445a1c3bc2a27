package policy

import (
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
)

// Builtin is one built-in policy: its name, what it does (for help
// texts), and how it differs from honor.
type Builtin struct {
	Name, What string
	// set makes s, honor under the built-in's name, the built-in; wait is
	// the duration of fixed:D and poll:D.
	set func(s *Spec, wait time.Duration)
}

// Builtins lists the built-in policies in the order `--policy` help and
// the default run use: the one list of them. fixed:D and poll:D take a
// duration from 50ms to 1m. Every retrying built-in but those that model
// a named client (Spec.Models) runs under the lab's fair caps (--budget,
// --max-attempts). A new admission algorithm is one line here: its Gate
// in Spec.Gates (docs/policies.md, "Adding a policy").
var Builtins = []Builtin{
	{"none", "one attempt; a refusal is the answer (models a client without retries)", func(s *Spec, _ time.Duration) {
		*s = Spec{Attempts: 1, Models: "a client without retries"}
	}},
	{"honor", "honour retry-after-ms / retry-after, jitter ×[1, 1.2]", func(*Spec, time.Duration) {}},
	{"honor-no-jitter", "honor without jitter: clients told the same wait return together", func(s *Spec, _ time.Duration) { s.Jitter = 0 }},
	{"fixed:1s", "ignore the header, retry after a fixed 1 s", fixed},
	{"backoff", "ignore the header, exponential backoff with full jitter (500 ms, cap 8 s)", func(s *Spec, _ time.Duration) {
		s.Advice, s.Jitter = admission.IgnoreAdvice, 0
	}},
	{"poll:250ms", "ignore the header, retry every 250 ms", fixed},
	{"sdk", "models the OpenAI SDKs: the header when it is at most 60 s, else backoff; 2 retries, no jitter, no budget", sdk(1, 0)},
	{"stacked", "models an application's 3 retries (1 s apart) around sdk: two retry owners", sdk(1, stackedCalls)},
	{"redirect", "straight to the fallback deployment on any refusal", func(s *Spec, _ time.Duration) { s.RedirectFirst, s.Fallback = true, true }},
	{"budget", "the documents' rule: sleep when the advised wait fits the budget, else redirect, else give up", func(s *Spec, _ time.Duration) { s.Fallback = true }},
	{"cooldown", "budget, plus a shared cooldown: after a refusal advising W, hold the client's requests until then", func(s *Spec, _ time.Duration) {
		s.Fallback, s.Cooldown = true, true
	}},
	{"honor-backoff", "wait max(advised × jitter, exponential backoff with full jitter): the header as a floor", func(s *Spec, _ time.Duration) {
		s.Advice = admission.FloorAdvice
	}},
	{"slots", "honour the header; refused clients of the fleet take distinct retry slots 100 ms apart", func(s *Spec, _ time.Duration) {
		s.Slots, s.SlotWidth, s.Jitter = true, admission.DefaultSlotWidth, 0
	}},
	{"pace", "learn the admitted rate (AIMD on refusals) and send at it, queueing within the budget; honour the header", func(s *Spec, _ time.Duration) { s.Pace = true }},
	// The field's best-known client policies, each under the lab's fair
	// caps; docs/policies.md cites each one's source.
	{"honor-full-jitter", "honour the header with full jitter over it: advised × U[1, 2]", func(s *Spec, _ time.Duration) { s.Jitter = 1 }},
	{"sre-throttle", "honor, plus the SRE book's client-side throttling: reject locally with p = max(0, (requests − 2·accepts)/(requests + 1)) over 2 min", gates(throttle)},
	{"honor-aws-quota", "honor, plus the AWS SDKs' standard retry quota: 500 tokens, a retry takes 5, a success gives 1 back; none left, no retry (was retry-quota)", gates(awsQuota)},
	{"honor-aws-adaptive", "honor, plus the AWS SDKs' adaptive rate limiter: each send takes a token of a bucket filled at a CUBIC rate (β 0.7, C 0.4) (was adaptive)", gates(adaptive)},
	{"decorrelated", "ignore the header, decorrelated jitter (AWS blog): wait U[500 ms, 3 × the last wait], cap 8 s", func(s *Spec, _ time.Duration) {
		s.Advice, s.Jitter, s.Decorrelated = admission.IgnoreAdvice, 0, true
	}},
	{"utilization", "pace, learning also from the utilization the target reports (over 90%, or nothing remaining, is congestion)", func(s *Spec, _ time.Duration) {
		s.Pace, s.Utilization = true, admission.DefaultPaceUtilization
	}},
	// The AWS SDKs' retry modes whole, and gRPC's retry throttling;
	// docs/policies.md cites the source lines each follows.
	{"aws-standard", "models the AWS SDKs' standard mode, 2026 update: 3 attempts, the 500-token quota (a throttle's retry takes 5), full-jitter backoff from 1 s (cap 20 s), the advised wait honoured between the backoff and 5 s above it; no budget", aws2026(awsQuota)},
	{"aws-standard-pre2026", "models the AWS SDKs' standard mode before 2026 (aws-sdk-go-v2): 3 attempts, the 500-token quota, full-jitter backoff U[0, 2^i s) (cap 20 s), the header ignored; no budget", awsPre2026},
	{"aws-adaptive", "models the AWS SDKs' adaptive mode: aws-standard plus the client-side rate limiter (a token bucket filled at a CUBIC rate, β 0.7, C 0.4)", aws2026(adaptive, awsQuota)},
	{"grpc-throttle", "honor (gRPC's server pushback), plus gRPC's retry throttling (proposal A6): maxTokens 10, a failure takes 1, a success gives 0.1; retries only above 5", gates(grpcQuota)},
	{"sdk-one-owner", "models the OpenAI SDKs alone with stacked's whole attempt count, 12: one owner, to compare with stacked's two", sdk(stackedCalls, 0)},
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

// NewGate makes one client's admission.Gate.
type NewGate func() (admission.Gate, error)

// gate is a NewGate of an admission constructor and its configuration.
func gate[C any, G admission.Gate](newG func(C) (G, error), cfg C) NewGate {
	return func() (admission.Gate, error) {
		g, err := newG(cfg)
		if err != nil {
			return nil, err
		}
		return g, nil
	}
}

// The Gates the built-ins give each client.
var (
	throttle  = gate(admission.NewThrottle, admission.DefaultThrottleConfig())
	awsQuota  = gate(admission.NewRetryQuota, admission.StandardRetryQuota())
	grpcQuota = gate(admission.NewRetryQuota, admission.ThrottlingRetryQuota(GRPCMaxTokens, GRPCTokenRatio))
	adaptive  = gate(admission.NewAdaptive, admission.DefaultAdaptiveConfig())
)

// gates is honor plus each client's gs.
func gates(gs ...NewGate) func(*Spec, time.Duration) {
	return func(s *Spec, _ time.Duration) { s.Gates = gs }
}

// fixed is fixed:D and poll:D: the header ignored, a constant wait D.
func fixed(s *Spec, wait time.Duration) {
	s.Advice, s.Constant, s.BackoffBase, s.Jitter = admission.IgnoreAdvice, true, wait, 0
}

// sdk models the OpenAI SDKs, with calls × their 3 attempts in one owner
// (sdk-one-owner), or inside an application's loop of appCalls calls 1 s
// apart (stacked).
func sdk(calls, appCalls int) func(*Spec, time.Duration) {
	return func(s *Spec, _ time.Duration) {
		*s = Spec{Attempts: 3 * calls, MaxWait: time.Minute, LongWaitBackoff: true,
			BackoffBase: 500 * time.Millisecond, BackoffCap: 8 * time.Second, SDK: true,
			Models: "the OpenAI SDKs (2 retries, no budget)"}
		switch {
		case appCalls > 0:
			s.AppAttempts, s.AppDelay = appCalls, time.Second
			s.Models = "an application's 3 retries around the OpenAI SDKs"
		case calls > 1:
			s.Models = "the OpenAI SDKs alone, with stacked's attempts"
		}
	}
}

// aws2026 models the AWS SDKs' 2026 update with gs: aws-sdk-go-v2's
// backoffDelay2026 with a throttle's 1 s base, the exponent from 0, the
// cap before the jitter (admission.Exponential's), and x-amz-retry-after
// held between the backoff and 5 s above it.
func aws2026(gs ...NewGate) func(*Spec, time.Duration) {
	return func(s *Spec, _ time.Duration) {
		mode := "standard"
		if len(gs) > 1 {
			mode = "adaptive"
		}
		*s = Spec{Attempts: 3, Advice: admission.FloorAdvice, AboveBackoff: 5 * time.Second,
			BackoffBase: time.Second, BackoffCap: 20 * time.Second, Gates: gs,
			Models: "the AWS SDKs' " + mode + " retry mode (2026 update)"}
	}
}

// awsPre2026 is backoffDelayLegacy: rand × 2^attempt s, attempt 1 on the
// first retry; no header read.
func awsPre2026(s *Spec, _ time.Duration) {
	*s = Spec{Attempts: 3, Advice: admission.IgnoreAdvice, BackoffBase: 2 * time.Second, BackoffCap: 20 * time.Second,
		Gates: []NewGate{awsQuota}, Models: "the AWS SDKs' standard retry mode before 2026"}
}

// Defaults are the policies run when none is named.
func Defaults() []string {
	out := make([]string, len(Builtins))
	for i, b := range Builtins {
		out[i] = b.Name
	}
	return out
}

// builtinNames lists every built-in, for an error naming them.
func builtinNames() string { return strings.Join(Defaults(), ", ") }

// honor is the spec every built-in starts from.
func honor(name string) Spec {
	return Spec{Name: name, Attempts: DefaultMaxAttempts, Budget: DefaultBudget, Jitter: 0.2,
		BackoffBase: 500 * time.Millisecond, BackoffCap: 8 * time.Second}
}

// builtin returns the built-in named name (an old name included).
func builtin(name string) (Spec, bool) {
	if n, ok := renamed[name]; ok {
		name = n
	}
	kind, arg, param := strings.Cut(name, ":")
	for _, b := range Builtins {
		bkind, barg, bparam := strings.Cut(b.Name, ":")
		if b.Name != name && !(param && bparam && kind == bkind) {
			continue
		}
		var wait time.Duration
		if param {
			var err error
			if wait, err = time.ParseDuration(arg); err != nil || wait < minPollWait || wait > time.Minute {
				return Spec{}, false
			}
		} else if bparam {
			wait, _ = time.ParseDuration(barg)
		}
		s := honor(name)
		b.set(&s, wait)
		s.Name, s.Base = name, kind
		return s, true
	}
	return Spec{}, false
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
