package dispatch

import (
	"context"
	"errors"
	"maps"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/results"
)

// Tests run the engine inside a testing/synctest bubble: time is the
// bubble's fake clock, which moves only when every goroutine waits, so
// nothing really sleeps and every timing is exact. The pacing loop waits on
// a runtime timer there (sleep.Until); the precise wait is tested on the real
// clock on its own.

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

func msList(n ...int) []time.Duration {
	out := make([]time.Duration, len(n))
	for i, v := range n {
		out[i] = time.Duration(v) * time.Millisecond
	}
	return out
}

// fakeSender answers 429 advising a wait of seq ms after latency, and
// tracks how many of its calls run at once.
type fakeSender struct {
	latency time.Duration
	block   bool // wait for the context instead
	now     atomic.Int64
	peak    atomic.Int64
}

func (s *fakeSender) Send(ctx context.Context, req Request, record func(*results.Record)) {
	n := s.now.Add(1)
	defer s.now.Add(-1)
	for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
	}
	r := req.First()
	defer record(&r)
	if s.block {
		<-ctx.Done()
		r.Error = results.ClassCanceled
		return
	}
	time.Sleep(s.latency)
	r.Status, r.WaitMS, r.WaitSource = 429, float64(req.Seq), results.WaitRetryAfterMS
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
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[int]results.Record{}
	for _, r := range m.recs {
		out[r.Seq] = r
	}
	return out
}

// run runs the engine in a synctest bubble with the runtime-timer wait.
func run(t *testing.T, p Pacer, s Sender, sink Sink, o Options) (out Outcome, err error) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		o.Wait = sleep.Until
		out, err = Run(t.Context(), p, s, sink, o)
	})
	return out, err
}

