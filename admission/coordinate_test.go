package admission

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

var errDown = errors.New("coordinator down")

// shared is a Coordinator in memory, as two processes would share one in
// Redis; down makes every call fail, as a Redis that is down.
func shared(t *testing.T, down bool) *MemoryCoordinator {
	t.Helper()
	var o MemoryOptions
	if down {
		o.Fail = func(time.Time) error { return errDown }
	}
	m, err := NewMemoryCoordinator(o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCoordinatorSharesCooldown: two Transports, as two processes, each
// with its own in-process cooldown. A refusal through the first advising
// 10 s holds the second's requests through a shared Coordinator; without
// one, or with one that is down, the second learns alone: a refusal of
// its own.
func TestCoordinatorSharesCooldown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		coord, down  bool
		wantRefusals int64
	}{{"alone", false, false, 2}, {"shared", true, false, 1}, {"down", true, true, 2}} {
		synctest.Test(t, func(t *testing.T) {
			g := &gate{open: time.Now().Add(10 * time.Second)}
			m := shared(t, tc.down)
			get := func(tr *Transport) {
				resp, err := (&http.Client{Transport: tr}).Get("http://primary.invalid/")
				if err != nil || resp.StatusCode != 200 {
					t.Errorf("%s: %v %v", tc.name, resp, err)
					return
				}
				resp.Body.Close()
			}
			var owners [2]*Transport
			for i := range owners {
				p := DefaultPolicy()
				p.SharedCooldown, p.Jitter = true, 0
				if tc.coord {
					p.Coordinator = m
				}
				tr, err := New(serveMem(t, g), p)
				if err != nil {
					t.Fatal(err)
				}
				owners[i] = tr
			}
			var wg sync.WaitGroup
			wg.Go(func() { get(owners[0]) })
			time.Sleep(time.Second)
			for range 5 {
				get(owners[1])
			}
			wg.Wait()
			if got := g.refusals.Load(); got != tc.wantRefusals || g.admitted.Load() != 6 {
				t.Errorf("%s: %d refusals, %d admitted; want %d refusals", tc.name, got, g.admitted.Load(), tc.wantRefusals)
			}
			if tc.coord && m.Calls() == 0 {
				t.Errorf("%s: the Coordinator was never called", tc.name)
			}
		})
	}
}

// TestCoordinatorSharesSlots: two Transports with Slots of their own
// (in-process, a fleet of one each) are told the same wait; through a
// shared Coordinator their retries take distinct slots, and with it down
// each falls back to its own Slots, whose first slot is the advised time.
func TestCoordinatorSharesSlots(t *testing.T) {
	t.Parallel()
	for _, down := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			m := shared(t, down)
			at := make(chan time.Duration, 2)
			start := time.Now()
			var owners [2]*Transport
			for i := range owners {
				p := DefaultPolicy()
				p.Jitter, p.Slots, p.Coordinator = 0, NewSlots(time.Second), m
				p.Observe = func(d Decision) {
					if d.Attempt == 2 {
						at <- time.Since(start)
					}
				}
				tr, err := New(serveMem(t, refuseFirst(1)), p)
				if err != nil {
					t.Fatal(err)
				}
				owners[i] = tr
			}
			var wg sync.WaitGroup
			for _, tr := range owners {
				wg.Go(func() {
					resp, err := (&http.Client{Transport: tr}).Get("http://primary.invalid/")
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
				})
			}
			wg.Wait()
			a, b := <-at, <-at
			gap := max(a-b, b-a)
			if want := time.Second; !down && gap != want {
				t.Errorf("shared slots: retries at %v and %v, want %v apart", a, b, want)
			}
			if down && gap != 0 {
				t.Errorf("coordinator down: retries at %v and %v, want both at the advised time", a, b)
			}
		})
	}
}

