package admission

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// gate refuses every request before open, advising the time left until
// then, and admits every request after.
type gate struct {
	open     time.Time
	refusals atomic.Int64
	admitted atomic.Int64
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if left := time.Until(g.open); left > 0 {
		g.refusals.Add(1)
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(left.Milliseconds(), 10))
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	g.admitted.Add(1)
	w.WriteHeader(http.StatusOK)
}

// TestSharedCooldownHoldsNewRequests: one refusal advising 10 s; ten
// requests started a second later are held until then (stretched by the
// jitter) instead of collecting ten more refusals.
func TestSharedCooldownHoldsNewRequests(t *testing.T) {
	t.Parallel()
	for _, shared := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			g := &gate{open: time.Now().Add(10 * time.Second)}
			var mu sync.Mutex
			var firsts []Decision
			p := DefaultPolicy()
			p.SharedCooldown, p.Observe = shared, func(d Decision) {
				if d.Attempt == 1 {
					mu.Lock()
					firsts = append(firsts, d)
					mu.Unlock()
				}
			}
			tr, err := New(serveMem(t, g), p)
			if err != nil {
				t.Fatal(err)
			}
			client := &http.Client{Transport: tr}
			get := func() {
				resp, err := client.Get("http://primary.invalid/")
				if err != nil || resp.StatusCode != 200 {
					t.Errorf("%v %v", resp, err)
					return
				}
				resp.Body.Close()
			}
			var wg sync.WaitGroup
			wg.Go(get)
			time.Sleep(time.Second)
			for range 10 {
				wg.Go(get)
			}
			wg.Wait()
			want := int64(11)
			if shared {
				want = 1
			}
			if g.refusals.Load() != want || g.admitted.Load() != 11 {
				t.Fatalf("shared %v: %d refusals, %d admitted; want %d refusals", shared, g.refusals.Load(), g.admitted.Load(), want)
			}
			held := 0
			for _, d := range firsts {
				if d.Held > 0 {
					held++
					if d.Held < 9*time.Second || d.Held > 10800*time.Millisecond || d.Status != 200 {
						t.Fatalf("held %v (status %d), want within [9s, 10.8s]", d.Held, d.Status)
					}
				}
			}
			if shared && held != 10 || !shared && held != 0 {
				t.Fatalf("shared %v: %d first attempts held", shared, held)
			}
			tr.CloseIdleConnections()
		})
	}
}

// TestSharedCooldownHoldsRetries: a retry waits its own advice, then at
// least until the cooldown another request's refusal set.
func TestSharedCooldownHoldsRetries(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := newLab(t, Policy{MaxAttempts: DefaultMaxAttempts, Jitter: DefaultJitter, SharedCooldown: true, Rand: fixed(0.5)}, map[string][]reply{
			"/": {refuse(429, "Retry-After-Ms", "2000"), refuse(429, "Retry-After-Ms", "20000"), ok200},
		})
		var seen sync.Map
		do := func(name string) {
			ctx := WithAttemptObserver(t.Context(), func(a Attempt) { seen.Store(name+strconv.Itoa(a.Attempt), a) })
			if status, _, err := l.do(ctx, "GET", "/", ""); status != 200 || err != nil {
				t.Errorf("%s: %d %v", name, status, err)
			}
		}
		start := time.Now()
		var wg sync.WaitGroup
		// a is refused at 0 s, 2 s advised: the cooldown ends at 2 s, a's
		// retry is planned at 2.2 s.
		wg.Go(func() { do("a") })
		time.Sleep(time.Second)
		// b, new at 1 s, is held 1 s × 1.1, sent at 2.1 s, refused with
		// 20 s advised: the cooldown ends at 22.1 s.
		wg.Go(func() { do("b") })
		wg.Wait()
		attempt := func(name string) Attempt {
			v, _ := seen.Load(name)
			return v.(Attempt)
		}
		if b1 := attempt("b1"); b1.Held != 1100*time.Millisecond || b1.Sent.Sub(start) != 2100*time.Millisecond {
			t.Fatalf("b held %v, sent at %v", b1.Held, b1.Sent.Sub(start))
		}
		// a's retry, at 2.2 s, finds 19.9 s of cooldown left: held 21.89 s.
		if a2 := attempt("a2"); a2.Planned.Sub(start) != 2200*time.Millisecond || a2.Held != 21890*time.Millisecond || a2.Sent.Sub(start) != 24090*time.Millisecond {
			t.Fatalf("a's retry planned at %v, held %v, sent at %v", a2.Planned.Sub(start), a2.Held, a2.Sent.Sub(start))
		}
		// b's retry, at 2.1 s + 22 s, is past the cooldown: not held.
		if b2 := attempt("b2"); b2.Held != 0 || b2.Sent.Sub(start) != 24100*time.Millisecond {
			t.Fatalf("b's retry held %v, sent at %v", b2.Held, b2.Sent.Sub(start))
		}
	})
}