func TestAbsoluteSchedule(t *testing.T) {
	t.Parallel()
	sink := &memSink{}
	p := &offsets{at: msList(0, 0, 0, 1000, 1000, 1000), wave: []int{0, 0, 0, 1, 1, 1}}
	out, err := run(t, p, &fakeSender{latency: 300 * time.Millisecond}, sink, Options{RunID: "r", Shape: "burst", Group: "g"})
	if err != nil || out.Sent != 6 || out.Written != 6 || out.CappedBy != NoCap {
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
	sink := &memSink{}
	p := &offsets{at: msList(0, 10, 20, 500)}
	if _, err := run(t, p, &fakeSender{latency: 100 * time.Millisecond}, sink, Options{MaxInFlight: 1}); err != nil {
		t.Fatal(err)
	}
	got := sink.bySeq()
	// One request at a time, 100 ms each: seq 1 and 2 wait for the one
	// before; seq 3 leaves on time, the late ones did not shift it.
	want := map[int][2]float64{0: {0, 0}, 1: {10, 100}, 2: {20, 200}, 3: {500, 500}}
	for seq, w := range want {
		if r := got[seq]; r.IntendedMS != w[0] || r.SentMS != w[1] {
			t.Errorf("seq %d: intended %v sent %v, want %v", seq, r.IntendedMS, r.SentMS, w)
		}
	}
}

// TestPeakInFlightIsTheBound sends ten arrivals at once through three
// slots: exactly three requests run at once, never more, and the others
// leave as slots free, each one request's latency later.
func TestPeakInFlightIsTheBound(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{2, 3, 7} {
		sink := &memSink{}
		s := &fakeSender{latency: 100 * time.Millisecond}
		_, err := run(t, &offsets{at: make([]time.Duration, 10)}, s, sink, Options{MaxInFlight: limit})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.peak.Load(); got != int64(limit) {
			t.Errorf("max in flight %d: peak %d requests at once", limit, got)
		}
		for seq, r := range sink.bySeq() {
			if want := float64(seq/limit) * 100; r.SentMS != want {
				t.Errorf("max in flight %d: seq %d sent at %v, want %v", limit, seq, r.SentMS, want)
			}
		}
	}
}

func TestCaps(t *testing.T) {
	t.Parallel()
	sink := &memSink{}
	out, err := run(t, &offsets{at: msList(0, 1, 2, 3, 4)}, &fakeSender{}, sink, Options{MaxRequests: 3})
	if err != nil || out.Sent != 3 || out.CappedBy != CapMaxRequests || len(sink.recs) != 3 {
		t.Fatalf("max requests: %+v %v", out, err)
	}
	out, err = run(t, &offsets{at: msList(0, 100, 200, 300)}, &fakeSender{}, &memSink{}, Options{MaxDuration: 250 * time.Millisecond})
	if err != nil || out.Sent != 3 || out.CappedBy != CapMaxDuration {
		t.Fatalf("duration: %+v %v", out, err)
	}
	out, _ = run(t, &offsets{at: msList(0, 1, 2)}, &fakeSender{}, &memSink{}, Options{MaxRequests: 3})
	if out.CappedBy != NoCap {
		t.Fatalf("an exact fit was reported capped: %+v", out)
	}
}

func TestWaitWaveStartsAfterCompletionPlusGap(t *testing.T) {
	t.Parallel()
	sink := &memSink{}
	p := &offsets{at: msList(0, 0, 1000, 1000), wave: []int{0, 0, 1, 1}}
	// Each request takes 300 ms, sent one at a time: wave 0 ends at 600 ms,
	// so wave 1 starts at 600 + gap 1000 = 1600 ms, not its planned 1000.
	_, err := run(t, p, &fakeSender{latency: 300 * time.Millisecond}, sink, Options{MaxInFlight: 1, WaitWave: true, WaveGap: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r := sink.bySeq()[2]; r.IntendedMS != 1600 || r.SentMS != 1600 {
		t.Fatalf("wave 1 intended %v sent %v, want 1600", r.IntendedMS, r.SentMS)
	}
	if r := sink.bySeq()[3]; r.IntendedMS != 1600 || r.SentMS != 1900 {
		t.Fatalf("wave 1's second request intended %v sent %v, want 1600 and 1900", r.IntendedMS, r.SentMS)
	}
}

// cancelAfter is a Pacer that cancels the run when asked for arrival n.
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

// TestInterruptKeepsEverySentRequest cancels after three sends to a
// target that never answers: the three are recorded as canceled once the
// grace has passed, not before, and nothing else is sent.
func TestInterruptKeepsEverySentRequest(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sink := &memSink{}
		ctx, cancel := context.WithCancel(t.Context())
		start := time.Now()
		out, err := Run(ctx, &cancelAfter{n: 3, cancel: cancel}, &fakeSender{block: true}, sink,
			Options{Grace: 1500 * time.Millisecond, Wait: sleep.Until})
		if !errors.Is(err, ErrInterrupted) || !out.Interrupted {
			t.Fatalf("err = %v, out = %+v", err, out)
		}
		if out.Sent != 3 || len(sink.recs) != 3 {
			t.Fatalf("sent %d, recorded %d", out.Sent, len(sink.recs))
		}
		for _, r := range sink.recs {
			if r.Error != results.ClassCanceled {
				t.Fatalf("in-flight request recorded as %+v", r)
			}
		}
		// Sends at 1, 2, 3 ms; the cancel at 3 ms; the grace ends 1.5 s later.
		if got := time.Since(start); got != 3*time.Millisecond+1500*time.Millisecond {
			t.Fatalf("Run returned after %v, want the grace of 1.5 s after the cancel", got)
		}
	})
}

type failingSink struct{}

func (failingSink) Write(*results.Record) error { return errors.New("disk full") }

func TestSinkErrorIsReturned(t *testing.T) {
	t.Parallel()
	out, err := run(t, &offsets{at: msList(0, 10, 20, 30)}, &fakeSender{latency: 5 * time.Millisecond}, failingSink{}, Options{MaxInFlight: 1})
	if err == nil || err.Error() != "disk full" {
		t.Fatalf("err = %v", err)
	}
	// Sending stops once a row cannot be recorded: the first fails at 5 ms,
	// before the second is due.
	if out.Sent != 1 || out.Written != 0 {
		t.Fatalf("sent %d, written %d after the sink failed", out.Sent, out.Written)
	}
}

// TestWaitPreciseOnTheRealClock checks the production wait on the real
// clock: it never returns before its time, and a canceled context ends it.
func TestWaitPreciseOnTheRealClock(t *testing.T) {
	t.Parallel()
	wait, release := newPreciseWait()
	defer release()
	for _, d := range []time.Duration{0, 300 * time.Microsecond, 2 * time.Millisecond} {
		at := time.Now().Add(d)
		if !wait(context.Background(), at) {
			t.Fatalf("wait %v returned false", d)
		}
		if now := time.Now(); now.Before(at) {
			t.Fatalf("wait %v returned %v early", d, at.Sub(now))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Millisecond, cancel)
	if wait(ctx, time.Now().Add(time.Hour)) {
		t.Fatal("a canceled wait reported it reached its time")
	}
	// The engine on the real clock: no send leaves before its intended time.
	sink := &memSink{}
	out, err := Run(context.Background(), &offsets{at: msList(0, 1, 2, 3, 4)}, nopSender{}, sink, Options{})
	if err != nil || out.Written != 5 {
		t.Fatalf("out %+v err %v", out, err)
	}
	for _, r := range sink.recs {
		if r.SentMS < r.IntendedMS {
			t.Errorf("seq %d sent at %v ms, before its intended %v ms", r.Seq, r.SentMS, r.IntendedMS)
		}
	}
}

type nopSender struct{}

func (nopSender) Send(_ context.Context, req Request, record func(*results.Record)) {
	r := req.First()
	r.Status = 200
	record(&r)
}

// retrySender answers each request with a 429 advising 100 ms, then after
// waiting that (unless the run was canceled) a 200 as a second attempt:
// a Sender with a retry owner of its own.
type retrySender struct{}

func (retrySender) Send(ctx context.Context, req Request, record func(*results.Record)) {
	r := req.First()
	r.Status, r.WaitMS = 429, 100
	record(&r)
	if sleep.For(req.Run, 100*time.Millisecond) != nil {
		return
	}
	r2 := req.First()
	r2.Attempt, r2.Status, r2.WaitMS = 2, 200, results.None
	r2.IntendedMS = ms(time.Since(req.Start))
	r2.SentMS = r2.IntendedMS
	record(&r2)
}

// TestSenderAttemptsAreRowsAndRetries: every attempt a Sender reports is a
// row, those after the first are counted as retries, and after a cancel
// the Sender's run context tells it to start none.
func TestSenderAttemptsAreRowsAndRetries(t *testing.T) {
	t.Parallel()
	sink := &memSink{}
	out, err := run(t, &offsets{at: msList(0, 10, 20)}, retrySender{}, sink, Options{})
	if err != nil || out.Sent != 3 || out.Retries != 3 || out.Written != 6 {
		t.Fatalf("out %+v err %v", out, err)
	}
	for _, r := range sink.recs {
		if r.Attempt == 2 && r.SentMS != float64(r.Seq*10+100) {
			t.Errorf("seq %d's retry sent at %v", r.Seq, r.SentMS)
		}
	}
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(50*time.Millisecond, cancel)
		sink := &memSink{}
		out, err := Run(ctx, &offsets{at: msList(0)}, retrySender{}, sink, Options{Wait: sleep.Until})
		if !errors.Is(err, ErrInterrupted) || out.Retries != 0 || len(sink.recs) != 1 {
			t.Fatalf("a retry after the cancel: out %+v err %v rows %d", out, err, len(sink.recs))
		}
	})
}

