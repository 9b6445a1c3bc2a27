package policylab

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
		{"none", func(s Spec) bool { return s.Attempts == 1 && !s.Fallback }},
		{"honor", func(s Spec) bool {
			return s.Attempts == 3 && s.Budget == 30*time.Second && s.Jitter == 0.2 && !s.IgnoreAdvice
		}},
		{"honor-no-jitter", func(s Spec) bool { return s.Jitter == 0 && s.Base == "honor-no-jitter" }},
		{"fixed:1s", func(s Spec) bool {
			return s.IgnoreAdvice && s.Constant && s.BackoffBase == time.Second && s.Attempts == 3
		}},
		{"poll:250ms", func(s Spec) bool {
			return s.IgnoreAdvice && s.Constant && s.BackoffBase == 250*time.Millisecond && s.Attempts == 121
		}},
		{"sdk", func(s Spec) bool {
			return s.SDK && s.MaxWait == time.Minute && s.LongWaitBackoff && s.Budget == 0 && s.AppAttempts == 0
		}},
		{"stacked", func(s Spec) bool { return s.SDK && s.AppAttempts == 4 && s.AppDelay == time.Second }},
		{"redirect", func(s Spec) bool { return s.RedirectFirst && s.Fallback }},
		{"budget", func(s Spec) bool { return s.Fallback && !s.Cooldown }},
		{"cooldown", func(s Spec) bool { return s.Fallback && s.Cooldown }},
		{"mine=honor,attempts=5,budget=10s,jitter=0.1,fallback=on", func(s Spec) bool {
			return s.Name == "mine" && s.Base == "honor" && s.Attempts == 5 && s.Budget == 10*time.Second && s.Jitter == 0.1 && s.Fallback
		}},
		{"b=backoff,backoff=100ms-2s,advice=honor,cooldown=on,budget=none", func(s Spec) bool {
			return s.BackoffBase == 100*time.Millisecond && s.BackoffCap == 2*time.Second && !s.IgnoreAdvice && s.Cooldown && s.Budget == 0
		}},
		{"f=honor,backoff=fixed-2s,max-wait=5s", func(s Spec) bool { return s.Constant && s.BackoffBase == 2*time.Second && s.MaxWait == 5*time.Second }},
	}
	for _, tt := range tests {
		s, err := ParseSpec(tt.in)
		if err != nil || !tt.want(s) {
			t.Errorf("ParseSpec(%q) = %+v, %v", tt.in, s, err)
		}
		// Every spec makes a policy the admission library accepts (the
		// fallback is the target's to give).
		p := s.Policy(20)
		if s.Fallback {
			p.Fallback = func(r *http.Request) (*http.Request, error) { return r, nil }
		}
		if _, err := admission.New(nil, *p); err != nil {
			t.Errorf("%q: admission refuses its policy: %v", tt.in, err)
		}
	}
	for _, bad := range []string{"", "sometimes", "fixed:0s", "poll:x", "x=", "x=honor,attempts=0", "x=honor,attempts=9999",
		"x=honor,budget=-1s", "x=honor,budget=0s", "x=honor,jitter=1.5", "x=honor,fallback=maybe", "x=honor,nosuchkey=1",
		"x=honor,backoff=8s-1s", "UPPER=honor", strings.Repeat("a", 40) + "=honor"} {
		if _, err := ParseSpec(bad); err == nil {
			t.Errorf("ParseSpec(%q) accepted", bad)
		}
	}
}

// TestSpecScalesItsDurations: at time scale 20 every duration of the
// policy is a twentieth.
func TestSpecScalesItsDurations(t *testing.T) {
	t.Parallel()
	s, _ := ParseSpec("x=honor,budget=20s,max-wait=10s")
	p := s.Policy(20)
	if p.Budget != time.Second || p.MaxWait != 500*time.Millisecond {
		t.Fatalf("budget %v max wait %v", p.Budget, p.MaxWait)
	}
	if d := p.Backoff(1, func() float64 { return 0.999999 }); d > 25*time.Millisecond || d < 24*time.Millisecond {
		t.Fatalf("the first backoff at most %v, want just under 25 ms (500 ms / 20)", d)
	}
}
