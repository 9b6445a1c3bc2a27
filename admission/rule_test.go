package admission

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

const s = time.Second

// TestDecisionRule plays scripted servers in synctest bubbles, so every
// time is exact: when each attempt reached the primary and the fallback,
// what was decided after each, and how the request ended.
func TestDecisionRule(t *testing.T) {
	t.Parallel()
	ms := func(v string) reply { return refuse(429, "Retry-After-Ms", v) }
	sec := func(v string) reply { return refuse(429, "Retry-After", v) }
	tests := []struct {
		name     string
		policy   Policy
		primary  []reply
		fallback []reply
		timeout  time.Duration // a context deadline, when set

		wantPrimary  []time.Duration // arrivals at the primary
		wantFallback []time.Duration // arrivals at the fallback
		wantActions  []Action
		wantSlept    []time.Duration // per decision, when set
		wantStatus   int             // 0: an error is expected
		wantGiveUp   *GiveUpError    // compared field by field (Reason: a substring)
		wantReason   string          // a substring of the first decision's Reason
	}{
		{
			name:        "advice fits the budget: sleep advised × (1 + 0.2×0.5)",
			policy:      Policy{MaxAttempts: DefaultMaxAttempts, Budget: DefaultBudget, Jitter: DefaultJitter, Rand: fixed(0.5)},
			primary:     []reply{ms("2000"), ok200},
			wantPrimary: []time.Duration{0, 2200 * time.Millisecond},
			wantActions: []Action{ActionSleep, ActionDone},
			wantSlept:   []time.Duration{2200 * time.Millisecond, 0},
			wantStatus:  200,
			wantReason:  "advised 2s, jittered to 2.2s, fits the 30s left of the budget; sleep",
		},
		{
			name:         "advice does not fit: redirect at once",
			policy:       Policy{MaxAttempts: DefaultMaxAttempts, Budget: 12 * s, Fallback: toPath("/fallback")},
			primary:      []reply{sec("45")},
			fallback:     []reply{ok200},
			wantPrimary:  []time.Duration{0},
			wantFallback: []time.Duration{0},
			wantActions:  []Action{ActionRedirect, ActionDone},
			wantSlept:    []time.Duration{0, 0},
			wantStatus:   200,
			wantReason:   "advised 45s, does not fit the 12s left of the budget; redirect to the fallback",
		},
		{
			name:        "advice does not fit, no fallback: give up at once",
			policy:      Policy{MaxAttempts: DefaultMaxAttempts, Jitter: DefaultJitter, Budget: 12 * s},
			primary:     []reply{sec("45")},
			wantPrimary: []time.Duration{0},
			wantActions: []Action{ActionGiveUp},
			wantGiveUp:  &GiveUpError{LastWait: 45 * s, LastStatus: 429, Attempts: 1, Reason: fixedReason("; no fallback; give up")},
		},
		{
			name:         "the fallback's refusal sleeps by the same rule",
			policy:       Policy{MaxAttempts: DefaultMaxAttempts, Jitter: DefaultJitter, Budget: 12 * s, Fallback: toPath("/fallback"), Rand: fixed(0.5)},
			primary:      []reply{sec("45")},
			fallback:     []reply{ms("1000"), ok200},
			wantPrimary:  []time.Duration{0},
			wantFallback: []time.Duration{0, 1100 * time.Millisecond},
			wantActions:  []Action{ActionRedirect, ActionSleep, ActionDone},
			wantStatus:   200,
		},
		{
			name:         "never a second redirect",
			policy:       Policy{MaxAttempts: DefaultMaxAttempts, Jitter: DefaultJitter, Budget: 12 * s, Fallback: toPath("/fallback")},
			primary:      []reply{sec("45")},
			fallback:     []reply{sec("45")},
			wantPrimary:  []time.Duration{0},
			wantFallback: []time.Duration{0},
			wantActions:  []Action{ActionRedirect, ActionGiveUp},
			wantGiveUp:   &GiveUpError{LastWait: 45 * s, LastStatus: 429, Attempts: 2, Reason: fixedReason("the fallback was already tried; give up")},
		},
		{
			name:        "an attempt's own time counts: 5 s + 8.8 s does not fit 12 s",
			policy:      Policy{MaxAttempts: DefaultMaxAttempts, Jitter: DefaultJitter, Budget: 12 * s, Rand: fixed(0.5)},
			primary:     []reply{{status: 429, header: map[string]string{"Retry-After-Ms": "8000"}, delay: 5 * s}},
			wantPrimary: []time.Duration{0},
			wantActions: []Action{ActionGiveUp},
			wantGiveUp:  &GiveUpError{LastWait: 8 * s, LastStatus: 429, Attempts: 1, Reason: fixedReason("advised 8s, jittered to 8.8s, does not fit the 7s left of the budget; no fallback; give up")},
		},
		{
			name:        "an attempt's own time counts: 5 s + 8.8 s fits 15 s",
			policy:      Policy{MaxAttempts: DefaultMaxAttempts, Jitter: DefaultJitter, Budget: 15 * s, Rand: fixed(0.5)},
			primary:     []reply{{status: 429, header: map[string]string{"Retry-After-Ms": "8000"}, delay: 5 * s}, ok200},
			wantPrimary: []time.Duration{0, 13800 * time.Millisecond},
			wantActions: []Action{ActionSleep, ActionDone},
			wantStatus:  200,
		},
		{
			name:        "budget spent by the attempt: give up rather than redirect",
			policy:      Policy{MaxAttempts: DefaultMaxAttempts, Budget: 12 * s, Fallback: toPath("/fallback")},
			primary:     []reply{{status: 429, header: map[string]string{"Retry-After-Ms": "1000"}, delay: 13 * s}},
			fallback:    []reply{ok200},
			wantPrimary: []time.Duration{0},
			wantActions: []Action{ActionGiveUp},
			wantGiveUp:  &GiveUpError{LastWait: s, LastStatus: 429, Attempts: 1, Reason: fixedReason("advised 1s, does not fit the 0s left of the budget; the budget is spent; give up")},
		},
		{
			name:        "attempts exhausted",
			policy:      Policy{Budget: DefaultBudget, Jitter: DefaultJitter, MaxAttempts: 2, Rand: fixed(0.5)},
			primary:     []reply{ms("1000")},
			wantPrimary: []time.Duration{0, 1100 * time.Millisecond},
			wantActions: []Action{ActionSleep, ActionGiveUp},
			wantGiveUp:  &GiveUpError{LastWait: s, LastStatus: 429, Attempts: 2, Reason: fixedReason("attempt 2 of 2 (MaxAttempts) refused; give up")},
		},
		{
			name:        "MaxAttempts 1: a refusal gives up at once",
			policy:      Policy{Budget: DefaultBudget, Jitter: DefaultJitter, MaxAttempts: 1},
			primary:     []reply{ms("10")},
			wantPrimary: []time.Duration{0},
			wantActions: []Action{ActionGiveUp},
			wantGiveUp:  &GiveUpError{LastWait: 10 * time.Millisecond, LastStatus: 429, Attempts: 1, Reason: fixedReason("attempt 1 of 1")},
		},
		{
			name:         "RedirectFirst: a wait that fits still redirects",
			policy:       Policy{MaxAttempts: DefaultMaxAttempts, Budget: DefaultBudget, Jitter: DefaultJitter, RedirectFirst: true, Fallback: toPath("/fallback")},
			primary:      []reply{ms("100")},
			fallback:     []reply{ok200},
			wantPrimary:  []time.Duration{0},
			wantFallback: []time.Duration{0},
			wantActions:  []Action{ActionRedirect, ActionDone},
			wantStatus:   200,
			wantReason:   "RedirectFirst",
		},
		{
			name:        "no budget: an hour is slept",
			policy:      Policy{MaxAttempts: DefaultMaxAttempts},
			primary:     []reply{sec("3600"), ok200},
			wantPrimary: []time.Duration{0, time.Hour},
			wantActions: []Action{ActionSleep, ActionDone},
			wantStatus:  200,
			wantReason:  "advised 1h0m0s; no budget; sleep",
		},
		{
			name:        "over MaxWait, GiveUpOverMaxWait: give up",
			policy:      Policy{MaxAttempts: DefaultMaxAttempts, Jitter: DefaultJitter, MaxWait: 60 * s},
			primary:     []reply{sec("90")},
			wantPrimary: []time.Duration{0},
			wantActions: []Action{ActionGiveUp},
			wantGiveUp:  &GiveUpError{LastWait: 90 * s, LastStatus: 429, Attempts: 1, Reason: fixedReason("advised 1m30s is over MaxWait 1m0s; no fallback; give up")},
		},
		{
			name:         "over MaxWait, GiveUpOverMaxWait, with a fallback: redirect",
			policy:       Policy{MaxAttempts: DefaultMaxAttempts, Jitter: DefaultJitter, MaxWait: 60 * s, Fallback: toPath("/fallback")},
			primary:      []reply{sec("90")},
			fallback:     []reply{ok200},
			wantPrimary:  []time.Duration{0},
			wantFallback: []time.Duration{0},
			wantActions:  []Action{ActionRedirect, ActionDone},
			wantStatus:   200,
			wantReason:   "advised 1m30s is over MaxWait 1m0s; redirect to the fallback",
		},
		{
			name:        "over MaxWait, BackoffOverMaxWait: back off instead (the OpenAI SDKs above 60 s)",
			policy:      Policy{MaxAttempts: DefaultMaxAttempts, Jitter: DefaultJitter, MaxWait: 60 * s, OverMaxWait: BackoffOverMaxWait, Backoff: Constant(s)},
			primary:     []reply{sec("90"), ok200},
			wantPrimary: []time.Duration{0, s},
			wantActions: []Action{ActionSleep, ActionDone},
			wantSlept:   []time.Duration{s, 0},
			wantStatus:  200,
			wantReason:  "advised 1m30s is over MaxWait 1m0s; backoff 1s; no budget; sleep",
		},
		{
			name:        "IgnoreAdvice with Constant: a poll every second",
			policy:      Policy{Budget: DefaultBudget, Jitter: DefaultJitter, MaxAttempts: 5, Advice: IgnoreAdvice, Backoff: Constant(s)},
			primary:     []reply{sec("10"), sec("10"), sec("10"), sec("10"), ok200},
			wantPrimary: []time.Duration{0, s, 2 * s, 3 * s, 4 * s},
			wantActions: []Action{ActionSleep, ActionSleep, ActionSleep, ActionSleep, ActionDone},
			wantSlept:   []time.Duration{s, s, s, s, 0},
			wantStatus:  200,
			wantReason:  "advised 10s, ignored (IgnoreAdvice); backoff 1s, fits",
		},
		{
			name:        "503 with advice is a refusal",
			policy:      Policy{MaxAttempts: DefaultMaxAttempts, Budget: DefaultBudget, Jitter: DefaultJitter, Rand: fixed(0.5)},
			primary:     []reply{refuse(503, "Retry-After", "2"), ok200},
			wantPrimary: []time.Duration{0, 2200 * time.Millisecond},
			wantActions: []Action{ActionSleep, ActionDone},
			wantStatus:  200,
		},
		{
			name:        "503 without advice is an outage: returned as it is",
			primary:     []reply{refuse(503)},
			wantPrimary: []time.Duration{0},
			wantActions: []Action{ActionDone},
			wantStatus:  503,
			wantReason:  "status 503 without a usable advised wait is an outage",
		},
		{
			name:        "503 with unusable advice is an outage too",
			primary:     []reply{refuse(503, "Retry-After", "soon")},
			wantPrimary: []time.Duration{0},
			wantActions: []Action{ActionDone},
			wantStatus:  503,
		},
		{
			name:        "a status outside Statuses is returned",
			policy:      Policy{MaxAttempts: DefaultMaxAttempts, Budget: DefaultBudget, Jitter: DefaultJitter, Statuses: []int{429}},
			primary:     []reply{refuse(503, "Retry-After", "2")},
			wantPrimary: []time.Duration{0},
			wantActions: []Action{ActionDone},
			wantStatus:  503,
			wantReason:  "status 503 is not a refusal this owner retries",
		},
		{
			name:        "a 4xx other than 429 is returned",
			primary:     []reply{refuse(400, "Retry-After", "2")},
			wantPrimary: []time.Duration{0},
			wantActions: []Action{ActionDone},
			wantStatus:  400,
		},
		{
			name:        "a context deadline shortens the budget",
			policy:      Policy{MaxAttempts: DefaultMaxAttempts, Budget: 30 * s},
			timeout:     5 * s,
			primary:     []reply{sec("8")},
			wantPrimary: []time.Duration{0},
			wantActions: []Action{ActionGiveUp},
			wantGiveUp:  &GiveUpError{LastWait: 8 * s, LastStatus: 429, Attempts: 1, Reason: fixedReason("advised 8s, does not fit the 5s left before the context's deadline; no fallback; give up")},
		},
		{
			name:        "within the context deadline: sleep",
			policy:      Policy{MaxAttempts: DefaultMaxAttempts},
			timeout:     5 * s,
			primary:     []reply{sec("3"), ok200},
			wantPrimary: []time.Duration{0, 3 * s},
			wantActions: []Action{ActionSleep, ActionDone},
			wantStatus:  200,
			wantReason:  "advised 3s, fits the 5s left before the context's deadline; sleep",
		},
		{
			name:        "a 429 without advice backs off",
			policy:      Policy{MaxAttempts: DefaultMaxAttempts, Budget: DefaultBudget, Jitter: DefaultJitter, Backoff: Constant(700 * time.Millisecond)},
			primary:     []reply{refuse(429), ok200},
			wantPrimary: []time.Duration{0, 700 * time.Millisecond},
			wantActions: []Action{ActionSleep, ActionDone},
			wantReason:  "no usable advice; backoff 700ms, fits",
			wantStatus:  200,
		},
		{
			name:        "retry-after 0 retries at once",
			policy:      Policy{MaxAttempts: DefaultMaxAttempts, Budget: DefaultBudget, Jitter: DefaultJitter, Rand: fixed(0.5)},
			primary:     []reply{sec("0"), ok200},
			wantPrimary: []time.Duration{0, 0},
			wantActions: []Action{ActionSleep, ActionDone},
			wantStatus:  200,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				l := newLab(t, tt.policy, map[string][]reply{"/": tt.primary, "/fallback": tt.fallback})
				ctx := t.Context()
				if tt.timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.timeout)
					defer cancel()
				}
				status, _, err := l.do(ctx, "POST", "/", `{"messages":[]}`)
				ds := l.recorded()
				if got := l.srv.offsets("/", l.start); !slices.Equal(got, tt.wantPrimary) {
					t.Errorf("primary arrivals %v, want %v", got, tt.wantPrimary)
				}
				if got := l.srv.offsets("/fallback", l.start); !slices.Equal(got, tt.wantFallback) {
					t.Errorf("fallback arrivals %v, want %v", got, tt.wantFallback)
				}
				if got := actions(ds); !slices.Equal(got, tt.wantActions) {
					t.Errorf("actions %v, want %v", got, tt.wantActions)
				}
				for i, want := range tt.wantSlept {
					if i < len(ds) && ds[i].Slept != want {
						t.Errorf("decision %d slept %v, want %v", i+1, ds[i].Slept, want)
					}
				}
				if tt.wantReason != "" && (len(ds) == 0 || !strings.Contains(ds[0].Reason.String(), tt.wantReason)) {
					t.Errorf("first reason %q, want it to hold %q", ds[0].Reason, tt.wantReason)
				}
				for i, d := range ds {
					if d.Attempt != i+1 {
						t.Errorf("decision %d is for attempt %d", i+1, d.Attempt)
					}
				}
				if tt.wantGiveUp != nil {
					var g *GiveUpError
					if !errors.As(err, &g) {
						t.Fatalf("error %v, want a *GiveUpError", err)
					}
					w := tt.wantGiveUp
					if g.LastWait != w.LastWait || g.LastStatus != w.LastStatus || g.Attempts != w.Attempts || !strings.Contains(g.Reason.String(), w.Reason.String()) {
						t.Errorf("give-up %+v, want %+v", *g, *w)
					}
					if g.Reason.String() != ds[len(ds)-1].Reason.String() {
						t.Errorf("give-up reason %q is not the last decision's %q", g.Reason, ds[len(ds)-1].Reason)
					}
					return
				}
				if err != nil || status != tt.wantStatus {
					t.Fatalf("status %d, error %v; want %d", status, err, tt.wantStatus)
				}
			})
		})
	}
}