// refuseFirst refuses its first n requests advising 100 ms, and admits
// the rest.
func refuseFirst(n int64) http.Handler {
	var seen atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen.Add(1) <= n {
			w.Header().Set("Retry-After-Ms", "100")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}

// TestCoordinatorSharesPace: two Transports with Paces of their own learn
// one rate through a shared Coordinator: a refusal through the first
// paces the second, which has met none. With the Coordinator down, the
// second does not pace (it has learned nothing itself).
func TestCoordinatorSharesPace(t *testing.T) {
	t.Parallel()
	for _, down := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			m := shared(t, down)
			var paces [2]*Pace
			var owners [2]*Transport
			for i := range owners {
				pace, err := NewPace(DefaultPaceConfig())
				if err != nil {
					t.Fatal(err)
				}
				p := DefaultPolicy()
				p.Pace, p.Coordinator, paces[i] = pace, m, pace
				tr, err := New(serveMem(t, refuseFirst(int64(1-i))), p)
				if err != nil {
					t.Fatal(err)
				}
				owners[i] = tr
			}
			get := func(tr *Transport) {
				resp, err := (&http.Client{Transport: tr}).Get("http://primary.invalid/")
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
			}
			get(owners[0]) // refused once, then admitted
			start := time.Now()
			for range 3 {
				get(owners[1])
			}
			took := time.Since(start)
			if !down && (took < time.Second || m.Rate() == 0) {
				t.Errorf("shared pace: 3 requests in %v at the shared rate %.2f/s; want them paced", took, m.Rate())
			}
			if down && (took != 0 || paces[1].Rate() != 0) {
				t.Errorf("coordinator down: 3 requests in %v, in-process rate %.2f; want them unpaced", took, paces[1].Rate())
			}
		})
	}
}

func TestCoordinatorNeedsSharedState(t *testing.T) {
	t.Parallel()
	p := DefaultPolicy()
	p.Coordinator = shared(t, false)
	_, err := New(nil, p)
	var f interface{ Field() string }
	if !errors.As(err, &f) || f.Field() != "Coordinator" {
		t.Fatalf("a Coordinator with nothing to share: %v, want an error naming Coordinator", err)
	}
}

// wrongPace is a Coordinator whose pace answers what no pace keeps: every
// reserve is granted at ahead after its step's time, every confirmation
// refused (up to a thousand, so a test without the bound ends).
type wrongPace struct {
	*MemoryCoordinator
	ahead    time.Duration
	confirms atomic.Int64
}

func (w *wrongPace) Pace(_ context.Context, s PaceStep) (PaceResult, error) {
	switch s.Op {
	case PaceReserve:
		return PaceResult{At: s.Now.Add(w.ahead), Gen: 1, OK: true}, nil
	case PaceConfirm:
		return PaceResult{OK: w.confirms.Add(1) > 1000}, nil
	}
	return PaceResult{}, nil
}

// TestPaceHeldToTheBudget: whatever send slot a Coordinator grants, an
// attempt is not held past its budget: a slot an hour ahead of a request
// with a 2 s budget is a local refusal at once (the pace's give-up), not
// an hour's wait; and a Coordinator that voids every slot it granted
// holds an attempt for paceRetakes slots, not for ever.
func TestPaceHeldToTheBudget(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		pace, err := NewPace(DefaultPaceConfig())
		if err != nil {
			t.Fatal(err)
		}
		var decisions []Decision
		p := DefaultPolicy()
		p.Pace, p.Coordinator, p.Budget = pace, &wrongPace{MemoryCoordinator: shared(t, false), ahead: time.Hour}, 2*time.Second
		p.Observe = func(d Decision) { decisions = append(decisions, d) }
		tr, err := New(serveMem(t, refuseFirst(0)), p)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = (&http.Client{Transport: tr}).Get("http://primary.invalid/")
		var gaveUp *GiveUpError
		if took := time.Since(start); !errors.As(err, &gaveUp) || took != 0 || len(decisions) != 1 || decisions[0].Err != ClassPaced {
			t.Errorf("a slot an hour ahead under a 2 s budget: %v after %v, decisions %+v; want a local give-up at once", err, took, decisions)
		}

		w := &wrongPace{MemoryCoordinator: shared(t, false), ahead: 10 * time.Millisecond}
		p.Coordinator, p.Budget, p.Observe = w, 0, nil
		tr, err = New(serveMem(t, refuseFirst(0)), p)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := (&http.Client{Transport: tr}).Get("http://primary.invalid/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if n := w.confirms.Load(); n != paceRetakes {
			t.Errorf("%d slots taken for one attempt, want %d", n, paceRetakes)
		}
	})
}
