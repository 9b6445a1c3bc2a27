package capacity

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
)

// knee is a Measure of a target whose requests are all met up to rate
// cap and refused past it, a share growing with the excess; repeat r
// moves the cap by r·jitter.
func knee(cap, jitter float64, calls *int) Measure {
	return func(_ context.Context, p Probe, t *Tally) error {
		*calls++
		c := cap + float64(p.Repeat)*jitter
		refused := math.Max(0, 1-c/p.Rate) // the excess share
		for seq := range t.Planned() {
			o := Outcome{Seq: seq, Status: 200, Latency: time.Second, TTFT: 100 * time.Millisecond, TPOT: 10 * time.Millisecond, ITLMax: 20 * time.Millisecond, Tokens: 1100}
			if float64(seq%100) < 100*refused {
				o = Outcome{Seq: seq, Status: 429, TTFT: -1, TPOT: -1, ITLMax: -1}
			}
			if t.Add(o) {
				return nil
			}
		}
		return nil
	}
}

func TestSearchBracketsBisectsAndRepeats(t *testing.T) {
	t.Parallel()
	var calls int
	c := Config{Max429Share: 0.05, StepDuration: 100 * time.Second, Depth: 4, Repeats: 3}
	c.Defaults()
	res, err := Search(context.Background(), c, knee(5, 0.1, &calls))
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != VerdictFound || !(res.Low < 5.5 && res.High > 5 && res.Low < res.High) {
		t.Fatalf("verdict %s, bracket %g–%g: want one around 5–5.26 (5%% refused at 5.26)", res.Verdict, res.Low, res.High)
	}
	if !(res.IntervalLow <= res.Max && res.Max <= res.IntervalHigh && res.IntervalLow >= res.Low && res.IntervalHigh <= res.High) {
		t.Errorf("capacity %g, interval %g–%g, bracket %g–%g: want the capacity within the interval within the bracket", res.Max, res.IntervalLow, res.IntervalHigh, res.Low, res.High)
	}
	// ramp 0.5…8 (5 steps), 4 bisections, 2 more runs of each boundary rate
	if want := 5 + 4 + 4; len(res.Steps) != want || calls != want {
		t.Errorf("%d steps (%d measures); want %d", len(res.Steps), calls, want)
	}
	reps := map[int]int{}
	for _, s := range res.Steps {
		reps[s.Repeat]++
	}
	if reps[1] != 2 || reps[2] != 2 {
		t.Errorf("repeats %v: want two rates run at repeats 1 and 2", reps)
	}
	if math.Abs(res.MaxTokensPerMin-res.Max*60*1100) > 1e-6 {
		t.Errorf("tokens/min %g for %g/s at 1100 tokens a request", res.MaxTokensPerMin, res.Max)
	}
}

func TestSearchEnds(t *testing.T) {
	t.Parallel()
	var calls int
	below, err := Search(context.Background(), def(Config{Max429Share: 0.05, MinRate: 10, MaxRate: 20}), knee(5, 0, &calls))
	if err != nil || below.Verdict != VerdictBelowMin || below.Max != 0 || len(below.Steps) != 1 {
		t.Errorf("a first step over capacity: %v %s %g, %d steps", err, below.Verdict, below.Max, len(below.Steps))
	}
	above, err := Search(context.Background(), def(Config{Max429Share: 0.05, MinRate: 1, MaxRate: 3}), knee(5, 0, &calls))
	if err != nil || above.Verdict != VerdictAboveMax || above.Max != 3 {
		t.Errorf("MaxRate sustained: %v %s %g", err, above.Verdict, above.Max)
	}
	capped, err := Search(context.Background(), def(Config{Max429Share: 0.05, StepDuration: 10 * time.Second, MaxRequests: 40}), knee(5, 0, &calls))
	if !errors.Is(err, ErrCapped) || len(capped.Steps) != 3 { // 5 + 10 + 20 requests, 40 next
		t.Errorf("capped by requests: %v, %d steps", err, len(capped.Steps))
	}
	timed, err := Search(context.Background(), def(Config{Max429Share: 0.05, StepDuration: 10 * time.Second, Pause: 5 * time.Second, MaxTime: 40 * time.Second}), knee(5, 0, &calls))
	if !errors.Is(err, ErrCapped) || len(timed.Steps) != 3 { // 10, +15, +15, and +15 would pass 40
		t.Errorf("capped by time: %v, %d steps", err, len(timed.Steps))
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []Config{
		{Goodput: 1.5}, {Max429Share: -0.1}, {MinRate: -1}, {MinRate: 4, MaxRate: 2}, {Factor: 1},
		{StepDuration: time.Millisecond}, {Depth: -1}, {Repeats: 50}, {MinRate: 0.01, StepDuration: time.Second},
	} {
		c.Defaults()
		if c.Validate() == nil {
			t.Errorf("%+v validated", c)
		}
	}
}

// TestTallyStopsAStepClearlyPast: a step stops as soon as it cannot pass
// (more missed, or refused, than allowed), or when TTFT rises through
// its judged part; a step that holds runs to its end.
func TestTallyStopsAStepClearlyPast(t *testing.T) {
	t.Parallel()
	c := Config{Goodput: 0.9, Max429Share: 0.05, StepDuration: 100 * time.Second, SLO: analyze.SLO{TTFT: 30 * time.Second}}
	c.Defaults()
	run := func(outcome func(seq int) Outcome) (Step, int) {
		tl := NewTally(&c, 1) // 100 planned, 50 judged
		n := 0
		for seq := range tl.Planned() {
			n++
			if tl.Add(outcome(seq)) {
				break
			}
		}
		return tl.Step(Probe{Rate: 1}), n
	}
	ok := func(seq int) Outcome {
		return Outcome{Seq: seq, Status: 200, TTFT: 200 * time.Millisecond, TPOT: 0, ITLMax: 0, Latency: time.Second}
	}
	if s, n := run(ok); !s.Passed || n != 100 || s.StoppedEarly != "" || s.Goodput != 1 {
		t.Errorf("a step that holds: %+v after %d", s, n)
	}
	slow := func(seq int) Outcome { o := ok(seq); o.TTFT = 40 * time.Second; return o }
	if s, n := run(slow); s.Passed || s.StoppedEarly != StopMissed || n != 50+6 {
		t.Errorf("every answer over the SLO: %+v after %d; want a stop at the 6th miss of 50 judged (5 allowed)", s, n)
	}
	refused := func(seq int) Outcome {
		if seq%10 == 0 {
			return Outcome{Seq: seq, Status: 429, TTFT: -1, TPOT: -1, ITLMax: -1}
		}
		return ok(seq)
	}
	c.Goodput = 0.5
	if s, _ := run(refused); s.Passed || s.StoppedEarly != StopRefused {
		t.Errorf("10%% refused against a 5%% bound: %+v", s)
	}
	rising := func(seq int) Outcome { o := ok(seq); o.TTFT = time.Duration(seq) * 300 * time.Millisecond; return o }
	if s, n := run(rising); s.Passed || s.StoppedEarly != StopSaturated || n >= 100 {
		t.Errorf("TTFT rising through the step: %+v after %d", s, n)
	}
}

// def is c with its zero fields defaulted.
func def(c Config) Config {
	c.Defaults()
	return c
}