// TestHonourAdviceJitterBounds: with the default random source, each
// retry goes no earlier than advised and no later than 1.2 × advised, and
// the draws spread over that range.
func TestHonourAdviceJitterBounds(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const n = 200
		replies := map[string][]reply{}
		paths := make([]string, n)
		for i := range paths {
			paths[i] = "/r" + strconv.Itoa(i)
			replies[paths[i]] = []reply{refuse(429, "Retry-After-Ms", "2000"), ok200}
		}
		l := newLab(t, Policy{MaxAttempts: DefaultMaxAttempts, Budget: DefaultBudget, Jitter: DefaultJitter}, replies)
		lo, hi := time.Duration(1<<62), time.Duration(0)
		for _, p := range paths {
			start := time.Now()
			if status, _, err := l.do(t.Context(), "GET", p, ""); status != 200 || err != nil {
				t.Fatalf("%s: %d %v", p, status, err)
			}
			at := l.srv.offsets(p, start)
			gap := at[1] - at[0]
			if gap < 2*s || gap > 2400*time.Millisecond {
				t.Fatalf("retry %v after the refusal, want within [2s, 2.4s]", gap)
			}
			lo, hi = min(lo, gap), max(hi, gap)
		}
		if lo > 2100*time.Millisecond || hi < 2300*time.Millisecond {
			t.Errorf("retries spread over [%v, %v], want most of [2s, 2.4s]", lo, hi)
		}
		for _, d := range l.recorded() {
			if d.Action == ActionSleep && (d.Slept < d.Wait || d.Slept > d.Wait*12/10) {
				t.Fatalf("slept %v for advised %v", d.Slept, d.Wait)
			}
		}
	})
}

