package campaign

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/schedule"
)

type okSender struct{ latency time.Duration }

func (s okSender) Send(_ context.Context, req dispatch.Request, record func(*results.Record)) {
	time.Sleep(s.latency)
	r := req.First()
	r.Status = 200
	record(&r)
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

func plans(t *testing.T) []Plan {
	t.Helper()
	b, err := BurstPlan(burst.Config{Size: 3, Waves: 2, Gap: time.Second}, false)
	if err != nil {
		t.Fatal(err)
	}
	s, err := SchedulePlan(schedule.Config{Phases: []schedule.Phase{{Name: "c", Duration: 2 * time.Second, From: 5, To: 5}}})
	if err != nil {
		t.Fatal(err)
	}
	return []Plan{b, s}
}

// TestPlansRunInOrderUnderOneRunID runs a burst then a schedule: every row
// carries the one run id and its shape's default group, the schedule starts
// after the burst's last answer, and Watch sees each plan begin and end.
func TestPlansRunInOrderUnderOneRunID(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sink := &memSink{}
		var watched []string
		var ended []int
		start := time.Now()
		out, err := RunPlans(t.Context(), plans(t), okSender{latency: 250 * time.Millisecond}, sink, Options{
			RunID: "run1", Wait: sleep.Until,
			Watch: func(p Plan) (func(*results.Record), func(dispatch.Outcome)) {
				watched = append(watched, p.Shape)
				return nil, func(o dispatch.Outcome) { ended = append(ended, o.Sent) }
			},
		})
		if err != nil || out.Sent != 16 || out.Written != 16 || len(out.Plans) != 2 {
			t.Fatalf("out %+v err %v", out, err)
		}
		if len(watched) != 2 || watched[0] != results.ShapeBurst || len(ended) != 2 || ended[0] != 6 || ended[1] != 10 {
			t.Fatalf("watched %v ended %v", watched, ended)
		}
		groups := map[string]int{}
		for _, r := range sink.recs {
			if r.RunID != "run1" {
				t.Fatalf("row with run id %q", r.RunID)
			}
			groups[r.Group]++
		}
		if groups[results.GroupBurst] != 6 || groups[results.GroupScheduled] != 10 {
			t.Fatalf("groups %v", groups)
		}
		// Burst: waves at 0 and 1 s, answered by 1.25 s; the schedule's 10
		// arrivals 0.2 s apart, the last answered 1.8 + 0.25 s later.
		if got, want := time.Since(start), 1250*time.Millisecond+2050*time.Millisecond; got != want {
			t.Fatalf("took %v, want %v", got, want)
		}
	})
}

// TestOneBudgetForAllPlans gives the plans 1.5 s in all: the burst uses
// 1.25 s of it, so the schedule may send only for what is left.
func TestOneBudgetForAllPlans(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		out, err := RunPlans(t.Context(), plans(t), okSender{latency: 250 * time.Millisecond}, &memSink{},
			Options{Budget: 1500 * time.Millisecond, Group: "mine", Wait: sleep.Until})
		if err != nil {
			t.Fatal(err)
		}
		// 0.25 s left: the schedule's arrivals at 0 and 0.2 s go, 0.4 s does not.
		if out.Plans[1].Sent != 2 || out.CappedBy != dispatch.CapMaxDuration {
			t.Fatalf("out %+v", out)
		}
		// A budget spent before a plan starts caps without sending it.
		out, err = RunPlans(t.Context(), plans(t), okSender{latency: 2 * time.Second}, &memSink{},
			Options{Budget: 1500 * time.Millisecond, Wait: sleep.Until})
		if err != nil || len(out.Plans) != 1 || out.CappedBy != dispatch.CapMaxDuration {
			t.Fatalf("spent budget: out %+v err %v", out, err)
		}
	})
}

func TestInterruptStopsThePlans(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(500*time.Millisecond, cancel)
		out, err := RunPlans(ctx, plans(t), okSender{latency: 100 * time.Millisecond}, &memSink{}, Options{Wait: sleep.Until})
		if !Interrupted(err) || len(out.Plans) != 1 || out.Sent != 3 || out.Written != 3 {
			t.Fatalf("out %+v err %v", out, err)
		}
	})
}
