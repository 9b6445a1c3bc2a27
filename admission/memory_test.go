package admission

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// TestMemoryCoordinatorCost: each call costs Delay, half before it
// reaches the state and half after; a context that ends in the first half
// changes nothing, one that ends in the second has changed the state; a
// failing store answers Fail's error after its Delay, the state not
// changed; every call is counted, and each that failed.
func TestMemoryCoordinatorCost(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var down bool
		m, err := NewMemoryCoordinator(MemoryOptions{Delay: 10 * time.Millisecond, Fail: func(now time.Time) error {
			if down {
				return errDown
			}
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		end := start.Add(time.Minute)
		if got, src, err := m.Cooldown(ctx, end, "retry-after"); err != nil || !got.Equal(end) || src != "retry-after" {
			t.Fatalf("extend: %v %q %v", got, src, err)
		}
		if took := time.Since(start); took != 10*time.Millisecond {
			t.Errorf("a call took %v, want the Delay", took)
		}
		within := func(d time.Duration, f func(context.Context) error) (time.Duration, error) {
			ctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			began := time.Now()
			err := f(ctx)
			return time.Since(began), err
		}
		// Cut on the way there: the slot is not taken.
		took, err := within(3*time.Millisecond, func(ctx context.Context) error {
			_, err := m.Slot(ctx, start, time.Second)
			return err
		})
		if !errors.Is(err, context.DeadlineExceeded) || took != 3*time.Millisecond {
			t.Errorf("a call cut at 3 ms: %v after %v, want the deadline's error at it", err, took)
		}
		// Cut on the way back: the slot was taken, the answer lost.
		if _, err := within(7*time.Millisecond, func(ctx context.Context) error {
			_, err := m.Slot(ctx, start, time.Second)
			return err
		}); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a call cut at 7 ms: %v", err)
		}
		if got, err := m.Slot(ctx, start, time.Second); err != nil || !got.Equal(start.Add(time.Second)) {
			t.Errorf("the slot after a call cut on its way back: %v %v, want the second (the first was taken)", got, err)
		}
		down = true
		if _, _, err := m.Cooldown(ctx, end.Add(time.Hour), "retry-after-ms"); !errors.Is(err, errDown) {
			t.Errorf("a failing store: %v", err)
		}
		down = false
		if got, src, _ := m.Cooldown(ctx, time.Time{}, ""); !got.Equal(end) || src != "retry-after" {
			t.Errorf("after a failed extension: %v %q, want the end it had", got, src)
		}
		if m.Calls() != 6 || m.Fallbacks() != 3 {
			t.Errorf("%d calls, %d fallbacks; want 6 and 3 (two cut, one failed)", m.Calls(), m.Fallbacks())
		}
		if _, err := m.Pace(ctx, PaceStep{Op: 9}); err == nil {
			t.Error("an unknown pace step was taken")
		}
	})
	_, err := NewMemoryCoordinator(MemoryOptions{Delay: -time.Millisecond})
	var f interface{ Field() string }
	if !errors.As(err, &f) || f.Field() != "Delay" {
		t.Errorf("a negative Delay: %v, want an error naming Delay", err)
	}
}

// TestMemoryCoordinatorOnTheClock: the Delay is slept on the Clock, so on
// a virtual clock a call costs virtual time and no runtime time.
func TestMemoryCoordinatorOnTheClock(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		clock := &jumpClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
		m, err := NewMemoryCoordinator(MemoryOptions{Delay: 5 * time.Millisecond, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		start, virtual := time.Now(), clock.Now()
		if _, err := m.Slot(context.Background(), virtual, time.Second); err != nil {
			t.Fatal(err)
		}
		if d := clock.Now().Sub(virtual); d != 5*time.Millisecond || time.Since(start) != 0 {
			t.Errorf("a call cost %v on the clock and %v of runtime; want 5ms and none", d, time.Since(start))
		}
	})
}

// TestCoordinationIsPaidFor: a Transport that shares its cooldown and
// pace through a MemoryCoordinator pays the Delay for each of its
// decisions — the cooldown's read, the slot's reserve and confirm, the
// admitted answer: four round trips — and a store slower than the
// request's budget costs that budget, not the store's time: the call
// ends at the budget's end and the decision falls back (the cooldown is
// the in-process one, and the attempt goes).
func TestCoordinationIsPaidFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		delay, budget time.Duration
		paced         bool
		want          time.Duration
	}{
		{"a round trip of 2 ms", 2 * time.Millisecond, time.Second, true, 8 * time.Millisecond},
		{"a store slower than the budget", time.Hour, 50 * time.Millisecond, false, 50 * time.Millisecond},
	} {
		synctest.Test(t, func(t *testing.T) {
			m, err := NewMemoryCoordinator(MemoryOptions{Delay: tc.delay})
			if err != nil {
				t.Fatal(err)
			}
			p := DefaultPolicy()
			p.SharedCooldown, p.Coordinator, p.Budget = true, m, tc.budget
			if tc.paced {
				if p.Pace, err = NewPace(DefaultPaceConfig()); err != nil {
					t.Fatal(err)
				}
			}
			tr, err := New(serveMem(t, refuseFirst(0)), p)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			resp, err := (&http.Client{Transport: tr}).Get("http://primary.invalid/")
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			resp.Body.Close()
			if took := time.Since(start); took != tc.want || m.Calls() == 0 {
				t.Errorf("%s: the request took %v with %d calls, want %v", tc.name, took, m.Calls(), tc.want)
			}
		})
	}
}