type discardSink struct{}

func (discardSink) Write(*results.Record) error { return nil }

// BenchmarkDispatch measures the engine's own cost per request (pacing,
// hand-off, record, sink) with a sender that does nothing.
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

// us is a list of offsets in microseconds.
func us(n ...int) []time.Duration {
	out := make([]time.Duration, len(n))
	for i, v := range n {
		out[i] = time.Duration(v) * time.Microsecond
	}
	return out
}

// sendTimes runs p with window under synctest (every time exact) and
// returns how many arrivals went at each send time (ms), checking that
// none went before its time.
func sendTimes(t *testing.T, p *offsets, window time.Duration) map[float64]int {
	t.Helper()
	sink := &memSink{}
	if _, err := run(t, p, &fakeSender{}, sink, Options{PaceWindow: window}); err != nil {
		t.Fatal(err)
	}
	sent := map[float64]int{}
	for seq, r := range sink.bySeq() {
		if r.SentMS < r.IntendedMS {
			t.Errorf("seq %d: intended %v ms, sent %v ms", seq, r.IntendedMS, r.SentMS)
		}
		sent[r.SentMS]++
	}
	return sent
}

// TestPaceWindowFollowsTheSpacing: an arrival waits for the next only
// when that one is due within PaceWindow and either within half the mean
// spacing (bunched) or at least two arrivals after the last one held
// (evenly spaced: one in three goes with the next), and only until its
// time. Evenly spaced arrivals 500 µs apart (2,000/s) and 200 µs apart
// (5,000/s) go two at their own time, then one held for the next (a
// fixed 500 µs window sent 5,000/s in threes, the first 500 µs late);
// 1,000/s (past
// the window) each at its own; arrivals in pairs 50 µs apart, a
// millisecond between pairs,
// go pair by pair at the second one's time once the mean spacing has
// seen a long gap (the first pair's is all it knows at first: 50 µs, so
// it is not held, and the ration has not yet passed two arrivals); a pair
// after a long pause goes together too; window 0 holds nothing.
func TestPaceWindowFollowsTheSpacing(t *testing.T) {
	t.Parallel()
	const window = 500 * time.Microsecond
	even := func(n int, gap time.Duration) *offsets {
		p := &offsets{}
		for i := range n {
			p.at = append(p.at, time.Millisecond+time.Duration(i)*gap)
		}
		return p
	}
	for _, tt := range []struct {
		name string
		p    *offsets
		want map[float64]int
	}{
		{"5000/s", even(6, 200*time.Microsecond), map[float64]int{1: 1, 1.2: 1, 1.6: 2, 1.8: 1, 2: 1}},
		{"2000/s", even(7, 500*time.Microsecond), map[float64]int{1: 1, 1.5: 1, 2.5: 2, 3: 1, 4: 2}},
		{"1000/s", even(4, time.Millisecond), map[float64]int{1: 1, 2: 1, 3: 1, 4: 1}},
		{"pairs", &offsets{at: us(1000, 1050, 2000, 2050, 3000, 3050)}, map[float64]int{1: 1, 1.05: 1, 2.05: 2, 3.05: 2}},
		{"a pause, then a pair", &offsets{at: us(1000, 1100, 1200, 1300, 20000, 30000, 30300)},
			map[float64]int{1: 1, 1.1: 1, 1.3: 2, 20: 1, 30.3: 2}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sent := sendTimes(t, tt.p, window)
			if !maps.Equal(sent, tt.want) {
				t.Fatalf("send times %v, want %v", sent, tt.want)
			}
			tt.p.i = 0
			for at, n := range sendTimes(t, tt.p, 0) {
				if n != 1 {
					t.Fatalf("window 0: %d arrivals sent at %v ms", n, at)
				}
			}
		})
	}
}

