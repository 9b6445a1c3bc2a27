package admission

import (
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestAdaptiveArithmetic: the AWS adaptive mode on a script of answers.
// Five answers in the first half second and a sixth at 0.5 s measure
// 6/0.5 s × 0.8 = 9.6/s; that sixth is a throttle: Wmax 9.6, the fill
// rate 0.7 × 9.6 = 6.72/s, K = ∛(9.6 × 0.3 / 0.4). The next answer, at
// 1 s, measures 1/0.5 × 0.8 + 9.6 × 0.2 = 3.52/s and sets the rate on the
// cubic, 0.4 × (0.5 − K)³ + 9.6 = 8.43, capped at twice the measure:
// 7.04. An empty bucket's next token is 1/rate away.
func TestAdaptiveArithmetic(t *testing.T) {
	t.Parallel()
	a, err := NewAdaptive(DefaultAdaptiveConfig())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-6 {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
	}
	for i := range 5 {
		if when, took := a.take(at(float64(i) / 10)); !took || !when.Equal(at(float64(i)/10)) {
			t.Fatalf("before any throttle an attempt waits: %v %v", when, took)
		}
		if s := a.answered(at(float64(i)/10), false); s.enabled || s.note() != "" {
			t.Fatalf("answer %d before any throttle: %+v", i, s)
		}
	}
	if a.Rate() != 0 {
		t.Fatalf("rate %v before any throttle", a.Rate())
	}
	s := a.answered(at(0.5), true)
	near("measured at the throttle", s.measured, 9.6)
	near("rate after the throttle", a.Rate(), 6.72)
	if s.note() != "; the adaptive rate is cut to 6.72/s (9.60/s measured × β)" {
		t.Fatalf("note %q", s.note())
	}
	// The bucket filled at the floor, 0.5/s, from 0 to 0.5 s: 0.25
	// tokens, so the next is 0.75/6.72 s away; asked again then, it is
	// taken, and the one after is 1/6.72 s later.
	when, took := a.take(at(0.5))
	near("the first token's wait", when.Sub(at(0.5)).Seconds(), 0.75/6.72)
	if took {
		t.Fatal("a token taken from 0.25")
	}
	if again, took := a.take(when); !took || !again.Equal(when) {
		t.Fatalf("asked again when it comes: %v %v", again, took)
	}
	next, took := a.take(when)
	near("the next token's wait", next.Sub(when).Seconds(), 1/6.72)
	if took {
		t.Fatal("two tokens at once")
	}
	s = a.answered(at(1), false)
	near("measured at 1 s", s.measured, 3.52)
	near("rate on the cubic, capped at twice the measure", a.Rate(), 7.04)
	k := math.Cbrt(9.6 * 0.3 / 0.4)
	near("the uncapped cubic", 0.4*math.Pow(0.5-k, 3)+9.6, 8.4279137735)
	// Later, the cubic passes Wmax: at 1 + K s after the throttle it is
	// Wmax itself, bounded by twice the measure.
	for i := range 20 {
		a.answered(at(1+float64(i)/10), false)
	}
	if r := a.Rate(); r < 6.72 || r > 2*9.6 {
		t.Fatalf("rate %v after 2 s of answers", r)
	}
	for _, bad := range []AdaptiveConfig{
		{Beta: 1, Scale: 0.4, MinRate: 0.5, Smoothing: 0.8, Bucket: time.Second},
		{Beta: 0.7, Scale: 0, MinRate: 0.5, Smoothing: 0.8, Bucket: time.Second},
		{Beta: 0.7, Scale: 0.4, MinRate: 0, Smoothing: 0.8, Bucket: time.Second},
		{Beta: 0.7, Scale: 0.4, MinRate: 0.5, Smoothing: 0, Bucket: time.Second},
		{Beta: 0.7, Scale: 0.4, MinRate: 0.5, Smoothing: 0.8, Bucket: 0},
	} {
		if _, err := NewAdaptive(bad); err == nil {
			t.Errorf("NewAdaptive(%+v) accepted", bad)
		}
	}
}

// TestAdaptiveLimitsTheRate: one client offers 20 requests/s for 30 s to a
// deployment that admits 5/s. Honouring the header alone, most of its
// attempts are refused; with the adaptive rate limiter, its sends slow to
// near what is admitted, far fewer are refused, and what cannot get a
// token within the budget is given up locally (ClassAdaptive).
func TestAdaptiveLimitsTheRate(t *testing.T) {
	t.Parallel()
	honour := honouring(t)
	limited := &spacer{interval: 200 * time.Millisecond}
	var a *Adaptive
	local := 0
	synctest.Test(t, func(t *testing.T) {
		a, _ = NewAdaptive(DefaultAdaptiveConfig())
		p := DefaultPolicy()
		p.MaxAttempts, p.Budget = 20, 5*time.Second
		var mu sync.Mutex
		p.Observe = func(d Decision) {
			if d.Err == ClassAdaptive {
				mu.Lock()
				local++
				mu.Unlock()
				if !strings.HasPrefix(d.Reason.String(), "the adaptive rate's next token, in ") {
					t.Errorf("reason %q", d.Reason)
				}
			}
		}
		p.Adaptive = a
		steady(t, limited, p, 600, 50*time.Millisecond)
	})
	t.Logf("honouring: %d admitted, %d refused; adaptive: %d admitted, %d refused, %d given up locally, rate %.2f/s",
		honour.admitted, honour.refused, limited.admitted, limited.refused, local, a.Rate())
	hr := float64(honour.refused) / float64(honour.admitted)
	lr := float64(limited.refused) / float64(limited.admitted)
	if !(lr < hr/4) || local == 0 {
		t.Errorf("refusals per admitted: adaptive %.2f, honouring %.2f; %d given up locally: the limiter should cut refusals by far", lr, hr, local)
	}
	// The SDKs' limiter starts at its floor: the first throttle comes
	// before a rate was measured (0/s), so it cuts to MinRate, 0.5/s, and
	// climbs back along the cubic; measured here: 118 admitted of
	// honouring's 168.
	if limited.admitted < honour.admitted*6/10 {
		t.Errorf("adaptive admitted %d, honouring %d: the limiter should not waste the deployment", limited.admitted, honour.admitted)
	}
}
