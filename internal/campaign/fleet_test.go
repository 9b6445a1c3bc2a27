package campaign

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
)

// TestTimelineKeepsEveryPlanOnTheCommonClock: with a Start, the burst
// starts at it and the schedule one Slot later (the burst's span plus a
// gap), not when the burst's last answer came; a plan whose predecessor
// is still being answered at its slot sends late, recorded as late.
func TestTimelineKeepsEveryPlanOnTheCommonClock(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ps := plans(t) // burst 2 × 3, gap 1 s: slot 2 s; then 5/s for 2 s
		if ps[0].Slot != 2*time.Second || ps[1].Slot != 2*time.Second {
			t.Fatalf("slots %v, %v", ps[0].Slot, ps[1].Slot)
		}
		began := time.Now()
		start := began.Add(time.Hour)
		sink := &memSink{}
		var starts []time.Time
		out, err := RunPlans(t.Context(), ps, okSender{latency: 250 * time.Millisecond}, sink, Options{
			Start: start, Shard: dispatch.Shard{Index: 1, Count: 2}, Wait: sleep.Until,
			Watch: func(p Plan) (func(*results.Record), func(dispatch.Outcome)) {
				starts = append(starts, p.Start)
				return nil, nil
			},
		})
		if err != nil || out.Sent != 3+5 {
			t.Fatalf("out %+v err %v", out, err)
		}
		if len(starts) != 2 || !starts[0].Equal(start) || !starts[1].Equal(start.Add(2*time.Second)) {
			t.Fatalf("plans started at %v, want %v and 2 s later", starts, start)
		}
		for _, r := range sink.recs {
			if r.SentMS != r.IntendedMS || r.Seq%2 != 1 || r.Worker != "1/2" {
				t.Errorf("%s seq %d (worker %q): intended %v, sent %v", r.Shape, r.Seq, r.Worker, r.IntendedMS, r.SentMS)
			}
		}
		// The schedule's last arrival (1.8 s into it) answered 0.25 s later.
		if got, want := time.Since(began), time.Hour+2*time.Second+1800*time.Millisecond+250*time.Millisecond; got != want {
			t.Fatalf("took %v, want %v", got, want)
		}

		// Answers slower than the gap: the burst's second wave (at 1 s) is
		// answered at 2.5 s, so the schedule's arrivals due at 0, 0.2 and
		// 0.4 s of its slot go at 0.5 s, late; the rest on time.
		sink = &memSink{}
		start = time.Now().Add(time.Minute)
		if _, err := RunPlans(t.Context(), plans(t), okSender{latency: 1500 * time.Millisecond}, sink, Options{Start: start, Wait: sleep.Until}); err != nil {
			t.Fatal(err)
		}
		late := 0
		for _, r := range sink.recs {
			if r.Shape == results.ShapeScheduled && r.SentMS != r.IntendedMS {
				late++
				if r.SentMS != 500 {
					t.Errorf("scheduled seq %d intended %v went at %v, want 500", r.Seq, r.IntendedMS, r.SentMS)
				}
			}
		}
		if late != 3 {
			t.Errorf("%d scheduled sends late, want 3", late)
		}
	})
}

// TestTimelineBudget: on a timeline the budget counts from Start, so every
// worker caps the same arrivals whatever its answers took.
func TestTimelineBudget(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		for _, latency := range []time.Duration{10 * time.Millisecond, 1500 * time.Millisecond} {
			out, err := RunPlans(t.Context(), plans(t), okSender{latency: latency}, &memSink{},
				Options{Start: time.Now(), Budget: 2500 * time.Millisecond, Wait: sleep.Until})
			// 0.5 s of the schedule's slot is left: arrivals at 0, 0.2, 0.4 s.
			if err != nil || out.Plans[1].Sent != 3 || out.CappedBy != dispatch.CapMaxDuration {
				t.Fatalf("answers in %v: out %+v err %v", latency, out, err)
			}
		}
	})
}

func TestValidateFleet(t *testing.T) {
	t.Parallel()
	now := time.Now()
	waitWave, err := BurstPlan(burst.Config{Size: 4, Waves: 2, Gap: time.Second}, true)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		o     Options
		plans []Plan
		field string // "" when valid
		want  string
	}{
		{name: "start ahead", o: Options{Start: now.Add(time.Hour)}},
		{name: "start within the tolerance", o: Options{Start: now.Add(-StartTolerance / 2)}},
		{name: "one shard of one", o: Options{Shard: dispatch.Shard{Index: 0, Count: 1}}},
		{name: "shards from a start", o: Options{Start: now.Add(time.Minute), Shard: dispatch.Shard{Index: 3, Count: 4}}},
		{name: "a later part begins late", o: Options{Start: now.Add(-time.Hour), Offset: time.Minute}},
		{name: "start past", o: Options{Start: now.Add(-3 * time.Second)}, field: "Start", want: "is 3s in the past"},
		{name: "start years past", o: Options{Start: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)}, field: "Start", want: "2000-01-01T00:00:00Z is"},
		{name: "start too far ahead", o: Options{Start: now.Add(MaxStartAhead + time.Hour)}, field: "Start", want: "25h ahead"},
		{name: "start centuries ahead", o: Options{Start: time.Date(2400, 1, 1, 0, 0, 0, 0, time.UTC)}, field: "Start", want: "2400-01-01T00:00:00Z is"},
		{name: "start at the end of time", o: Options{Start: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)}, field: "Start", want: "ahead"},
		{name: "shards without a start", o: Options{Shard: dispatch.Shard{Index: 1, Count: 4}}, field: "Shard", want: "needs {Start}"},
		{name: "a shard no worker is", o: Options{Start: now, Shard: dispatch.Shard{Index: 4, Count: 4}}, field: "Shard", want: "4/4: the index 4"},
		{name: "wait-wave on a timeline", o: Options{Start: now.Add(time.Minute)}, plans: []Plan{waitWave}, field: "WaitWave", want: "own answers"},
		{name: "negative offset", o: Options{Start: now, Offset: -time.Second}, field: "Offset"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := c.o
			o.MaxInFlight, o.MaxRequests = 10, 100
			j := Job{Plans: c.plans, Output: filepath.Join(t.TempDir(), "r.csv"), Options: o}
			if j.Plans == nil {
				j.Plans = plans(t)
			}
			err := j.validateFleet(now)
			var v *valid.Error
			switch {
			case c.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.field != "" && (!errors.As(err, &v) || v.Name != c.field || !strings.Contains(v.Reason, c.want)):
				t.Fatalf("err = %v, want %s refused with %q", err, c.field, c.want)
			}
		})
	}
}
