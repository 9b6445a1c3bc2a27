package campaign

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/schedule"
)

// RampFactor is how many times the rate the burst plan's later waves were
// admitted at the main job's ramp reaches (RampSizing): its top must
// overrun a deployment's drain by enough, past its bucket and burst
// allowance, for the scheduled group to hold the 67 usable waits a group
// needs to be tested. bench/twin-unseen.sh's target c (400 PTU, 3 s,
// 50%: some 14 requests/s of the default request) refused none of the
// default ramp's (3 to 24/s over 12 s), 69 at 40/s, 125 at 50/s and 182
// at 60/s (the embedded simulator with its settings); its waves after
// the first admitted 40, 23 and 21: 20/s, the factor's 50/s.
const RampFactor = 2.5

// RampSizing sizes the main job's scheduled plan from the burst plan run
// before it: the last phase's top rate (a ramp's To) is raised to
// RampFactor × the most requests a wave after the first admitted (first
// attempts answered 2xx) ÷ the waves' gap, when that is more than the
// plan's own. A wave that meets a deployment already at 100% admits what
// drained in the gap, so that rate is the drain's, in requests a second
// (its lower bound when a wave admitted every send). The top is at most
// RampFactor × the wave's size ÷ the gap (every send admitted) and at
// most what keeps the plan within MaxRequests, so a run never sends more
// than the bounds its dry run states (Most). A burst plan of one wave,
// or waves no gap apart, leaves the plan as given. Waves that grew to
// first contact (Contact) differ in size: a grown wave's admissions
// count as Size at most, as a whole wave of Size, since what it
// admitted past Size met a deployment under 100% or its allowance not
// yet spent, not the drain (served target c's waves of 40, 80, 40 and
// 40 admitted 40, 46, 11 and 26: a top of 50/s, as before they grew).
type RampSizing struct {
	Config      schedule.Config // the plan as given; its last phase is the ramp
	Size        int             // the burst plan's wave size
	Gap         time.Duration   // the burst plan's gap between waves
	MaxRequests int             // the bound on the plan's requests (dispatch's)
}

// Top is the ramp's top rate given the first attempts each wave of the
// burst plan admitted (by wave, from the first).
func (s RampSizing) Top(admitted []int) float64 {
	last := s.Config.Phases[len(s.Config.Phases)-1]
	most := 0
	if len(admitted) > 1 {
		for _, a := range admitted[1:] {
			most = max(most, a)
		}
	}
	if s.Gap <= 0 || most == 0 {
		return last.To
	}
	top := math.Round(RampFactor*float64(min(most, s.Size))/s.Gap.Seconds()*10) / 10
	return min(max(top, last.To), s.capped())
}

// capped is the most top rate the plan's bound on requests allows, at
// least the plan's own.
func (s RampSizing) capped() float64 {
	last := s.Config.Phases[len(s.Config.Phases)-1]
	most := RampFactor * float64(s.Size) / max(s.Gap.Seconds(), 1e-9)
	if s.MaxRequests <= 0 {
		return max(most, last.To)
	}
	// The others' requests, then the last phase's: (From + To) / 2 × its
	// duration.
	rest := float64(s.Config.Total()) - last.Expected()
	room := 2*(float64(s.MaxRequests)-rest)/last.Duration.Seconds() - last.From
	return max(min(most, math.Floor(room*10)/10), last.To)
}

// Most is the plan at its largest: the top rate Top can reach, and its
// requests.
func (s RampSizing) Most() (top float64, requests int) {
	c := s.at(s.capped())
	return s.capped(), c.Total()
}

// at is the plan with its last phase's top rate at top.
func (s RampSizing) at(top float64) schedule.Config {
	c := s.Config
	c.Phases = append([]schedule.Phase(nil), c.Phases...)
	c.Phases[len(c.Phases)-1].To = top
	return c
}

// Plan is the scheduled plan for the burst plan's admissions by wave.
func (s RampSizing) Plan(admitted []int) (Plan, error) {
	p, err := SchedulePlan(s.at(s.Top(admitted)))
	if err != nil {
		return Plan{}, err
	}
	p.Sizing = &s
	p.Description = s.describe(p)
	return p, nil
}

// describe is the plan's Description with its sizing's rule and bounds.
func (s RampSizing) describe(p Plan) string {
	top, n := s.Most()
	last := s.Config.Phases[len(s.Config.Phases)-1]
	return fmt.Sprintf("%s; sized by the burst plan: its %s phase's top raised to %g× the most first attempts a wave after the first admitted ÷ %s, when that is more than %s: at most %s, %d requests",
		p.Description, last.Name, RampFactor, num.About(s.Gap), num.PerSecond(last.To), num.PerSecond(top), n)
}

// waveAdmissions counts, by wave, a burst plan's first attempts answered
// 2xx (RunPlans' observer of a burst plan before a sized one).
type waveAdmissions struct {
	mu sync.Mutex
	n  []int
}

func (w *waveAdmissions) observe(rec *results.Record) {
	if rec.Shape != results.ShapeBurst || rec.Attempt > 1 || rec.Wave < 0 || rec.Status < 200 || rec.Status > 299 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.n) <= rec.Wave {
		w.n = append(w.n, 0)
	}
	w.n[rec.Wave]++
}

func (w *waveAdmissions) counts() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]int(nil), w.n...)
}

// SizedByBurst is sched, built from c (its last phase a ramp), sized by
// the burst plan before it (RampSizing) within maxRequests for the
// whole job (burst's planned requests included).
func SizedByBurst(sched Plan, c schedule.Config, burst Plan, size int, gap time.Duration, maxRequests int) Plan {
	s := RampSizing{Config: c, Size: size, Gap: gap, MaxRequests: maxRequests - burst.Planned}
	sched.Sizing = &s
	sched.Description = s.describe(sched)
	return sched
}

// countWaves counts the admissions of burst plan p's waves when a plan
// after it (later) is sized by them (a ramp's Sizing, the refill probe's
// units); nil otherwise.
func countWaves(p Plan, later []Plan) *waveAdmissions {
	sized := func(q Plan) bool {
		_, probe := q.Pacer.(*probePacer)
		return q.Sizing != nil || probe
	}
	if p.Shape != results.ShapeBurst || !slices.ContainsFunc(later, sized) {
		return nil
	}
	return &waveAdmissions{}
}

// size is p as RunPlans sends it: sized by the waves counted (w, the
// burst plan's before it) when it asks to be and may be (alone: no
// common timeline, the whole plan on this worker); as given otherwise.
func (w *waveAdmissions) size(p Plan, alone bool) (Plan, error) {
	if p.Sizing == nil || !alone || w == nil {
		return p, nil
	}
	return p.Sizing.Plan(w.counts())
}
