package sim

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/internal/charplan"
	"github.com/ptuprobe/ptuprobe/schedule"
)

// The defaults are tuned for characterize's own plans, taken from their
// one source (internal/charplan): a burst, then a scheduled plan. Each
// request is the client's default: ~1,000 prompt tokens (varied below)
// and max_tokens 100.
const planMaxTokens = 100

type planEvent struct {
	at      time.Time
	arrival bool
	group   int // 0 burst, 1 scheduled
	delta   float64
}

type eventQueue []planEvent

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at.Equal(q[j].at) {
		return !q[i].arrival && q[j].arrival // completions first
	}
	return q[i].at.Before(q[j].at)
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(planEvent)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// planResult is what a plan run produced: advised waits (wall ms) per
// group and when the last response completed.
type planResult struct {
	waits [2][]float64
	end   time.Duration
}

// planArrivals are the arrivals of characterize's plans, as events. A
// wave leaves the client over a few ms, not at one instant: each burst
// arrival is late by U[0, spread). The scheduled plan starts when the
// burst's last wave has been answered; a generous bound on the latency
// (one second after the last wave) keeps it independent of the model.
func planArrivals(start time.Time, jit *rand.Rand, spread time.Duration) []planEvent {
	var events []planEvent
	bc := charplan.Burst()
	bp := burst.NewPlan(bc)
	for off, _, ok := bp.Next(); ok; off, _, ok = bp.Next() {
		late := time.Duration(jit.Float64() * float64(spread))
		events = append(events, planEvent{at: start.Add(off + late), arrival: true, group: 0})
	}
	schedStart := start.Add(bc.Span() + time.Second)
	sp := schedule.NewPlan(schedule.Config{Phases: charplan.Phases()})
	for off, _, ok := sp.Next(); ok; off, _, ok = sp.Next() {
		events = append(events, planEvent{at: schedStart.Add(off), arrival: true, group: 1})
	}
	return events
}

// runPlan plays characterize's plans against the model with a virtual
// clock: arrivals and completions are events, nothing sleeps.
func runPlan(t testing.TB, cfg Config, jitterSeed uint64, promptChars int, spread time.Duration) planResult {
	t.Helper()
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg.Clock = NewManualClock(start)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := parseRequest([]byte(chatBody(promptChars, planMaxTokens)), kindChat, cfg.DefaultMaxTokens)
	if err != nil {
		t.Fatal(err)
	}
	q := &eventQueue{}
	for _, e := range planArrivals(start, rand.New(rand.NewPCG(jitterSeed, 7)), spread) {
		heap.Push(q, e)
	}
	var res planResult
	for q.Len() > 0 {
		e := heap.Pop(q).(planEvent)
		if !e.arrival {
			s.lim.(*ptuLimiter).bucket.correct(e.at, e.delta)
			s.serving.leave()
			res.end = max(res.end, e.at.Sub(start))
			continue
		}
		r := req
		var o outcome
		s.decidePTU(e.at, targetPTU, false, &r, &o)
		if !o.admitted {
			res.waits[e.group] = append(res.waits[e.group], float64(s.wallMS(o.wait)))
			continue
		}
		actual := cfg.EstimatedCost(r.PromptTokens, o.cached, o.completion)
		heap.Push(q, planEvent{at: e.at.Add(latency(&o)), delta: actual - o.estimate})
	}
	return res
}

// percentile is Hyndman–Fan type 7, as the analysis computes it.
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	pos := q / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (pos-float64(lo))*(sorted[hi]-sorted[lo])
}

// TestDefaultsMakeALongTail protects DefaultConfig: the characterize plan
// against it must finish in under 30 s and give each group at least 50
// usable 429s, with a short median and a long tail (p99/p50 >= 10), from
// the model itself.
func TestDefaultsMakeALongTail(t *testing.T) {
	t.Parallel()
	// Vary what a real run varies: the seed, the prompt size around 4,000
	// characters and how spread out a wave leaves the client.
	for seed := int64(1); seed <= 24; seed++ {
		cfg := DefaultConfig()
		cfg.Seed = seed
		chars := 3800 + int(seed*37%400)
		spread := time.Duration(seed%5*15+1) * time.Millisecond
		res := runPlan(t, cfg, uint64(seed), chars, spread)
		all := slices.Concat(res.waits[0], res.waits[1])
		slices.Sort(all)
		nb, ns := len(res.waits[0]), len(res.waits[1])
		p50, p99 := percentile(all, 50), percentile(all, 99)
		if seed == 1 {
			t.Logf("seed 1: burst %d, scheduled %d 429s; p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms; last response at %v",
				nb, ns, p50, percentile(all, 90), p99, all[len(all)-1], res.end)
		}
		if nb < 50 || ns < 50 {
			t.Errorf("seed %d: burst %d, scheduled %d 429s; want >= 50 each", seed, nb, ns)
		}
		if p99/p50 < 10 {
			t.Errorf("seed %d: p99/p50 = %.1f (p50 %.0f ms, p99 %.0f ms); want >= 10", seed, p99/p50, p50, p99)
		}
		if res.end > 30*time.Second {
			t.Errorf("seed %d: plan ends at %v; want < 30s", seed, res.end)
		}
	}
}
