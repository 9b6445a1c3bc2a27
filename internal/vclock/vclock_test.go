package vclock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// The order of events is their virtual time, then the order they were
// queued: the same on every run, whatever the scheduler does.
func TestOrderIsVirtualTime(t *testing.T) {
	t.Parallel()
	for run := 0; run < 20; run++ {
		l := New(epoch)
		var log []string
		for i := 0; i < 5; i++ {
			l.Go(epoch.Add(time.Duration(5-i)*time.Millisecond), func() {
				for k := 0; k < 3; k++ {
					log = append(log, fmt.Sprintf("%d@%v", i, l.Now().Sub(epoch)))
					if err := l.Sleep(context.Background(), time.Duration(i+1)*time.Millisecond); err != nil {
						t.Error(err)
					}
				}
			})
		}
		if err := l.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		// Goroutine i starts at 5−i ms and sleeps i+1 ms: at 6 ms all five
		// are due, in the order their sleeps were queued.
		want := []string{"4@1ms", "3@2ms", "2@3ms", "1@4ms", "0@5ms", "4@6ms", "3@6ms", "2@6ms", "1@6ms", "0@6ms",
			"0@7ms", "1@8ms", "2@9ms", "3@10ms", "4@11ms"}
		if !slices.Equal(log, want) {
			t.Fatalf("run %d: got %v, want %v", run, log, want)
		}
		if l.Now() != epoch.Add(16*time.Millisecond) {
			t.Fatalf("clock at %v", l.Now().Sub(epoch))
		}
	}
}

// Two runs of the same program give the same log, in the same order.
func TestRepeatable(t *testing.T) {
	t.Parallel()
	play := func() []string {
		l := New(epoch)
		var log []string
		for i := 0; i < 50; i++ {
			l.Go(epoch, func() {
				for k := 0; k < 4; k++ {
					log = append(log, fmt.Sprint(i, l.Now().Sub(epoch)))
					l.Sleep(context.Background(), time.Duration((i*7+k*3)%11)*time.Millisecond)
				}
			})
		}
		l.Run(context.Background())
		return log
	}
	a, b := play(), play()
	if !slices.Equal(a, b) {
		t.Fatal("two runs of one program differ")
	}
}

// A goroutine can start another; a start in the past starts now.
func TestGoFromLoop(t *testing.T) {
	t.Parallel()
	l := New(epoch)
	var at []time.Duration
	l.Go(epoch.Add(time.Second), func() {
		l.Go(epoch, func() { at = append(at, l.Now().Sub(epoch)) })
		l.Go(l.Now().Add(time.Second), func() { at = append(at, l.Now().Sub(epoch)) })
	})
	if err := l.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(at, []time.Duration{time.Second, 2 * time.Second}) {
		t.Fatalf("started at %v", at)
	}
}

// A cancel wakes every sleeper with the context's error and starts no new
// goroutine; the clock does not move past the cancel.
func TestCancel(t *testing.T) {
	t.Parallel()
	l := New(epoch)
	ctx, cancel := context.WithCancel(context.Background())
	var errs []error
	started := 0
	for i := 0; i < 3; i++ {
		l.Go(epoch, func() {
			started++
			errs = append(errs, l.Sleep(ctx, time.Hour))
			if err := l.Sleep(ctx, time.Second); err == nil {
				t.Error("a sleep after the cancel slept")
			}
		})
	}
	l.Go(epoch.Add(time.Minute), func() { cancel() })
	l.Go(epoch.Add(2*time.Minute), func() { started++ })
	if err := l.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	if started != 3 || len(errs) != 3 {
		t.Fatalf("started %d, woke %d", started, len(errs))
	}
	for _, err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("sleeper woke with %v", err)
		}
	}
	if l.Now() != epoch.Add(time.Minute) {
		t.Fatalf("clock moved to %v", l.Now().Sub(epoch))
	}
}

// A sleep past the largest offset wakes there, after every other event,
// and the clock stays where it was for those before it.
func TestSleepPastTheEnd(t *testing.T) {
	l := New(epoch)
	var log []string
	l.Go(epoch, func() {
		if err := l.Sleep(context.Background(), time.Duration(1<<63-1)); err != nil {
			t.Error(err)
		}
		log = append(log, "long")
	})
	l.Go(epoch.Add(time.Hour), func() { log = append(log, fmt.Sprint(l.Now().Sub(epoch))) })
	if err := l.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"1h0m0s", "long"}; !slices.Equal(log, want) {
		t.Fatalf("got %v, want %v", log, want)
	}
}

// BenchmarkEvents is the loop's cost per event: 1,000 goroutines, each
// sleeping 100 times for a pseudo-random time (a lab run's requests
// waiting on the simulator and on their retry owners), the queue of
// sleepers about 1,000 deep. Reported per event (a start or a wake).
func BenchmarkEvents(b *testing.B) {
	const goroutines, sleeps = 1000, 100
	b.ReportAllocs()
	for b.Loop() {
		l := New(epoch)
		for i := range goroutines {
			l.Go(epoch.Add(time.Duration(i)*time.Millisecond), func() {
				x := uint32(i + 1)
				for range sleeps {
					x ^= x << 13
					x ^= x >> 17
					x ^= x << 5
					l.Sleep(context.Background(), time.Duration(x%5000)*time.Millisecond)
				}
			})
		}
		if err := l.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*goroutines*(sleeps+1)), "ns/event")
}
