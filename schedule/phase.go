package schedule

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Phase is a stretch of the schedule whose rate goes linearly from From to
// To (requests per second) over Duration. A constant phase has From == To.
type Phase struct {
	Name     string
	Duration time.Duration
	From, To float64
}

// Expected is the number of arrivals the phase contributes: ∫ r dt.
func (p Phase) Expected() float64 { return (p.From + p.To) / 2 * p.Duration.Seconds() }

// inverse returns t (seconds from the phase start) with Λ(t) = s. Solving
// a/2·t² + r0·t − s = 0 with the root written as 2s/(r0+√(r0²+2as)) is
// stable for a → 0 (a constant phase) and for a < 0 (a falling ramp).
func (p Phase) inverse(s float64) float64 {
	if s <= 0 {
		return 0
	}
	a := (p.To - p.From) / p.Duration.Seconds()
	disc := p.From*p.From + 2*a*s
	if disc < 0 {
		disc = 0
	}
	den := p.From + math.Sqrt(disc)
	if den <= 0 {
		return p.Duration.Seconds()
	}
	return 2 * s / den
}

// MaxRate bounds a rate to what a loopback run could conceivably sustain,
// so absurd inputs fail at parse time instead of building a huge plan.
const MaxRate = 1e6

// ParseRate reads "30", "30/s", "600/m" or "36000/h" into requests per
// second. Zero, negative and non-finite rates are rejected.
func ParseRate(s string) (float64, error) {
	v, err := parseRate(s)
	if err != nil {
		return 0, err
	}
	if v == 0 {
		return 0, fmt.Errorf("rate %q must be greater than zero", s)
	}
	return v, nil
}

func parseRate(s string) (float64, error) {
	num, unit, hasUnit := strings.Cut(strings.TrimSpace(s), "/")
	per := 1.0
	if hasUnit {
		switch strings.TrimSpace(unit) {
		case "s", "sec", "second":
		case "m", "min", "minute":
			per = 60
		case "h", "hour":
			per = 3600
		default:
			return 0, fmt.Errorf("rate %q: unit must be /s, /m or /h", s)
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("rate %q is not a number of requests (like 30, 30/s or 600/m)", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("rate %q must not be negative", s)
	}
	v /= per
	if v > MaxRate {
		return 0, fmt.Errorf("rate %q is above %g/s", s, float64(MaxRate))
	}
	return v, nil
}

// ParsePhase reads NAME:DURATION@RATE or NAME:DURATION@FROM-TO, e.g.
// "warmup:2m@0.3/s" or "ramp:10m@0.5/s-2.5/s". The name is optional
// ("2m@1/s"). A ramp may start or end at zero, but not both.
func ParsePhase(s string) (Phase, error) {
	var p Phase
	body := strings.TrimSpace(s)
	if name, rest, ok := strings.Cut(body, ":"); ok {
		p.Name, body = strings.TrimSpace(name), rest
		if p.Name == "" {
			return p, fmt.Errorf("phase %q: empty name before ':'", s)
		}
	}
	durS, rateS, ok := strings.Cut(body, "@")
	if !ok {
		return p, fmt.Errorf("phase %q: want NAME:DURATION@RATE or NAME:DURATION@FROM-TO, like warmup:2m@0.3/s", s)
	}
	d, err := time.ParseDuration(strings.TrimSpace(durS))
	if err != nil || d <= 0 {
		return p, fmt.Errorf("phase %q: duration %q is not a positive duration like 90s or 10m", s, durS)
	}
	p.Duration = d
	if from, to, ramp := strings.Cut(rateS, "-"); ramp {
		if p.From, err = parseRate(from); err != nil {
			return p, fmt.Errorf("phase %q: %w", s, err)
		}
		if p.To, err = parseRate(to); err != nil {
			return p, fmt.Errorf("phase %q: %w", s, err)
		}
		if p.From == 0 && p.To == 0 {
			return p, fmt.Errorf("phase %q: a ramp from zero to zero sends nothing", s)
		}
	} else {
		if p.From, err = ParseRate(rateS); err != nil {
			return p, fmt.Errorf("phase %q: %w", s, err)
		}
		p.To = p.From
	}
	if p.Name == "" {
		p.Name = "phase"
	}
	return p, nil
}

// ErrEmptyPlan is returned for a plan with no arrivals.
var ErrEmptyPlan = errors.New("the schedule plans no requests")
