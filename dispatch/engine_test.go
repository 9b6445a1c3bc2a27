package dispatch

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// virtualClock jumps to a timer's deadline as soon as the timer is made, so
// the engine never really sleeps; senders move it forward to model latency.
type virtualClock struct {
	mu  sync.Mutex
	now time.Time
}

func newVirtualClock() *virtualClock { return &virtualClock{now: time.Unix(1_700_000_000, 0)} }

func (c *virtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *virtualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// AdvanceTo moves the clock to t unless it is already past it.
func (c *virtualClock) AdvanceTo(t time.Time) {
	c.mu.Lock()
	if t.After(c.now) {
		c.now = t
	}
	c.mu.Unlock()
}

func (c *virtualClock) NewTimer(d time.Duration) Timer {
	c.Advance(d)
	ch := make(chan time.Time, 1)
	ch <- c.Now()
	return firedTimer(ch)
}

type firedTimer chan time.Time

func (t firedTimer) C() <-chan time.Time { return t }
func (t firedTimer) Stop() bool          { return false }

// offsets is a Pacer over fixed offsets and waves.
type offsets struct {
	at   []time.Duration
	wave []int
	i    int
}

func (o *offsets) Next() (time.Duration, int, bool) {
	if o.i >= len(o.at) {
		return 0, 0, false
	}
	i := o.i
	o.i++
	w := results.None
	if o.wave != nil {
		w = o.wave[i]
	}
	return o.at[i], w, true
}

// fakeSender answers 429 with a wait equal to seq and completes latency
// after its send time (virtual time from the run start, base).
type fakeSender struct {
	clk     *virtualClock
	base    time.Time
	latency time.Duration
	block   bool // wait for the context instead
}

func (s *fakeSender) Send(ctx context.Context, seq int, r *results.Record) {
	if s.block {
		<-ctx.Done()
		r.Error = results.ErrCanceled
		return
	}
	s.clk.AdvanceTo(s.base.Add(time.Duration(r.SentMS*float64(time.Millisecond)) + s.latency))
	r.Status, r.WaitMS, r.WaitSource = 429, float64(seq), results.WaitRetryAfterMS
}

type memSink struct {
	mu   sync.Mutex
	recs []results.Record
}

func (m *memSink) Write(r *results.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs = append(m.recs, *r)
	return nil
}

func (m *memSink) bySeq() map[int]results.Record {
	out := map[int]results.Record{}
	for _, r := range m.recs {
		out[r.Seq] = r
	}
	return out
}

func ms10(n ...int) []time.Duration {
	out := make([]time.Duration, len(n))
	for i, v := range n {
		out[i] = time.Duration(v) * time.Millisecond
	}
	return out
}

func TestAbsoluteSchedule(t *testing.T) {
	t.Parallel()
	clk := newVirtualClock()
	sink := &memSink{}
	p := &offsets{at: ms10(0, 0, 0, 1000, 1000, 1000), wave: []int{0, 0, 0, 1, 1, 1}}
	out, err := Run(context.Background(), p, &fakeSender{clk: clk}, sink, Options{RunID: "r", Shape: "burst", Group: "g", Clock: clk})
	if err != nil || out.Sent != 6 || out.Written != 6 {
		t.Fatalf("out=%+v err=%v", out, err)
	}
	for seq, r := range sink.bySeq() {
		if r.SentMS != r.IntendedMS || r.IntendedMS != float64(p.at[seq].Milliseconds()) || r.Wave != p.wave[seq] {
			t.Errorf("seq %d: intended %v sent %v wave %d", seq, r.IntendedMS, r.SentMS, r.Wave)
		}
		if r.RunID != "r" || r.Shape != "burst" || r.Group != "g" || r.Attempt != 1 || r.WaitMS != float64(seq) {
			t.Errorf("seq %d: %+v", seq, r)
		}
	}
}

func TestLateSendIsRecordedNotDropped(t *testing.T) {
	t.Parallel()
	clk := newVirtualClock()
	sink := &memSink{}
	p := &offsets{at: ms10(0, 10, 20, 500)}
	_, err := Run(context.Background(), p, &fakeSender{clk: clk, base: clk.Now(), latency: 100 * time.Millisecond}, sink, Options{MaxInFlight: 1, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	got := sink.bySeq()
	want := map[int][2]float64{0: {0, 0}, 1: {10, 100}, 2: {20, 200}, 3: {500, 500}}
	for seq, w := range want {
		if r := got[seq]; r.IntendedMS != w[0] || r.SentMS != w[1] {
			t.Errorf("seq %d: intended %v sent %v, want %v", seq, r.IntendedMS, r.SentMS, w)
		}
	}
	// The late sends did not shift the schedule: seq 3 left on time.
}

func TestCaps(t *testing.T) {
	t.Parallel()
	clk := newVirtualClock()
	sink := &memSink{}
	out, err := Run(context.Background(), &offsets{at: ms10(0, 1, 2, 3, 4)}, &fakeSender{clk: clk}, sink, Options{MaxRequests: 3, Clock: clk})
	if err != nil || out.Sent != 3 || out.CappedBy != "max-requests" || len(sink.recs) != 3 {
		t.Fatalf("max-requests: %+v %v", out, err)
	}
	sink = &memSink{}
	out, err = Run(context.Background(), &offsets{at: ms10(0, 100, 200, 300)}, &fakeSender{clk: clk}, sink, Options{MaxDuration: 250 * time.Millisecond, Clock: clk})
	if err != nil || out.Sent != 3 || out.CappedBy != "duration" {
		t.Fatalf("duration: %+v %v", out, err)
	}
	out, _ = Run(context.Background(), &offsets{at: ms10(0, 1, 2)}, &fakeSender{clk: clk}, &memSink{}, Options{MaxRequests: 3, Clock: clk})
	if out.CappedBy != "" {
		t.Fatalf("an exact fit was reported capped: %+v", out)
	}
}

func TestWaitWaveStartsAfterCompletionPlusGap(t *testing.T) {
	t.Parallel()
	clk := newVirtualClock()
	sink := &memSink{}
	p := &offsets{at: ms10(0, 0, 1000, 1000), wave: []int{0, 0, 1, 1}}
	// Each request takes 300 ms, sent one at a time: wave 0 ends at 600 ms,
	// so wave 1 starts at 600 + gap 1000 = 1600 ms, not its planned 1000.
	_, err := Run(context.Background(), p, &fakeSender{clk: clk, base: clk.Now(), latency: 300 * time.Millisecond}, sink,
		Options{MaxInFlight: 1, WaitWave: true, WaveGap: time.Second, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if r := sink.bySeq()[2]; r.IntendedMS != 1600 || r.SentMS != 1600 {
		t.Fatalf("wave 1 intended %v sent %v, want 1600", r.IntendedMS, r.SentMS)
	}
}

func TestInterruptKeepsEverySentRequest(t *testing.T) {
	t.Parallel()
	clk := newVirtualClock()
	sink := &memSink{}
	ctx, cancel := context.WithCancel(context.Background())
	// A pacer that cancels the run after handing out three arrivals.
	p := &cancelAfter{n: 3, cancel: cancel}
	out, err := Run(ctx, p, &fakeSender{clk: clk, block: true}, sink, Options{Clock: clk, Grace: time.Second})
	if !errors.Is(err, ErrInterrupted) || !out.Interrupted {
		t.Fatalf("err = %v, out = %+v", err, out)
	}
	if out.Sent != 3 || len(sink.recs) != 3 {
		t.Fatalf("sent %d, recorded %d", out.Sent, len(sink.recs))
	}
	for _, r := range sink.recs {
		if r.Error != results.ErrCanceled {
			t.Fatalf("in-flight request recorded as %+v", r)
		}
	}
}

type cancelAfter struct {
	n, i   int
	cancel context.CancelFunc
}

func (c *cancelAfter) Next() (time.Duration, int, bool) {
	if c.i == c.n {
		c.cancel()
	}
	c.i++
	return time.Duration(c.i) * time.Millisecond, results.None, true
}

type failingSink struct{}

func (failingSink) Write(*results.Record) error { return errors.New("disk full") }

func TestSinkErrorIsReturned(t *testing.T) {
	t.Parallel()
	clk := newVirtualClock()
	out, err := Run(context.Background(), &offsets{at: ms10(0, 10, 20, 30)}, &fakeSender{clk: clk}, failingSink{}, Options{Clock: clk, MaxInFlight: 1})
	if err == nil || err.Error() != "disk full" {
		t.Fatalf("err = %v", err)
	}
	// Sending stops once a row cannot be recorded.
	if out.Sent > 2 {
		t.Fatalf("sent %d requests after the sink failed", out.Sent)
	}
}

func TestTally(t *testing.T) {
	t.Parallel()
	tl := NewTally()
	for i := 1; i <= 100; i++ {
		r := results.Blank()
		r.Status, r.WaitMS, r.IntendedMS, r.SentMS = 429, float64(i), 0, 0
		if i == 100 {
			r.SentMS = 25
		}
		tl.Observe(&r)
	}
	r := results.Blank()
	r.Error = results.ErrReset
	tl.Observe(&r)
	s := tl.Snapshot()
	if s.Done != 101 || s.N429 != 100 || s.Late != 1 || s.Errors[results.ErrReset] != 1 || s.Status[0] != 1 {
		t.Fatalf("%+v", s)
	}
	if s.WaitP50 != 50.5 || s.WaitP99 != 99.01 {
		t.Fatalf("p50 %v p99 %v, want type-7 50.5 and 99.01", s.WaitP50, s.WaitP99)
	}
}

type nopSender struct{}

func (nopSender) Send(_ context.Context, _ int, r *results.Record) { r.Status = 200 }

type discardSink struct{}

func (discardSink) Write(*results.Record) error { return nil }

// BenchmarkDispatch measures the engine's own cost per request (pacing,
// slots, goroutine, record, sink) with a sender that does nothing.
func BenchmarkDispatch(b *testing.B) {
	b.ReportAllocs()
	at := make([]time.Duration, b.N)
	b.ResetTimer()
	_, err := Run(context.Background(), &offsets{at: at}, nopSender{}, discardSink{}, Options{MaxRequests: b.N + 1})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkDispatchToCSV adds the real results writer.
func BenchmarkDispatchToCSV(b *testing.B) {
	b.ReportAllocs()
	w, err := results.Create(b.TempDir() + "/results.csv")
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	at := make([]time.Duration, b.N)
	b.ResetTimer()
	if _, err := Run(context.Background(), &offsets{at: at}, nopSender{}, w, Options{MaxRequests: b.N + 1}); err != nil {
		b.Fatal(err)
	}
}