// TestPaceWindowHoldsNoneForACappedNext: an arrival whose next is past
// MaxRequests or MaxDuration (it will not be sent) goes at its own time,
// where the ration would have held it: 2,000/s, the third arrival the
// last one sent.
func TestPaceWindowHoldsNoneForACappedNext(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{{MaxRequests: 3}, {MaxDuration: 2200 * time.Microsecond}} {
		o.PaceWindow = 500 * time.Microsecond
		sink := &memSink{}
		if _, err := run(t, &offsets{at: us(1000, 1500, 2000, 2500, 3000)}, &fakeSender{}, sink, o); err != nil {
			t.Fatal(err)
		}
		sent := map[float64]int{}
		for _, r := range sink.bySeq() {
			sent[r.SentMS]++
		}
		if want := map[float64]int{1: 1, 1.5: 1, 2: 1}; !maps.Equal(sent, want) {
			t.Fatalf("%+v: send times %v, want %v", o, sent, want)
		}
	}
}

// TestPaceFixedWindow: with PaceFixed an arrival waits for the next
// whenever that one is due within the window, evenly spaced or not:
// 2,000/s and 5,000/s go in pairs at the second one's time; 1,000/s (a
// millisecond apart, past the window) each at its own.
func TestPaceFixedWindow(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		at   []time.Duration
		want map[float64]int
	}{
		{"2000/s", us(1000, 1500, 2000, 2500, 3000, 3500), map[float64]int{1.5: 2, 2.5: 2, 3.5: 2}},
		{"5000/s", us(1000, 1200, 1400, 1600), map[float64]int{1.2: 2, 1.6: 2}},
		{"1000/s", us(1000, 2000, 3000), map[float64]int{1: 1, 2: 1, 3: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sink := &memSink{}
			if _, err := run(t, &offsets{at: tt.at}, &fakeSender{}, sink, Options{PaceWindow: 500 * time.Microsecond, PaceFixed: true}); err != nil {
				t.Fatal(err)
			}
			sent := map[float64]int{}
			for _, r := range sink.bySeq() {
				sent[r.SentMS]++
			}
			if !maps.Equal(sent, tt.want) {
				t.Fatalf("send times %v, want %v", sent, tt.want)
			}
		})
	}
}

