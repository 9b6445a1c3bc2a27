package dispatch

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/results"
)

// scriptSender answers each attempt from a script of waits: a wait ≥ 0 is
// a 429 advising it, None a 429 with no header, and past the script a 200.
// Each answer takes latency.
type scriptSender struct {
	latency time.Duration
	waits   []float64
}

func (s *scriptSender) Send(_ context.Context, _ int, r *results.Record) {
	time.Sleep(s.latency)
	if i := r.Attempt - 1; i < len(s.waits) {
		r.Status = 429
		r.WaitMS = s.waits[i]
		return
	}
	r.Status = 200
}

func TestRetryHonoursAdvisedWait(t *testing.T) {
	t.Parallel()
	sink := &memSink{}
	s := &scriptSender{latency: 10 * time.Millisecond, waits: []float64{100, 250}}
	out, err := run(t, &offsets{at: msList(0)}, s, sink, Options{
		Retry: &RetryPolicy{MaxAttempts: 5, Jitter: 0.5, Rand: func() float64 { return 0.5 }},
	})
	if err != nil || out.Sent != 1 || out.Retries != 2 || out.Written != 3 {
		t.Fatalf("out %+v err %v", out, err)
	}
	// Attempt 1 sent at 0, answered at 10 with 100 ms × 1.25 jitter: attempt 2
	// meant for 135; answered at 145 with 250 × 1.25: attempt 3 at 457.5.
	want := []struct {
		attempt          int
		intended, status float64
	}{{1, 0, 429}, {2, 135, 429}, {3, 457.5, 200}}
	for i, w := range want {
		r := sink.recs[i]
		if r.Seq != 0 || r.Attempt != w.attempt || r.IntendedMS != w.intended || r.SentMS != w.intended || float64(r.Status) != w.status {
			t.Errorf("row %d: attempt %d intended %v sent %v status %d, want %+v", i, r.Attempt, r.IntendedMS, r.SentMS, r.Status, w)
		}
	}
}

func TestRetryStopsAtLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		waits  []float64
		policy *RetryPolicy
		rows   int
	}{
		{"no policy", []float64{5}, nil, 1},
		{"max attempts", []float64{5, 5, 5, 5}, &RetryPolicy{MaxAttempts: 3}, 3},
		{"no usable wait", []float64{results.None}, &RetryPolicy{MaxAttempts: 3}, 1},
		{"wait over the limit", []float64{90_000}, &RetryPolicy{MaxAttempts: 3, MaxWait: time.Minute}, 1},
		{"success ends it", nil, &RetryPolicy{MaxAttempts: 3}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sink := &memSink{}
			if _, err := run(t, &offsets{at: msList(0)}, &scriptSender{waits: tt.waits}, sink, Options{Retry: tt.policy}); err != nil {
				t.Fatal(err)
			}
			if len(sink.recs) != tt.rows {
				t.Fatalf("%d rows, want %d", len(sink.recs), tt.rows)
			}
		})
	}
}

// cancelingSink cancels the run when it records the first row, as a
// Ctrl-C during a retry's wait would.
type cancelingSink struct {
	memSink
	cancel context.CancelFunc
}

func (c *cancelingSink) Write(r *results.Record) error {
	c.cancel()
	return c.memSink.Write(r)
}

func TestNoRetryAfterInterrupt(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		sink := &cancelingSink{cancel: cancel}
		s := &scriptSender{waits: []float64{5, 5}}
		out, err := Run(ctx, &offsets{at: msList(0)}, s, sink, Options{Retry: &RetryPolicy{MaxAttempts: 3}, Wait: sleep.Until})
		if !errors.Is(err, ErrInterrupted) || len(sink.recs) != 1 || out.Retries != 0 {
			t.Fatalf("err %v rows %d out %+v", err, len(sink.recs), out)
		}
	})
}
