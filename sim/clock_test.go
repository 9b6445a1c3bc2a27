package sim

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestScaledClock runs the real clock inside a synctest bubble, where the
// runtime clock is fake: exact durations, no waiting.
func TestScaledClock(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		scale     float64
		sleep     time.Duration // model time
		cancelIn  time.Duration // runtime; 0: never
		wantErr   error
		wantTaken time.Duration // runtime
	}{
		{"real time", 1, 3 * time.Second, 0, nil, 3 * time.Second},
		{"ten times faster", 10, 3 * time.Second, 0, nil, 300 * time.Millisecond},
		{"slower", 0.5, time.Second, 0, nil, 2 * time.Second},
		{"canceled", 10, time.Hour, time.Second, context.DeadlineExceeded, time.Second},
		{"no wait", 10, 0, 0, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				c := newScaledClock(tc.scale)
				ctx := context.Background()
				if tc.cancelIn > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.cancelIn)
					defer cancel()
				}
				start, modelStart := time.Now(), c.Now()
				err := c.Sleep(ctx, tc.sleep)
				taken := time.Since(start)
				if !errors.Is(err, tc.wantErr) || taken != tc.wantTaken {
					t.Fatalf("Sleep(%v) = %v after %v; want %v after %v", tc.sleep, err, taken, tc.wantErr, tc.wantTaken)
				}
				// Model time moves scale times as fast as the runtime clock.
				if got, want := c.Now().Sub(modelStart), time.Duration(float64(taken)*tc.scale); got != want {
					t.Errorf("model time moved %v in %v; want %v", got, taken, want)
				}
			})
		})
	}
}

func TestScaledClockCanceledContextWinsOverNoWait(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := newScaledClock(1).Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep(canceled, 0) = %v; want context.Canceled", err)
	}
}

func TestManualClock(t *testing.T) {
	t.Parallel()
	clk := NewManualClock(t0)
	woke := make(chan error, 3)
	sleep := func(ctx context.Context, d time.Duration) { go func() { woke <- clk.Sleep(ctx, d) }() }
	ctx, cancel := context.WithCancel(context.Background())
	sleep(context.Background(), time.Second)
	sleep(context.Background(), 3*time.Second)
	sleep(ctx, time.Hour)
	if err := clk.AwaitSleepers(t.Context(), 3); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		move      func()
		wantAwake int
		wantErr   error
		sleepers  int
	}{
		{func() { clk.Advance(999 * time.Millisecond) }, 0, nil, 3},
		{func() { clk.Advance(time.Millisecond) }, 1, nil, 2}, // exactly at the deadline
		{func() { clk.Set(t0) }, 0, nil, 2},                   // backwards wakes no one
		{func() { clk.Set(t0.Add(3 * time.Second)) }, 1, nil, 1},
		{cancel, 1, context.Canceled, 0},
	}
	for i, st := range steps {
		st.move()
		for range st.wantAwake {
			if err := <-woke; !errors.Is(err, st.wantErr) {
				t.Fatalf("step %d: Sleep returned %v, want %v", i, err, st.wantErr)
			}
		}
		if clk.Sleepers() != st.sleepers {
			t.Fatalf("step %d: %d sleepers, want %d", i, clk.Sleepers(), st.sleepers)
		}
		select {
		case err := <-woke:
			t.Fatalf("step %d: an extra sleeper woke (%v)", i, err)
		default:
		}
	}
	if got := clk.Now(); !got.Equal(t0.Add(3 * time.Second)) {
		t.Errorf("Now = %v", got)
	}
	done, stop := context.WithCancel(context.Background())
	stop()
	if err := clk.AwaitSleepers(done, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("AwaitSleepers with no sleeper and a done context = %v", err)
	}
}
