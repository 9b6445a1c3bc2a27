package policylab

import (
	"bytes"
	"encoding/csv"
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

func TestWrittenTable(t *testing.T) {
	t.Parallel()
	ms := []Measure{
		{Policy: "slow", Requests: 10, Succeeded: 10, Attempts: 30, E2E: []float64{100, 200, 9000}, SimEarlyReturns: 0},
		{Policy: "fast", Requests: 10, Succeeded: 10, Attempts: 12, E2E: []float64{10, 20, 30}, EarlyRetries: 2, SimEarlyReturns: 3},
		{Policy: "bad", Requests: 10, Succeeded: 4, GaveUp: 6, Attempts: 10, HTTP429: 6, E2E: []float64{1, 2}},
	}
	if r := Ranked(ms); r[0].Policy != "fast" || r[1].Policy != "slow" || r[2].Policy != "bad" {
		t.Fatalf("ranked %s %s %s: want by success, then p99", r[0].Policy, r[1].Policy, r[2].Policy)
	}
	var b bytes.Buffer
	if err := WriteCSV(&b, ms); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 4 || strings.Join(rows[0], ",") != strings.Join(CSVColumns, ",") {
		t.Fatalf("%v %v", rows, err)
	}
	if got := strings.Join(rows[2], ","); got != "fast,10,10,100,0,0,12,1.2,0,20,28,29.8,30,0,2" {
		t.Fatalf("fast's row: %s", got)
	}
	b.Reset()
	if err := WriteMarkdown(&b, ms, Setup{Requests: 10, Target: "a test", Budget: "30 s"}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{"| fast | 10 | 10 (100%) |", "## What the simulator saw", "| fast | 3 | 0 |", "fast completed the most requests", "fast (2)"} {
		if !strings.Contains(md, want) {
			t.Errorf("policies.md lacks %q:\n%s", want, md)
		}
	}
}
