package dispatch

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/results"
)

func TestParseShard(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Shard{"0/1": {0, 1}, "0/4": {0, 4}, "3/4": {3, 4}, "007/10": {7, 10}, "9999/10000": {9999, 10000}} {
		got, err := ParseShard(in)
		if err != nil || got != want || got.Validate() != nil {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	bad := map[string]string{
		"4/4": "the index 4 must be between 0 and 3", "0/0": "the count 0 must be between 1 and 10000",
		"x/y": "want I/N", "/4": "want I/N", "1/": "want I/N", "1": "want I/N", "": "want I/N",
		"-1/4": "want I/N", "+1/4": "want I/N", " 1/4": "want I/N", "1/4/4": "want I/N", "1 /4": "want I/N",
		"0/10001":                 "the count 10001 must be",
		"0/99999999999999999999":  "the count 999999999999… must be",
		"99999999999999999999/4":  "the index 999999999999… must be",
		"1/٤":                     "want I/N",
		"0x1/4":                   "want I/N",
		strings.Repeat("1", 1000): "want I/N",
	}
	for in, want := range bad {
		if got, err := ParseShard(in); err == nil || !strings.Contains(err.Error(), want) || len(err.Error()) > 120 {
			t.Errorf("ParseShard(%q) = %v, %v; want an error with %q", in, got, err, want)
		}
	}
}

// FuzzParseShard: whatever the text, ParseShard returns a valid shard
// that prints back as the digits it read, or an error of one short line.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/4", "3/4", "4/4", "0/0", "/4", "x/y", "007/10", "1/٤", "99999999999999999999/4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseShard(in)
		if err != nil {
			if s != (Shard{}) || strings.ContainsAny(err.Error(), "\n\r") || len(err.Error()) > 160 {
				t.Fatalf("ParseShard(%q) = %v, %q", in, s, err)
			}
			return
		}
		if s.Validate() != nil || s.Whole() != (s.Count == 1) {
			t.Fatalf("ParseShard(%q) = %v, which is not valid", in, s)
		}
		back, err := ParseShard(s.String())
		if err != nil || back != s {
			t.Fatalf("ParseShard(%q) = %v; its String %q reads back as %v, %v", in, s, s.String(), back, err)
		}
	})
}

func TestShardShare(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 3, 4, 5, 160, 161} {
		for _, count := range []int{1, 2, 4, 7} {
			sum := 0
			for i := range count {
				s := Shard{i, count}
				owned := 0
				for k := range n {
					if s.Owns(k) {
						owned++
					}
				}
				if got := s.Share(n); got != owned {
					t.Errorf("Shard %v.Share(%d) = %d, owns %d", s, n, got, owned)
				}
				sum += owned
			}
			if sum != n {
				t.Errorf("%d shards own %d of %d arrivals", count, sum, n)
			}
		}
	}
	if (Shard{}).Share(5) != 5 || (Shard{}).String() != "" || !(Shard{}).Whole() {
		t.Error("the zero Shard is not the whole plan")
	}
}

// TestShardsSendThePlanOnce runs one plan as four shards from one Start:
// together they send every arrival exactly once, each with its index in
// the plan as seq, at its planned offset from the common Start, and each
// wave leaves every shard at the same instant.
func TestShardsSendThePlanOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		plan := func() Pacer {
			return &offsets{at: msList(0, 0, 0, 0, 0, 0, 500, 500, 500, 500, 500, 500, 900), wave: []int{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2}}
		}
		start := time.Now().Add(time.Hour)
		// The four workers run at once, as four processes would.
		sinks := make([]*memSink, 4)
		var wg sync.WaitGroup
		for i := range sinks {
			sinks[i] = &memSink{}
			wg.Go(func() {
				s := Shard{i, 4}
				out, err := Run(t.Context(), plan(), &fakeSender{latency: 10 * time.Millisecond}, sinks[i],
					Options{Start: start, Shard: s, Wait: sleep.Until, PaceWindow: time.Millisecond})
				if err != nil || out.Sent != s.Share(13) || out.Written != out.Sent {
					t.Errorf("shard %v: %+v %v", s, out, err)
				}
				for _, r := range sinks[i].recs {
					if !s.Owns(r.Seq) || r.Worker != s.String() {
						t.Errorf("shard %v sent seq %d as worker %q", s, r.Seq, r.Worker)
					}
				}
			})
		}
		wg.Wait()
		var all []results.Record
		for _, sink := range sinks {
			all = append(all, sink.recs...)
		}
		// The whole plan, unsharded, for comparison (from its own start).
		whole := &memSink{}
		if _, err := Run(t.Context(), plan(), &fakeSender{latency: 10 * time.Millisecond}, whole, Options{Wait: sleep.Until}); err != nil {
			t.Fatal(err)
		}
		key := func(r results.Record) [3]float64 { return [3]float64{float64(r.Seq), float64(r.Wave), r.IntendedMS} }
		var got, want [][3]float64
		for _, r := range all {
			got = append(got, key(r))
			if r.SentMS != r.IntendedMS {
				t.Errorf("seq %d sent at %v ms of the common clock, intended %v", r.Seq, r.SentMS, r.IntendedMS)
			}
		}
		for _, r := range whole.recs {
			want = append(want, key(r))
			if r.Worker != "" {
				t.Errorf("an unsharded run recorded worker %q", r.Worker)
			}
		}
		cmp := func(a, b [3]float64) int { return slices.Compare(a[:], b[:]) }
		slices.SortFunc(got, cmp)
		slices.SortFunc(want, cmp)
		if !slices.Equal(got, want) {
			t.Fatalf("the shards sent\n%v\nthe whole plan is\n%v", got, want)
		}
	})
}

