package campaign

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/charplan"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/schedule"
)

// mainJobSizing is the main job's ramp sized by its burst plan under the
// default bound on requests.
func mainJobSizing(maxRequests int) RampSizing {
	b := charplan.Burst()
	return RampSizing{Config: schedule.Config{Phases: charplan.Phases()}, Size: b.Size, Gap: b.Gap, MaxRequests: maxRequests - b.Total()}
}

// TestRampSizedByTheWaves: the main job's ramp keeps its 24/s where the
// burst plan's later waves were admitted at less than 24 ÷ 2.5 a second
// (the embedded documents profile's waves admit 0-1 of 40, served
// targets a, b and d's at most 16, 2 and 8), and reaches 2.5× the rate of
// a deployment that admitted 40, 23 and 21 (bench/twin-unseen.sh's c:
// 50/s), never past the bound on requests nor 2.5× a whole wave.
func TestRampSizedByTheWaves(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		admitted    []int
		maxRequests int
		want        float64
	}{
		{[]int{33, 0, 1, 1}, dispatch.DefaultMaxRequests, 24},
		{[]int{39, 0, 12, 16}, dispatch.DefaultMaxRequests, 24},
		{[]int{40, 40, 23, 21}, dispatch.DefaultMaxRequests, 50},
		{[]int{40, 20, 0, 0}, dispatch.DefaultMaxRequests, 25},
		{[]int{40}, dispatch.DefaultMaxRequests, 24},
		{nil, dispatch.DefaultMaxRequests, 24},
		// 160 burst requests and 9 warmup's leave 231 of 400: (3 + top) ÷ 2 × 12 s.
		{[]int{40, 40, 40, 40}, 400, 35.5},
		// A bound below the plan as given leaves it as given.
		{[]int{40, 40, 40, 40}, 300, 24},
	} {
		s := mainJobSizing(c.maxRequests)
		got := s.Top(c.admitted)
		if got != c.want {
			t.Errorf("waves admitting %v, --max-requests %d: top %v/s, want %v/s", c.admitted, c.maxRequests, got, c.want)
		}
		top, n := s.Most()
		p, err := s.Plan(c.admitted)
		if err != nil {
			t.Fatal(err)
		}
		if got > top || p.Planned > n || (c.maxRequests >= 331 && charplan.Burst().Total()+p.Planned > c.maxRequests) {
			t.Errorf("waves admitting %v, --max-requests %d: top %v/s and %d requests past the stated most, %v/s and %d", c.admitted, c.maxRequests, got, p.Planned, top, n)
		}
	}
}

// admitSender admits the first n of each wave's first attempts and
// refuses the rest.
type admitSender struct {
	mu sync.Mutex
	n  map[int]int
}

func (s *admitSender) Send(_ context.Context, req dispatch.Request, record func(*results.Record)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := req.First()
	r.Status = 200
	if r.Wave >= 0 {
		if s.n[r.Wave] <= 0 {
			r.Status = 429
		}
		s.n[r.Wave]--
	}
	record(&r)
}

// TestRunPlansSizesTheRampFromTheWaves: RunPlans sends a sized
// scheduled plan at the top its burst plan's admissions give (waves of
// 4 a second apart, the later ones admitting 3: a top of 2.5 × 3 = 7.5/s
// over 2 s, from 1/s: 9 sends, not the 3 of the plan as given).
func TestRunPlansSizesTheRampFromTheWaves(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b, err := BurstPlan(burst.Config{Size: 4, Waves: 3, Gap: time.Second}, false)
		if err != nil {
			t.Fatal(err)
		}
		c := schedule.Config{Phases: []schedule.Phase{{Name: "ramp", Duration: 2 * time.Second, From: 1, To: 2}}}
		s, err := SchedulePlan(c)
		if err != nil {
			t.Fatal(err)
		}
		s = SizedByBurst(s, c, b, 4, time.Second, 1000)
		sink := &memSink{}
		if _, err := RunPlans(t.Context(), []Plan{b, s}, &admitSender{n: map[int]int{0: 4, 1: 3, 2: 3}}, sink, Options{RunID: "r", Wait: sleep.Until}); err != nil {
			t.Fatal(err)
		}
		sched := 0
		for _, r := range sink.recs {
			if r.Shape == results.ShapeScheduled {
				sched++
			}
		}
		if sched != 9 {
			t.Errorf("%d scheduled sends, want 9 (1/s to 7.5/s over 2 s)", sched)
		}
	})
}