// TestSharedCooldownRefusesLocally: a cooldown longer than the budget
// refuses a new request without sending it: redirected to the fallback if
// there is one, else given up.
func TestSharedCooldownRefusesLocally(t *testing.T) {
	t.Parallel()
	for _, withFallback := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			p := Policy{MaxAttempts: DefaultMaxAttempts, SharedCooldown: true, Budget: 5 * time.Second}
			if withFallback {
				p.Fallback = toPath("/fallback")
			}
			l := newLab(t, p, map[string][]reply{"/": {refuse(429, "Retry-After", "60")}, "/fallback": {ok200}})
			l.do(t.Context(), "GET", "/", "") // sets the cooldown to 60 s
			time.Sleep(10 * time.Second)
			before := len(l.recorded())
			status, _, err := l.do(t.Context(), "GET", "/", "")
			ds := l.recorded()[before:]
			if n := len(l.srv.seen("/")); n != 1 {
				t.Fatalf("the primary saw %d requests, want the first only", n)
			}
			first := ds[0]
			if first.Status != 0 || first.Err != ClassCooldown || first.Wait != 50*time.Second || first.Held != 0 {
				t.Fatalf("local refusal %+v", first)
			}
			if withFallback {
				if status != 200 || err != nil || len(ds) != 2 || first.Action != ActionRedirect || !ds[1].Fallback || ds[1].Status != 200 {
					t.Fatalf("status %d, error %v, decisions %+v", status, err, ds)
				}
				return
			}
			var g *GiveUpError
			if !errors.As(err, &g) || g.LastStatus != 0 || g.LastWait != 50*time.Second || g.Attempts != 1 || first.Action != ActionGiveUp {
				t.Fatalf("error %v, decisions %+v", err, ds)
			}
			if want := "the shared cooldown's 50s, does not fit the 5s left of the budget; no fallback; give up"; first.Reason.String() != want {
				t.Fatalf("reason %q, want %q", first.Reason, want)
			}
		})
	}
}

// TestCancelWhileHeld: a cancel while the shared cooldown holds a request
// returns at once; the attempt is observed as not sent, with the time held.
func TestCancelWhileHeld(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := newLab(t, Policy{Budget: DefaultBudget, Jitter: DefaultJitter, SharedCooldown: true, MaxAttempts: 1, ReturnLastResponse: true}, map[string][]reply{"/": {refuse(429, "Retry-After", "10")}})
		l.do(t.Context(), "GET", "/", "") // sets the cooldown to 10 s
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(3*time.Second, cancel)
		start := time.Now()
		_, _, err := l.do(ctx, "GET", "/", "")
		ds := l.recorded()
		last := ds[len(ds)-1]
		if !errors.Is(err, context.Canceled) || time.Since(start) != 3*time.Second || len(ds) != 2 ||
			last.Err != ClassCanceled || last.Held != 3*time.Second || last.Status != 0 || last.Action != ActionDone {
			t.Fatalf("error %v after %v, decisions %+v", err, time.Since(start), ds)
		}
		if n := len(l.srv.seen("/")); n != 1 {
			t.Fatalf("the server saw %d requests", n)
		}
	})
}