// TestStartAheadIsAWait: arrivals go at Start + offset, intended_ms and
// sent_ms count from Start, and a cancel during the wait before it sends
// nothing and returns at once.
func TestStartAheadIsAWait(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		began := time.Now()
		start := began.Add(90 * time.Minute)
		sink := &memSink{}
		_, err := Run(t.Context(), &offsets{at: msList(0, 250)}, &fakeSender{}, sink, Options{Start: start, Wait: sleep.Until})
		if err != nil || len(sink.recs) != 2 {
			t.Fatalf("%v, %d rows", err, len(sink.recs))
		}
		if d := time.Since(began); d != 90*time.Minute+250*time.Millisecond {
			t.Errorf("the plan ended %v after Run began, want 90m0.25s", d)
		}
		for _, r := range sink.bySeq() {
			if r.SentMS != r.IntendedMS || (r.IntendedMS != 0 && r.IntendedMS != 250) {
				t.Errorf("seq %d: intended %v, sent %v", r.Seq, r.IntendedMS, r.SentMS)
			}
		}

		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Minute, cancel)
		began = time.Now()
		sink = &memSink{}
		out, err := Run(ctx, &offsets{at: msList(0, 250)}, &fakeSender{}, sink, Options{Start: began.Add(time.Hour), Wait: sleep.Until})
		if !errors.Is(err, ErrInterrupted) || out.Sent != 0 || len(sink.recs) != 0 {
			t.Fatalf("a cancel before the start: %+v, %v, %d rows", out, err, len(sink.recs))
		}
		if d := time.Since(began); d != time.Minute {
			t.Errorf("Run returned %v after it began, want at the cancel (1m)", d)
		}
	})
}

// TestStartPastSendsLate: a Start already past sends what is due at once,
// recorded late on the common clock; later arrivals keep their time.
func TestStartPastSendsLate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sink := &memSink{}
		_, err := Run(t.Context(), &offsets{at: msList(0, 100, 500)}, &fakeSender{}, sink,
			Options{Start: time.Now().Add(-300 * time.Millisecond), Wait: sleep.Until})
		if err != nil {
			t.Fatal(err)
		}
		want := map[int][2]float64{0: {0, 300}, 1: {100, 300}, 2: {500, 500}}
		for seq, w := range want {
			if r := sink.bySeq()[seq]; r.IntendedMS != w[0] || r.SentMS != w[1] {
				t.Errorf("seq %d: intended %v sent %v, want %v", seq, r.IntendedMS, r.SentMS, w)
			}
		}
	})
}

// TestMaxRequestsBoundsThePlan: the cap is an index of the plan, so every
// shard stops where the whole plan would, and together they send exactly
// MaxRequests.
func TestMaxRequestsBoundsThePlan(t *testing.T) {
	t.Parallel()
	total := 0
	for i := range 3 {
		sink := &memSink{}
		out, err := run(t, &offsets{at: make([]time.Duration, 20)}, &fakeSender{}, sink, Options{MaxRequests: 10, Shard: Shard{i, 3}})
		if err != nil || out.CappedBy != CapMaxRequests || out.Sent != (Shard{i, 3}).Share(10) {
			t.Fatalf("shard %d: %+v %v", i, out, err)
		}
		for seq := range sink.bySeq() {
			if seq >= 10 {
				t.Errorf("shard %d sent seq %d past the cap", i, seq)
			}
		}
		total += out.Sent
	}
	if total != 10 {
		t.Fatalf("three shards sent %d under a cap of 10", total)
	}
	// A shard whose share ends before the cap is not capped.
	out, _ := run(t, &offsets{at: make([]time.Duration, 10)}, &fakeSender{}, &memSink{}, Options{MaxRequests: 10, Shard: Shard{2, 3}})
	if out.CappedBy != NoCap || out.Sent != 3 {
		t.Fatalf("an exact fit: %+v", out)
	}
}
