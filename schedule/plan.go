package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// Arrival processes.
const (
	ArrivalConstant = "constant"
	ArrivalPoisson  = "poisson"
	// ArrivalGamma: gamma-distributed gaps of the planned rate's mean and
	// a coefficient of variation (Config.CV): vLLM's `--burstiness`
	// (burstiness b is CV 1/√b). CV 1 is Poisson; below 1 steadier,
	// above burstier.
	ArrivalGamma = "gamma"
)

// MaxSpan bounds the length of a plan: no run means a week of arrivals,
// and durations beyond it could overflow the arithmetic of offsets.
const MaxSpan = 7 * 24 * time.Hour

// Config is a scheduled plan: phases run back to back.
type Config struct {
	Phases []Phase
	// Arrival is the process as --arrival names it (ParseArrival):
	// constant (the default, also ""), poisson or gamma:CV.
	Arrival string
	Seed    uint64
}

// Validate reports the first problem as a *valid.Error naming the field.
// A plan that adds up to less than one request also wraps ErrEmptyPlan.
func (c Config) Validate() error {
	if len(c.Phases) == 0 {
		return valid.Errorf("Phases", "are empty: give a constant rate with a duration, or at least one phase")
	}
	var span time.Duration
	for _, p := range c.Phases {
		if p.Duration <= 0 {
			return valid.Errorf("Phases", "%s: duration must be positive", p.Name)
		}
		if p.Duration > MaxSpan-span {
			return valid.Errorf("Phases", "last longer than %s in all", MaxSpan)
		}
		span += p.Duration
		if p.From < 0 || p.To < 0 || (p.From == 0 && p.To == 0) {
			return valid.Errorf("Phases", "%s: rate must be greater than zero", p.Name)
		}
		if p.From > MaxRate || p.To > MaxRate {
			return valid.Errorf("Phases", "%s: rate must be at most %g/s", p.Name, float64(MaxRate))
		}
	}
	if _, _, err := ParseArrival(c.Arrival); err != nil {
		return valid.Errorf("Arrival", "%v", err)
	}
	if c.Expected() < 1 {
		return &emptyPlanError{&valid.Error{Name: "Phases", Reason: fmt.Sprintf("add up to %.2f requests: the schedule plans none", c.Expected())}}
	}
	return nil
}

// emptyPlanError is a *valid.Error that is also ErrEmptyPlan.
type emptyPlanError struct{ setting *valid.Error }

func (e *emptyPlanError) Error() string   { return e.setting.Error() }
func (e *emptyPlanError) Unwrap() []error { return []error{e.setting, ErrEmptyPlan} }

// Expected is ∫ r over the whole plan: the exact count of a constant plan
// (up to the ceiling) and the mean count of a Poisson one.
func (c Config) Expected() float64 {
	var n float64
	for _, p := range c.Phases {
		n += p.Expected()
	}
	return n
}

// Duration is the length of the plan.
func (c Config) Duration() time.Duration {
	var d time.Duration
	for _, p := range c.Phases {
		d += p.Duration
	}
	return d
}

// Total is the number of arrivals a constant plan sends: every k ≥ 0 with
// Λ⁻¹(k) before the end, i.e. ⌈Λ(end)⌉ (with a tolerance for rounding, so
// 30/s for 60s is exactly 1800).
func (c Config) Total() int {
	e := c.Expected()
	return int(math.Ceil(e - 1e-6))
}

// Plan iterates the arrivals of a Config.
type Plan struct {
	c       Config
	poisson bool // a random process: poisson or gamma
	step    func() float64
	rng     *rand.Rand
	k       int     // next arrival index (constant)
	s       float64 // position in Λ-space of the next arrival
	phase   int     // current phase
	base    float64 // Λ at the start of the current phase
	start   float64 // seconds at the start of the current phase
}

// NewPlan returns the arrivals of c, which must be valid.
func NewPlan(c Config) *Plan {
	kind, cv, _ := ParseArrival(c.Arrival)
	p := &Plan{c: c, poisson: kind == ArrivalPoisson || kind == ArrivalGamma}
	if p.poisson {
		p.rng = rand.New(rand.NewPCG(c.Seed, c.Seed^0x9e3779b97f4a7c15))
		p.step = p.rng.ExpFloat64
		if kind == ArrivalGamma {
			// Unit-mean gaps in Λ-space: shape 1/CV², scale CV².
			g := newGamma(p.rng, 1/(cv*cv))
			p.step = func() float64 { return g.draw() * cv * cv }
		}
		p.s = p.step()
	}
	return p
}

// Next returns the next arrival. Scheduled traffic has no waves; wave is
// -1 (results.None).
func (p *Plan) Next() (offset time.Duration, wave int, ok bool) {
	if !p.poisson && p.k >= p.c.Total() {
		return 0, 0, false
	}
	for p.phase < len(p.c.Phases) {
		ph := p.c.Phases[p.phase]
		end := p.base + ph.Expected()
		if p.s < end || (!p.poisson && p.s < end+1e-6 && p.phase == len(p.c.Phases)-1) {
			t := p.start + ph.inverse(p.s-p.base)
			if p.poisson {
				p.s += p.step()
			} else {
				p.k++
				p.s = float64(p.k)
			}
			return time.Duration(t * float64(time.Second)), -1, true
		}
		p.base = end
		p.start += ph.Duration.Seconds()
		p.phase++
	}
	return 0, 0, false
}
