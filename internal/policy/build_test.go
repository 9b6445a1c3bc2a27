package policy

import (
	"net/http"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
)

// mustParse is Parse, failing the test on an error.
func mustParse(t *testing.T, v string) Spec {
	t.Helper()
	s, err := Parse(v)
	if err != nil {
		t.Fatalf("Parse(%q): %v", v, err)
	}
	return s
}

// testClock is an admission.Clock that is not the runtime's, to see that
// Build passes env's on.
type testClock struct{ admission.Clock }

// TestBuildEveryBuiltin: every built-in builds, in an Env with everything
// set and in an empty one, into a policy the admission library accepts;
// env's clock and randomness are the policy's, its Coordinator only for
// a spec that Shares, its fallback only for one with Fallback.
func TestBuildEveryBuiltin(t *testing.T) {
	t.Parallel()
	fallback := func(r *http.Request) (*http.Request, error) { return r, nil }
	clock := testClock{}
	rnd := func() float64 { return 0.25 }
	coord, err := admission.NewMemoryCoordinator(admission.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Defaults() {
		s := mustParse(t, name)
		p, err := s.Build(Env{Clock: clock, Rand: rnd, Coordinator: coord, Fallback: fallback})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := admission.New(nil, *p); err != nil {
			t.Errorf("%s: admission refuses its policy: %v", name, err)
		}
		if p.Clock != clock || p.Rand == nil || p.Rand() != 0.25 {
			t.Errorf("%s: the policy does not have env's clock and randomness", name)
		}
		if got := p.Coordinator != nil; got != s.Shares() {
			t.Errorf("%s: Coordinator set %v, Shares %v", name, got, s.Shares())
		}
		if got := p.Fallback != nil; got != s.Fallback {
			t.Errorf("%s: Fallback set %v, the spec's Fallback %v", name, got, s.Fallback)
		}
		if p.MaxAttempts != s.Attempts {
			t.Errorf("%s: MaxAttempts %d, the spec's attempts %d", name, p.MaxAttempts, s.Attempts)
		}
		// An empty Env builds too: no fallback is given, and a spec that
		// redirects is the run's to complete, as the lab does.
		if !s.Fallback {
			p, err := s.Build(Env{})
			if err != nil {
				t.Fatalf("%s in an empty Env: %v", name, err)
			}
			if _, err := admission.New(nil, *p); err != nil {
				t.Errorf("%s in an empty Env: admission refuses its policy: %v", name, err)
			}
		}
	}
}

// TestBuildSettings: what each kind of spec sets in its admission.Policy.
func TestBuildSettings(t *testing.T) {
	t.Parallel()
	build := func(v string, env Env) *admission.Policy {
		t.Helper()
		p, err := mustParse(t, v).Build(env)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		return p
	}
	if p := build("none", Env{}); p.MaxAttempts != 1 || !p.ReturnLastResponse || p.Budget != 0 {
		t.Errorf("none: %+v, want one attempt whose refusal is the answer", p)
	}
	if p := build("honor", Env{}); p.Budget != DefaultBudget || p.Jitter != 0.2 || p.Advice != admission.HonourAdvice || p.SharedCooldown {
		t.Errorf("honor: budget %v jitter %v advice %v cooldown %v", p.Budget, p.Jitter, p.Advice, p.SharedCooldown)
	}
	if p := build("sdk", Env{}); !p.ReturnLastResponse || !p.MarkRetries || p.OverMaxWait != admission.BackoffOverMaxWait || p.MaxWait != time.Minute || p.Budget != 0 {
		t.Errorf("sdk: %+v, want the SDKs' last response, retry marks, a minute's MaxWait and backoff over it, no budget", p)
	}
	if p := build("backoff", Env{}); p.Advice != admission.IgnoreAdvice {
		t.Errorf("backoff: advice %v, want ignored", p.Advice)
	}
	if p := build("honor-backoff", Env{}); p.Advice != admission.FloorAdvice {
		t.Errorf("honor-backoff: advice %v, want a floor", p.Advice)
	}
	if p := build("decorrelated", Env{}); p.ChainedBackoff == nil {
		t.Error("decorrelated: no chained backoff")
	}
	if p := build("redirect", Env{}); !p.RedirectFirst {
		t.Error("redirect: does not redirect first")
	}
	if p := build("cooldown", Env{}); !p.SharedCooldown {
		t.Error("cooldown: no shared cooldown")
	}
	// Per client: each Build has its own pace, throttle, quota, rate.
	for _, c := range []struct {
		name string
		of   func(*admission.Policy) any
	}{
		{"pace", func(p *admission.Policy) any { return p.Pace }},
		{"utilization", func(p *admission.Policy) any { return p.Pace }},
		{"sre-throttle", gateOf[*admission.Throttle]},
		{"honor-aws-quota", gateOf[*admission.RetryQuota]},
		{"honor-aws-adaptive", gateOf[*admission.Adaptive]},
		{"grpc-throttle", gateOf[*admission.RetryQuota]},
		{"aws-standard", gateOf[*admission.RetryQuota]},
		{"aws-adaptive", gateOf[*admission.Adaptive]},
		{"aws-adaptive", gateOf[*admission.RetryQuota]},
	} {
		a, b := c.of(build(c.name, Env{})), c.of(build(c.name, Env{}))
		if isNil(a) || isNil(b) || a == b {
			t.Errorf("%s: two clients' state %p and %p, want one each", c.name, a, b)
		}
		if !isNil(c.of(build("honor", Env{}))) && c.name != "utilization" {
			t.Errorf("honor has %s's state", c.name)
		}
	}
	// Slots: the fleet's when env has them, else the spec's own, of its
	// width.
	shared := admission.NewSlots(time.Second)
	if p := build("slots", Env{Slots: shared}); p.Slots != shared {
		t.Error("slots: not the fleet's Slots")
	}
	if p, q := build("slots", Env{}), build("slots", Env{}); p.Slots == nil || p.Slots == q.Slots {
		t.Error("slots without the fleet's: want its own, one per client")
	}
	if p := build("honor", Env{Slots: shared}); p.Slots != nil {
		t.Error("honor took the fleet's Slots")
	}
}

func isNil(v any) bool {
	switch x := v.(type) {
	case *admission.Pace:
		return x == nil
	case *admission.Throttle:
		return x == nil
	case *admission.RetryQuota:
		return x == nil
	case *admission.Adaptive:
		return x == nil
	}
	return v == nil
}

// TestBuildScale: a simulator running Scale times faster sees every
// duration of the spec divided by Scale (0 and 1 leave them).
func TestBuildScale(t *testing.T) {
	t.Parallel()
	half := func() float64 { return 0.5 }
	for _, c := range []struct {
		spec                 string
		scale                float64
		budget, maxWait, got time.Duration
		backoff              time.Duration // the first retry's, with a unit draw of 0.5
	}{
		{spec: "fixed:1s", scale: 10, budget: 3 * time.Second, backoff: 100 * time.Millisecond},
		{spec: "fixed:1s", scale: 0, budget: DefaultBudget, backoff: time.Second},
		{spec: "fixed:1s", scale: 1, budget: DefaultBudget, backoff: time.Second},
		{spec: "sdk", scale: 4, maxWait: 15 * time.Second},
		{spec: "x=honor,budget=10s,max-wait=5s", scale: 2, budget: 5 * time.Second, maxWait: 2500 * time.Millisecond},
	} {
		p, err := mustParse(t, c.spec).Build(Env{Scale: c.scale})
		if err != nil {
			t.Fatal(err)
		}
		if p.Budget != c.budget || p.MaxWait != c.maxWait {
			t.Errorf("%s at scale %v: budget %v max wait %v, want %v and %v", c.spec, c.scale, p.Budget, p.MaxWait, c.budget, c.maxWait)
		}
		if c.backoff != 0 {
			if got := p.Backoff(1, half); got != c.backoff {
				t.Errorf("%s at scale %v: backoff %v, want %v", c.spec, c.scale, got, c.backoff)
			}
		}
	}
}

// TestTraits: what a verdict reads of each kind of policy, and that a
// name never changes it.
func TestTraits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		spec  string
		want  Traits
		plain bool
	}{
		{"honor", Traits{Advice: HonourAdvice, Jitter: 0.2, Owners: 1, Calls: 1, Attempts: DefaultMaxAttempts}, true},
		{"honor-no-jitter", Traits{Advice: HonourAdvice, Owners: 1, Calls: 1, Attempts: DefaultMaxAttempts}, true},
		{"honor-full-jitter", Traits{Advice: HonourAdvice, Jitter: 1, Owners: 1, Calls: 1, Attempts: DefaultMaxAttempts}, true},
		{"backoff", Traits{Advice: IgnoreAdvice, Owners: 1, Calls: 1, Attempts: DefaultMaxAttempts}, false},
		{"fixed:1s", Traits{Advice: IgnoreAdvice, Owners: 1, Calls: 1, Attempts: DefaultMaxAttempts, Extras: true}, false},
		{"decorrelated", Traits{Advice: IgnoreAdvice, Owners: 1, Calls: 1, Attempts: DefaultMaxAttempts, Extras: true}, false},
		{"honor-backoff", Traits{Advice: FloorAdvice, Jitter: 0.2, Owners: 1, Calls: 1, Attempts: DefaultMaxAttempts, Extras: true}, false},
		{"redirect", Traits{Jitter: 0.2, Owners: 1, Calls: 1, Attempts: DefaultMaxAttempts, Redirect: RedirectFirst}, false},
		{"budget", Traits{Jitter: 0.2, Owners: 1, Calls: 1, Attempts: DefaultMaxAttempts, Redirect: RedirectWhenLate}, false},
		{"cooldown", Traits{Jitter: 0.2, Owners: 1, Calls: 1, Attempts: DefaultMaxAttempts, Redirect: RedirectWhenLate, Extras: true}, false},
		{"slots", Traits{Owners: 1, Calls: 1, Attempts: DefaultMaxAttempts, Extras: true}, false},
		{"pace", Traits{Jitter: 0.2, Owners: 1, Calls: 1, Attempts: DefaultMaxAttempts, Extras: true}, false},
		{"sre-throttle", Traits{Jitter: 0.2, Owners: 1, Calls: 1, Attempts: DefaultMaxAttempts, Extras: true}, false},
		{"none", Traits{Models: "a client without retries", OwnCaps: true, Owners: 1, Calls: 1, Attempts: 1}, false},
		{"sdk", Traits{Models: "the OpenAI SDKs (2 retries, no budget)", OwnCaps: true, Owners: 1, Calls: 1, Attempts: 3, Extras: true}, false},
		{"stacked", Traits{Models: "an application's 3 retries around the OpenAI SDKs", OwnCaps: true, Owners: 2, Calls: 4, Attempts: 3, Extras: true}, false},
		// A custom spec that sets its own caps keeps them: still plain.
		{"mine=honor,attempts=5", Traits{OwnCaps: true, Jitter: 0.2, Owners: 1, Calls: 1, Attempts: 5}, true},
	} {
		got := mustParse(t, c.spec).Traits()
		if got != c.want {
			t.Errorf("%s: traits %+v, want %+v", c.spec, got, c.want)
		}
		if got.PlainHonour() != c.plain {
			t.Errorf("%s: PlainHonour %v, want %v", c.spec, got.PlainHonour(), c.plain)
		}
	}
	// A rename is no change: a custom name over a built-in has its traits.
	for _, name := range Defaults() {
		s := mustParse(t, name)
		if s.Models != "" || s.Base != name {
			continue // fixed:D and poll:D, and the modelled clients, take no custom name over them as such
		}
		if got, want := mustParse(t, "renamed="+name).Traits(), s.Traits(); got != want {
			t.Errorf("renamed=%s: traits %+v, want %s's %+v", name, got, name, want)
		}
	}
}

