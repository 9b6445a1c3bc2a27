package capacity

import (
	"context"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// Defaults of a search.
const (
	DefaultGoodput      = 0.95
	DefaultMax429Share  = 0.05
	DefaultMinRate      = 0.5
	DefaultMaxRate      = 64
	DefaultFactor       = 2
	DefaultStepDuration = 60 * time.Second
	DefaultDepth        = 3
	DefaultRepeats      = 3
	// JudgedShare is the trailing share of a step that is judged.
	JudgedShare = 0.5
	// MaxSteps bounds the steps of one search, whatever its settings.
	MaxSteps = 200
)

// Config describes a search.
type Config struct {
	SLO analyze.SLO
	// Goodput is the least share (0–1] of the judged requests that must
	// be answered 2xx within the SLO; Max429Share the most that may be
	// refused with a 429.
	Goodput, Max429Share float64
	MinRate, MaxRate     float64 // requests per second
	Factor               float64
	StepDuration         time.Duration
	Depth, Repeats       int
	// Pause is the wait between steps (on the wall clock; a step in
	// process starts a fresh simulator and needs none).
	Pause time.Duration
	// MaxRequests caps the requests of the whole search (0: none): a step
	// that would pass it is not run. MaxTime caps the steps' planned time
	// (durations and pauses) likewise.
	MaxRequests int
	MaxTime     time.Duration
	// OnStep, when set, sees each step as it is judged.
	OnStep func(Step)
}

// Defaults fills the zero fields of c with the defaults, but
// Max429Share, whose zero (no 429 at all) is a setting.
func (c *Config) Defaults() {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Goodput, DefaultGoodput)
	def(&c.MinRate, DefaultMinRate)
	def(&c.MaxRate, DefaultMaxRate)
	def(&c.Factor, DefaultFactor)
	if c.StepDuration == 0 {
		c.StepDuration = DefaultStepDuration
	}
	if c.Depth == 0 {
		c.Depth = DefaultDepth
	}
	if c.Repeats == 0 {
		c.Repeats = DefaultRepeats
	}
}

// minStep is the shortest StepDuration a search takes: a second (a
// shorter step judges too few answers to mean anything), lowered only by
// this package's TestMain for its tests on the wall clock, whose claims
// are the steps' logic, not their length.
var minStep = time.Second

// Validate checks every setting.
func (c *Config) Validate() error {
	switch {
	case !(c.Goodput > 0 && c.Goodput <= 1):
		return valid.Errorf("Goodput", "must be above 0%% and at most 100%%")
	case !(c.Max429Share >= 0 && c.Max429Share <= 1):
		return valid.Errorf("Max429Share", "must be from 0%% to 100%%")
	case !(c.MinRate > 0 && c.MinRate <= 100_000):
		return valid.Errorf("MinRate", "must be above 0 and at most 100000/s")
	case !(c.MaxRate >= c.MinRate && c.MaxRate <= 100_000):
		return valid.Errorf("MaxRate", "must be at least {MinRate} and at most 100000/s")
	case !(c.Factor > 1 && c.Factor <= 16):
		return valid.Errorf("Factor", "must be above 1 and at most 16")
	case c.StepDuration < minStep || c.StepDuration > 24*time.Hour:
		return valid.Errorf("StepDuration", "must be from %v to 24h", minStep)
	case c.Depth < 0 || c.Depth > 20:
		return valid.Errorf("Depth", "must be from 0 to 20")
	case c.Repeats < 1 || c.Repeats > 20:
		return valid.Errorf("Repeats", "must be from 1 to 20")
	case c.Pause < 0:
		return valid.Errorf("Pause", "must not be negative")
	case c.MaxRequests < 0:
		return valid.Errorf("MaxRequests", "must not be negative")
	case c.MaxTime < 0:
		return valid.Errorf("MaxTime", "must not be negative")
	case c.planned(c.MinRate) < 1:
		return valid.Errorf("StepDuration", "holds no request at {MinRate}: a step must plan at least one")
	}
	return nil
}

// planned is the requests a step at rate plans.
func (c *Config) planned(rate float64) int {
	return int(math.Floor(rate*c.StepDuration.Seconds() + 1e-9))
}

// Probe is one step to measure: its rate, which run of that rate it is
// (0 the first, then the boundary's repeats) and its place in the search.
type Probe struct {
	Index  int
	Rate   float64
	Repeat int
}

// Measure runs one step at p.Rate for the config's StepDuration, each
// completed request added to t (stopping when Add says so), and returns
// when the step is over. An error ends the search.
type Measure func(ctx context.Context, p Probe, t *Tally) error

// ErrCapped is the search stopped by MaxRequests or MaxTime before it
// was complete.
var ErrCapped = errors.New("capacity: a cap stopped the search")

// Search finds the capacity (see the package doc) with c as it is (see
// Defaults). It returns what was
// measured so far with an error when a measure failed, ctx ended or a
// cap stopped it (ErrCapped).
func Search(ctx context.Context, c Config, m Measure) (Result, error) {
	if err := c.Validate(); err != nil {
		return Result{}, err
	}
	s := &searcher{c: c, m: m}
	err := s.run(ctx)
	return s.result(), err
}