// BenchmarkPaceArrival is the pacing loop's own cost per arrival when
// every arrival is ahead of its time (the pace window reckoned, the mean
// spacing followed): arrivals 200 µs apart from a start an hour ahead,
// with a wait that returns at once and an instant sender.
func BenchmarkPaceArrival(b *testing.B) {
	b.ReportAllocs()
	at := make([]time.Duration, b.N)
	for i := range at {
		at[i] = time.Duration(i) * 200 * time.Microsecond
	}
	noWait := func(ctx context.Context, _ time.Time) bool { return ctx.Err() == nil }
	b.ResetTimer()
	_, err := Run(context.Background(), &offsets{at: at}, nopSender{}, discardSink{}, Options{
		MaxRequests: b.N + 1, PaceWindow: 500 * time.Microsecond, Start: time.Now().Add(time.Hour), Wait: noWait,
	})
	if err != nil {
		b.Fatal(err)
	}
}

// TestIdleWorkerIsReused: when a worker is idle, an arrival goes to it
// rather than to a new one, so a target that answers at once is served by
// one worker, not by MaxInFlight of them.
func TestIdleWorkerIsReused(t *testing.T) {
	t.Parallel()
	at := make([]time.Duration, 500)
	for i := range at {
		at[i] = time.Duration(i) * time.Millisecond
	}
	s := &goroutineSender{ids: map[string]bool{}}
	out, err := run(t, &offsets{at: at}, s, &memSink{}, Options{MaxInFlight: 64})
	if err != nil || out.Written != len(at) {
		t.Fatalf("out=%+v err=%v", out, err)
	}
	if len(s.ids) != 1 {
		t.Errorf("%d worker goroutines served %d spaced arrivals, want 1", len(s.ids), len(at))
	}
}

// goroutineSender answers at once and notes which goroutine called it.
type goroutineSender struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (s *goroutineSender) Send(_ context.Context, req Request, record func(*results.Record)) {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	s.mu.Lock()
	s.ids[id] = true
	s.mu.Unlock()
	r := req.First()
	r.Status = 200
	record(&r)
}