// TestBackoffWithoutAdviceBounds: a 429 without advice waits the default
// Exponential(500ms, 8s): retry k within [0, min(8s, 0.5s·2^(k−1))).
func TestBackoffWithoutAdviceBounds(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const n = 50
		replies := map[string][]reply{}
		for i := range n {
			replies["/r"+strconv.Itoa(i)] = []reply{refuse(429), refuse(429), refuse(429), refuse(429), refuse(429), ok200}
		}
		l := newLab(t, Policy{Jitter: DefaultJitter, MaxAttempts: 6}, replies)
		for i := range n {
			p := "/r" + strconv.Itoa(i)
			if status, _, err := l.do(t.Context(), "GET", p, ""); status != 200 || err != nil {
				t.Fatalf("%s: %d %v", p, status, err)
			}
			at := l.srv.offsets(p, time.Time{})
			for k := 1; k < len(at); k++ {
				ceiling := min(8*s, 500*time.Millisecond<<(k-1))
				if gap := at[k] - at[k-1]; gap < 0 || gap >= ceiling {
					t.Fatalf("retry %d after %v, want within [0, %v)", k, gap, ceiling)
				}
			}
		}
		for _, d := range l.recorded() {
			if d.Wait != -1 || d.WaitSource != results.WaitNone {
				t.Fatalf("a response without advice recorded wait %v from %q", d.Wait, d.WaitSource)
			}
		}
	})
}

func TestExponentialAndConstant(t *testing.T) {
	t.Parallel()
	almost1 := fixed(0.999999)
	exp := Exponential(500*time.Millisecond, 8*s)
	for retry, want := range map[int]time.Duration{1: 500 * time.Millisecond, 2: s, 3: 2 * s, 4: 4 * s, 5: 8 * s, 6: 8 * s, 1000: 8 * s} {
		if got := exp(retry, fixed(0)); got != 0 {
			t.Errorf("retry %d with rand 0: %v, want 0", retry, got)
		}
		if got := exp(retry, almost1); got >= want || got < want*99/100 {
			t.Errorf("retry %d near the top: %v, want just under %v", retry, got, want)
		}
	}
	if got := Exponential(s, 0)(200, almost1); got <= 0 {
		t.Errorf("no cap, retry 200: %v, want a positive saturated wait", got)
	}
	if got := Exponential(0, s)(3, almost1); got != 0 {
		t.Errorf("base 0: %v", got)
	}
	if Constant(3*s)(7, fixed(0.5)) != 3*s || Constant(-s)(1, fixed(0.5)) != 0 {
		t.Error("Constant")
	}
}