type searcher struct {
	c        Config
	m        Measure
	steps    []Step
	requests int
	time     time.Duration
	lo, hi   float64 // the last rate that passed, the first that failed (0: none)
}

func (s *searcher) run(ctx context.Context) error {
	if err := s.ramp(ctx); err != nil {
		return err
	}
	if s.lo == 0 || s.hi == 0 {
		return nil // under MinRate, or MaxRate sustained: nothing to bisect
	}
	for range s.c.Depth {
		mid := math.Sqrt(s.lo * s.hi)
		if mid/s.lo < 1.01 {
			break
		}
		st, err := s.step(ctx, mid, 0)
		if err != nil {
			return err
		}
		if st.Passed {
			s.lo = mid
		} else {
			s.hi = mid
		}
	}
	for r := 1; r < s.c.Repeats; r++ {
		for _, rate := range []float64{s.lo, s.hi} {
			if _, err := s.step(ctx, rate, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// ramp runs the rising steps until one fails or MaxRate passed.
func (s *searcher) ramp(ctx context.Context) error {
	for rate := s.c.MinRate; ; rate = math.Min(rate*s.c.Factor, s.c.MaxRate) {
		st, err := s.step(ctx, rate, 0)
		if err != nil {
			return err
		}
		if !st.Passed {
			s.hi = rate
			return nil
		}
		s.lo = rate
		if rate >= s.c.MaxRate {
			return nil
		}
	}
}

// step measures one step, unless a cap forbids it.
func (s *searcher) step(ctx context.Context, rate float64, repeat int) (Step, error) {
	if err := ctx.Err(); err != nil {
		return Step{}, err
	}
	planned := s.c.planned(rate)
	more := s.c.StepDuration
	if len(s.steps) > 0 {
		more += s.c.Pause
	}
	if len(s.steps) >= MaxSteps || s.c.MaxRequests > 0 && s.requests+planned > s.c.MaxRequests ||
		s.c.MaxTime > 0 && s.time+more > s.c.MaxTime {
		return Step{}, ErrCapped
	}
	s.requests += planned
	s.time += more
	p := Probe{Index: len(s.steps) + 1, Rate: rate, Repeat: repeat}
	t := NewTally(&s.c, rate)
	if err := s.m(ctx, p, t); err != nil {
		return Step{}, err
	}
	st := t.Step(p)
	s.steps = append(s.steps, st)
	if s.c.OnStep != nil {
		s.c.OnStep(st)
	}
	return st, nil
}

// result is the search's outcome from its steps.
func (s *searcher) result() Result {
	r := Result{Config: s.c, Steps: s.steps, Low: s.lo, High: s.hi}
	switch {
	case s.lo == 0:
		r.Verdict = VerdictBelowMin
	case s.hi == 0:
		r.Verdict = VerdictAboveMax
		r.Max, r.IntervalLow, r.IntervalHigh = s.lo, s.lo, s.lo
	default:
		r.Verdict = VerdictFound
		var cross []float64
		for rep := range s.c.Repeats {
			a, okA := s.find(s.lo, rep)
			b, okB := s.find(s.hi, rep)
			if okA && okB {
				cross = append(cross, crossing(a, b))
			}
		}
		slices.Sort(cross)
		if len(cross) > 0 {
			r.Max, r.IntervalLow, r.IntervalHigh = median(cross), cross[0], cross[len(cross)-1]
		} else {
			r.Max, r.IntervalLow, r.IntervalHigh = s.lo, s.lo, s.lo
		}
	}
	r.TokensPerRequest = s.tokensAt(r.Max)
	r.MaxTokensPerMin = r.Max * 60 * r.TokensPerRequest
	return r
}

// find is the step at rate of repeat rep (for rep 0 the latest).
func (s *searcher) find(rate float64, rep int) (Step, bool) {
	for i := len(s.steps) - 1; i >= 0; i-- {
		if st := s.steps[i]; st.Rate == rate && st.Repeat == rep {
			return st, true
		}
	}
	return Step{}, false
}

// tokensAt is the mean tokens (prompt and completion) a request answered
// 2xx carried, over the steps at the rates nearest rate: those of the
// boundary.
func (s *searcher) tokensAt(rate float64) float64 {
	var sum float64
	var n int
	for _, st := range s.steps {
		if (st.Rate == s.lo || st.Rate == s.hi || s.hi == 0 && st.Rate == rate) && st.Answered > 0 {
			sum += st.TokensPerRequest * float64(st.Answered)
			n += st.Answered
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// crossing is where the margin crosses zero between a step that passed
// (or not) at the lower rate and one at the higher: linear between the
// two, the lower rate when both fail, the higher when both pass.
func crossing(a, b Step) float64 {
	ma, mb := a.Margin, b.Margin
	switch {
	case ma < 0:
		return a.Rate
	case mb >= 0:
		return b.Rate
	}
	return a.Rate + (b.Rate-a.Rate)*ma/(ma-mb)
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