// TestShares: a spec has state a fleet can share (a shared cooldown,
// Slots, a Pace) only when it retries at all.
func TestShares(t *testing.T) {
	t.Parallel()
	for spec, want := range map[string]bool{
		"cooldown": true, "slots": true, "pace": true, "utilization": true,
		"honor": false, "budget": false, "redirect": false, "sre-throttle": false, "retry-quota": false, "adaptive": false, "aws-standard": false, "grpc-throttle": false, "none": false, "sdk": false,
		"p1=pace,attempts=1": false, "c=honor,cooldown=on": true, "s=honor,slots=250ms": true,
	} {
		if got := mustParse(t, spec).Shares(); got != want {
			t.Errorf("%s: Shares %v, want %v", spec, got, want)
		}
	}
}

// TestAWSModes: the AWS SDKs' standard and adaptive modes and gRPC's
// retry throttling, as docs/policies.md cites them: 3 attempts and no
// budget for the AWS modes; the 2026 backoff from 1 s with the advice
// held within 5 s above it; the pre-2026 backoff U[0, 2^i s) with the
// header ignored; gRPC's 10 tokens against the AWS quota's 500.
func TestAWSModes(t *testing.T) {
	t.Parallel()
	half := func() float64 { return 0.5 }
	build := func(name string) *admission.Policy {
		t.Helper()
		p, err := mustParse(t, name).Build(Env{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return p
	}
	for _, c := range []struct {
		name     string
		advice   admission.Advice
		above    time.Duration
		backoffs [3]time.Duration // retries 1, 2 and 6 at a draw of 0.5
		tokens   float64
		adaptive bool
		attempts int
		budget   time.Duration
	}{
		{"aws-standard", admission.FloorAdvice, 5 * time.Second, [3]time.Duration{500 * time.Millisecond, time.Second, 10 * time.Second}, 500, false, 3, 0},
		{"aws-adaptive", admission.FloorAdvice, 5 * time.Second, [3]time.Duration{500 * time.Millisecond, time.Second, 10 * time.Second}, 500, true, 3, 0},
		{"aws-standard-pre2026", admission.IgnoreAdvice, 0, [3]time.Duration{time.Second, 2 * time.Second, 10 * time.Second}, 500, false, 3, 0},
		{"grpc-throttle", admission.HonourAdvice, 0, [3]time.Duration{250 * time.Millisecond, 500 * time.Millisecond, 4 * time.Second}, GRPCMaxTokens, false, DefaultMaxAttempts, DefaultBudget},
		{"honor-aws-quota", admission.HonourAdvice, 0, [3]time.Duration{250 * time.Millisecond, 500 * time.Millisecond, 4 * time.Second}, 500, false, DefaultMaxAttempts, DefaultBudget},
	} {
		p := build(c.name)
		if p.Advice != c.advice || p.MaxAboveBackoff != c.above || p.MaxAttempts != c.attempts || p.Budget != c.budget || p.Jitter != 0 && c.name != "grpc-throttle" && c.name != "honor-aws-quota" {
			t.Errorf("%s: advice %v, above %v, attempts %d, budget %v, jitter %v", c.name, p.Advice, p.MaxAboveBackoff, p.MaxAttempts, p.Budget, p.Jitter)
		}
		for i, retry := range []int{1, 2, 6} {
			if got := p.Backoff(retry, half); got != c.backoffs[i] {
				t.Errorf("%s: retry %d backs off %v, want %v", c.name, retry, got, c.backoffs[i])
			}
		}
		if q, _ := gateOf[*admission.RetryQuota](p).(*admission.RetryQuota); q == nil || q.Tokens() != c.tokens {
			t.Errorf("%s: retry quota %v, want %v tokens", c.name, q, c.tokens)
		}
		if a := gateOf[*admission.Adaptive](p); (a != nil) != c.adaptive {
			t.Errorf("%s: adaptive rate %v, want %v", c.name, a != nil, c.adaptive)
		}
	}
	// The old names still parse, to the policy under its new name; they
	// are still built-ins' names, so no custom policy takes them.
	for old, now := range map[string]string{"retry-quota": "honor-aws-quota", "adaptive": "honor-aws-adaptive"} {
		if s := mustParse(t, old); s.Name != now || s.Base != now {
			t.Errorf("%s parses to %s (base %s), want %s", old, s.Name, s.Base, now)
		}
		if _, err := Parse(old + "=honor"); err == nil {
			t.Errorf("a custom policy named %s is accepted", old)
		}
		if s := mustParse(t, "mine="+old); s.Base != now {
			t.Errorf("mine=%s: base %s, want %s", old, s.Base, now)
		}
	}
	// A custom policy over aws-standard that honours the advice drops the
	// bound above the backoff (FloorAdvice's own) and builds.
	if p, err := mustParse(t, "plain=aws-standard,advice=honor").Build(Env{}); err != nil || p.MaxAboveBackoff != 0 || p.Advice != admission.HonourAdvice {
		t.Errorf("plain=aws-standard,advice=honor: %v, %v", p, err)
	}
	// sdk-one-owner is stacked's whole attempt count in one owner.
	one, stacked := mustParse(t, "sdk-one-owner").Traits(), mustParse(t, "stacked").Traits()
	if one.Owners != 1 || stacked.Owners != 2 || one.Attempts*one.Calls != stacked.Attempts*stacked.Calls || one.Advice != stacked.Advice || one.Jitter != stacked.Jitter {
		t.Errorf("sdk-one-owner %+v against stacked %+v: not the same client with one owner", one, stacked)
	}
}

// gateOf is p's Gate of type G, or nil.
func gateOf[G admission.Gate](p *admission.Policy) any {
	for _, g := range p.Gates {
		if g, ok := g.(G); ok {
			return g
		}
	}
	return nil
}

// TestOuterRun: stacked's loop calls until an answer that is no refusal,
// at most Calls times, pausing Delay between calls; a pause that stops
// ends it; 0 or 1 Calls is one call.
func TestOuterRun(t *testing.T) {
	t.Parallel()
	run := func(o Outer, refusals int, stopAt int) (calls int, paused []time.Duration) {
		o.Run(func(n int) bool {
			calls = n
			return n <= refusals
		}, func(d time.Duration) bool {
			paused = append(paused, d)
			return len(paused) != stopAt
		})
		return calls, paused
	}
	stacked := mustParse(t, "stacked").Outer()
	for _, c := range []struct {
		o                     Outer
		refusals, stop, calls int
		pauses                int
	}{
		{stacked, 10, 0, 4, 3},
		{stacked, 1, 0, 2, 1},
		{stacked, 0, 0, 1, 0},
		{stacked, 10, 2, 2, 2},
		{mustParse(t, "sdk").Outer(), 10, 0, 1, 0},
		{Outer{Calls: 1}, 10, 0, 1, 0},
	} {
		calls, paused := run(c.o, c.refusals, c.stop)
		if calls != c.calls || len(paused) != c.pauses || len(paused) > 0 && paused[0] != c.o.Delay {
			t.Errorf("%+v with %d refusals, stop at pause %d: %d calls, pauses %v; want %d calls, %d pauses",
				c.o, c.refusals, c.stop, calls, paused, c.calls, c.pauses)
		}
	}
}

// countGate is an algorithm of a test's own: it refuses every attempt
// past its first limit.
type countGate struct {
	limit int
	seen  int
}

func (g *countGate) Admit(admission.Ask) admission.Admission {
	g.seen++
	return admission.Admission{Refused: g.seen > g.limit, Why: "over the count"}
}
func (g *countGate) Retry(admission.Ask) (bool, string) { return true, "" }
func (g *countGate) Learn(admission.Answer) string      { return "" }

// TestAnAlgorithmIsOneLine: a Builtin entry of one line, naming a Gate's
// constructor and configuration, gives each client its own Gate, and
// its traits say it adds to the advice.
func TestAnAlgorithmIsOneLine(t *testing.T) {
	t.Parallel()
	newCount := func(limit int) (*countGate, error) { return &countGate{limit: limit}, nil }
	b := Builtin{"count", "honor, plus a count", gates(gate(newCount, 2))}
	s := honor(b.Name)
	b.set(&s, 0)
	p, err := s.Build(Env{})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := s.Build(Env{})
	g, ok := gateOf[*countGate](p).(*countGate)
	if !ok || g.limit != 2 || gateOf[*countGate](q) == g {
		t.Fatalf("gates %v and %v: want one countGate each", p.Gates, q.Gates)
	}
	if tr := s.Traits(); !tr.Extras || tr.PlainHonour() {
		t.Errorf("traits %+v: a gate adds to the advice", tr)
	}
	if _, err := admission.New(nil, *p); err != nil {
		t.Errorf("the policy it builds: %v", err)
	}
}
