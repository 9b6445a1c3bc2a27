package sim

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// The characterize plan the defaults are tuned for (issue 5, cmd's
// DefaultCharacterize*): a burst of 4 waves × 40 requests 2 s apart, then
// a scheduled plan "warmup:3s@3/s", "ramp:12s@3/s-24/s". Requests are the
// client's default: ~1,000 prompt tokens, max_tokens 100.
const (
	planWaves        = 4
	planWaveSize     = 40
	planWaveGap      = 2 * time.Second
	planWaveSpread   = 30 * time.Millisecond // a wave leaves the client over a few ms
	planWarmupRate   = 3.0                   // requests/s, under the sustainable ~7/s
	planWarmup       = 3 * time.Second
	planRampFrom     = 3.0 // requests/s
	planRampTo       = 24.0
	planRampDuration = 12 * time.Second
	planPromptChars  = 4000
	planMaxTokens    = 100
)

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

// runPlan plays the characterize plan against the model with a virtual
// clock: arrivals and completions are events, nothing sleeps.
func runPlan(t testing.TB, cfg Config, jitterSeed uint64) planResult {
	return runPlanWith(t, cfg, jitterSeed, planPromptChars, planWaveSpread, planRampTo)
}

func runPlanWith(t testing.TB, cfg Config, jitterSeed uint64, promptChars int, spread time.Duration, rampTo float64) planResult {
	t.Helper()
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg.Clock = NewManualClock(start)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"messages":[{"role":"user","content":"` + strings.Repeat("x", promptChars) + `"}],"max_tokens":100}`
	req, err := parseRequest([]byte(body), kindChat, cfg.DefaultMaxTokens)
	if err != nil {
		t.Fatal(err)
	}
	jit := rand.New(rand.NewPCG(jitterSeed, 7))
	q := &eventQueue{}
	for w := range planWaves {
		for range planWaveSize {
			off := time.Duration(jit.Float64() * float64(spread))
			heap.Push(q, planEvent{at: start.Add(time.Duration(w)*planWaveGap + off), arrival: true, group: 0})
		}
	}
	// The schedule starts when the burst's last wave has been answered;
	// a generous bound on the latency keeps it independent of the model.
	schedStart := time.Duration(planWaves-1)*planWaveGap + time.Second
	n := int(planWarmupRate * planWarmup.Seconds())
	for k := range n {
		at := schedStart + time.Duration(float64(k)/planWarmupRate*float64(time.Second))
		heap.Push(q, planEvent{at: start.Add(at), arrival: true, group: 1})
	}
	// Linear ramp: arrival k is at the time the integral of the rate
	// reaches k (an absolute schedule).
	rampStart := schedStart + planWarmup
	a := (rampTo - planRampFrom) / planRampDuration.Seconds()
	for k := 0; k < 1000; k++ {
		// solve r0 t + a t²/2 = k
		x := float64(k)
		tt := (-planRampFrom + math.Sqrt(planRampFrom*planRampFrom+2*a*x)) / a
		if tt >= planRampDuration.Seconds() {
			break
		}
		heap.Push(q, planEvent{at: start.Add(rampStart + time.Duration(tt*float64(time.Second))), arrival: true, group: 1})
	}
	var res planResult
	for q.Len() > 0 {
		e := heap.Pop(q).(planEvent)
		if !e.arrival {
			s.bucket.correct(e.at, e.delta)
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
		heap.Push(q, planEvent{at: e.at.Add(s.latency(o.completion)), delta: actual - o.estimate})
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
		res := runPlanWith(t, cfg, uint64(seed), chars, spread, planRampTo)
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
