package policy

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
)

func TestParseSpec(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want func(Spec) bool
	}{
		{"none", func(s Spec) bool { return s.Attempts == 1 && !s.Fallback && s.Models != "" }},
		{"honor", func(s Spec) bool {
			return s.Attempts == DefaultMaxAttempts && s.Budget == DefaultBudget && s.Jitter == 0.2 && s.Advice != admission.IgnoreAdvice && s.Models == ""
		}},
		{"honor-no-jitter", func(s Spec) bool { return s.Jitter == 0 && s.Base == "honor-no-jitter" }},
		{"fixed:1s", func(s Spec) bool {
			return s.Advice == admission.IgnoreAdvice && s.Constant && s.BackoffBase == time.Second && s.Attempts == DefaultMaxAttempts
		}},
		{"poll:250ms", func(s Spec) bool {
			return s.Advice == admission.IgnoreAdvice && s.Constant && s.BackoffBase == 250*time.Millisecond && s.Attempts == DefaultMaxAttempts
		}},
		{"sdk", func(s Spec) bool {
			return s.SDK && s.MaxWait == time.Minute && s.LongWaitBackoff && s.Budget == 0 && s.AppAttempts == 0 && s.Attempts == 3 && s.Models != ""
		}},
		{"stacked", func(s Spec) bool { return s.SDK && s.AppAttempts == 4 && s.AppDelay == time.Second && s.Models != "" }},
		{"redirect", func(s Spec) bool { return s.RedirectFirst && s.Fallback }},
		{"budget", func(s Spec) bool { return s.Fallback && !s.Cooldown }},
		{"cooldown", func(s Spec) bool { return s.Fallback && s.Cooldown }},
		{"honor-backoff", func(s Spec) bool {
			return s.Advice == admission.FloorAdvice && s.Advice != admission.IgnoreAdvice && s.Jitter == 0.2
		}},
		{"slots", func(s Spec) bool { return s.Slots && s.SlotWidth == admission.DefaultSlotWidth && s.Jitter == 0 }},
		{"pace", func(s Spec) bool { return s.Pace && s.Advice != admission.IgnoreAdvice }},
		{"mine=honor,attempts=5,budget=10s,jitter=0.1,fallback=on", func(s Spec) bool {
			return s.Name == "mine" && s.Base == "honor" && s.Attempts == 5 && s.Budget == 10*time.Second && s.Jitter == 0.1 && s.Fallback && s.OwnCaps()
		}},
		{"b=backoff,backoff=100ms-2s,advice=honor,cooldown=on", func(s Spec) bool {
			return s.BackoffBase == 100*time.Millisecond && s.BackoffCap == 2*time.Second && s.Advice != admission.IgnoreAdvice && s.Cooldown && !s.OwnCaps()
		}},
		{"f=honor,backoff=fixed-2s,max-wait=5s", func(s Spec) bool { return s.Constant && s.BackoffBase == 2*time.Second && s.MaxWait == 5*time.Second }},
		{"w=honor,slots=250ms,pace=on,advice=floor", func(s Spec) bool {
			return s.Slots && s.SlotWidth == 250*time.Millisecond && s.Pace && s.Advice == admission.FloorAdvice
		}},
		{"p2=pace,slots=off", func(s Spec) bool { return s.Pace && !s.Slots }},
	}
	for _, tt := range tests {
		s, err := Parse(tt.in)
		if err != nil || !tt.want(s) {
			t.Errorf("Parse(%q) = %+v, %v", tt.in, s, err)
		}
		// Every spec makes a policy the admission library accepts (the
		// fallback is the run's to give).
		p := s.policy(1)
		if s.Fallback {
			p.Fallback = func(r *http.Request) (*http.Request, error) { return r, nil }
		}
		if _, err := admission.New(nil, *p); err != nil {
			t.Errorf("%q: admission refuses its policy: %v", tt.in, err)
		}
	}
	// Bad specs, and the risks of the last break test: a repeated key, a
	// custom name that shadows a built-in, a name that would start a CSV
	// formula, a poll fast enough to flood a deployment, an unbounded
	// budget.
	for _, bad := range []string{
		"nosuch", "fixed:0s", "fixed:abc", "poll:2m", "poll:1ns", "poll:10ms", "x=nosuch", "x=honor,attempts=0", "x=honor,attempts=201",
		"x=honor,budget=-1s", "x=honor,budget=0s", "x=honor,budget=none", "x=honor,jitter=1.5", "x=honor,fallback=maybe", "x=honor,nosuchkey=1",
		"x=honor,backoff=8s-1s", "x=honor,backoff=fixed-1ns", "UPPER=honor", strings.Repeat("a", 40) + "=honor",
		"x=honor,attempts=3,attempts=4", "none=honor", "honor=backoff", "poll:1s=honor", "-x=honor", "=x=honor", "1x=honor",
		"x=backoff,slots=100ms", "x=backoff,cooldown=on", "x=honor,slots=0s", "x=honor,advice=maybe",
	} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// TestFairCaps: every policy under the fair caps gets the lab's budget
// and attempts; a modelled client and a custom spec that set its own keep
// theirs.
func TestFairCaps(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in       string
		attempts int
		budget   time.Duration
	}{
		{"honor", 7, 12 * time.Second},
		{"poll:250ms", 7, 12 * time.Second},
		{"pace", 7, 12 * time.Second},
		{"sdk", 3, 0},
		{"none", 1, 0},
		{"x=honor,attempts=4", 4, 12 * time.Second},
		{"y=honor,budget=5s", 7, 5 * time.Second},
	} {
		s, err := Parse(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		s = s.Fair(12*time.Second, 7)
		if s.Attempts != tt.attempts || s.Budget != tt.budget {
			t.Errorf("%s: attempts %d budget %v, want %d %v", tt.in, s.Attempts, s.Budget, tt.attempts, tt.budget)
		}
	}
}

// TestBuiltinsAreOneList: every entry of Builtins parses to a spec of its
// own name and base; a duration variant of fixed:D and poll:D parses to
// its entry with the new wait; a name not in the list does not parse.
func TestBuiltinsAreOneList(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, b := range Builtins {
		if seen[b.Name] || b.What == "" {
			t.Errorf("%s: listed twice, or without a description", b.Name)
		}
		seen[b.Name] = true
		s, err := Parse(b.Name)
		if err != nil || s.Name != b.Name || s.Base != strings.SplitN(b.Name, ":", 2)[0] {
			t.Errorf("%s parses to %+v, %v", b.Name, s, err)
		}
	}
	for in, wait := range map[string]time.Duration{"fixed:2s": 2 * time.Second, "poll:100ms": 100 * time.Millisecond} {
		if s, err := Parse(in); err != nil || s.BackoffBase != wait || !s.Constant || s.Name != in {
			t.Errorf("%s parses to %+v, %v", in, s, err)
		}
	}
	for _, bad := range []string{"fixed:10ms", "poll:2m", "fixed", "sleep:1s", "honour"} {
		if s, err := Parse(bad); err == nil {
			t.Errorf("%s parses to %+v", bad, s)
		}
	}
}
