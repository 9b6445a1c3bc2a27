package admission

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// TestDecorrelatedArithmetic: sleep = min(cap, U[base, 3 × the previous
// sleep)), the first from [base, 3 × base).
func TestDecorrelatedArithmetic(t *testing.T) {
	t.Parallel()
	d := Decorrelated(100*time.Millisecond, time.Second)
	prev := time.Duration(0)
	for i, want := range []time.Duration{200 * time.Millisecond, 350 * time.Millisecond, 575 * time.Millisecond, 912500 * time.Microsecond, time.Second, time.Second} {
		got := d(i+1, prev, fixed(0.5))
		if got != want {
			t.Fatalf("retry %d after %v: %v, want %v", i+1, prev, got, want)
		}
		prev = got
	}
	if got := d(3, 700*time.Millisecond, fixed(0)); got != 100*time.Millisecond {
		t.Errorf("the lowest draw: %v, want base", got)
	}
	if got := d(1, 0, fixed(0.999)); got < 299*time.Millisecond || got >= 300*time.Millisecond {
		t.Errorf("the first retry's highest draw: %v, want just under 3 × base", got)
	}
	if got := Decorrelated(0, time.Second)(1, time.Second, fixed(0.5)); got != 0 {
		t.Errorf("no base: %v", got)
	}
	if got := Decorrelated(time.Second, 0)(9, time.Hour, fixed(0.5)); got != 90*time.Minute+500*time.Millisecond {
		t.Errorf("no cap: %v, want U[1s, 3h) at 0.5, 1h30m0.5s", got)
	}
}

// TestChainedBackoffFeedsThePreviousWait: the Transport gives a
// ChainedBackoff the wait it gave the same request before, so a request's
// retries follow the chain (200, 350, 575 ms at a draw of 0.5), each
// request's chain its own; ChainedBackoff replaces Backoff.
func TestChainedBackoffFeedsThePreviousWait(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		never := func(int, func() float64) time.Duration { t.Fatal("Backoff called beside ChainedBackoff"); return 0 }
		p := Policy{MaxAttempts: 4, Budget: time.Minute, Advice: IgnoreAdvice, Backoff: never,
			ChainedBackoff: Decorrelated(100*time.Millisecond, time.Second), Rand: fixed(0.5)}
		l := newLab(t, p, map[string][]reply{"/": {refuse(429, "Retry-After-Ms", "5000")}})
		for range 2 {
			l.do(t.Context(), http.MethodGet, "/", "")
		}
		var slept []time.Duration
		for _, d := range l.recorded() {
			slept = append(slept, d.Slept)
		}
		want := []time.Duration{200 * time.Millisecond, 350 * time.Millisecond, 575 * time.Millisecond, 0}
		if len(slept) != 8 {
			t.Fatalf("decisions: %v", slept)
		}
		for i, w := range append(want, want...) {
			if slept[i] != w {
				t.Fatalf("waits %v, want the chain %v for each request", slept, want)
			}
		}
	})
}
