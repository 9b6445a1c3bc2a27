package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Bounds of the gamma process's coefficient of variation: below MinCV
// it is the constant process to a microsecond; past MaxCV (shape 0.01)
// nearly every gap is zero and one is the whole plan.
const (
	MinCV = 0.01
	MaxCV = 10
)

// ParseArrival reads --arrival: constant (or empty), poisson or gamma:CV
// (CV from MinCV to MaxCV: the gaps' coefficient of variation). It returns the
// process and CV (0 unless gamma).
func ParseArrival(s string) (arrival string, cv float64, err error) {
	kind, arg, hasArg := strings.Cut(strings.TrimSpace(s), ":")
	switch {
	case kind == "" && !hasArg:
		return ArrivalConstant, 0, nil
	case (kind == ArrivalConstant || kind == ArrivalPoisson) && !hasArg:
		return kind, 0, nil
	case kind == ArrivalGamma && hasArg:
		v, err := strconv.ParseFloat(strings.TrimSpace(arg), 64)
		if err != nil || !(v >= MinCV && v <= MaxCV) {
			return "", 0, fmt.Errorf("%q: the coefficient of variation of gamma:CV must be a number from %g to %g (1 is Poisson, 2 burstier, 0.5 steadier)", clipText(s), MinCV, float64(MaxCV))
		}
		return ArrivalGamma, v, nil
	}
	return "", 0, fmt.Errorf("%q: want %s, %s or %s:CV (such as gamma:2)", clipText(s), ArrivalConstant, ArrivalPoisson, ArrivalGamma)
}

func clipText(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// gamma draws from a gamma distribution of shape k and scale 1:
// Marsaglia and Tsang's method (ACM TOMS 26(3), 2000), with the boost
// G(k) = G(k+1)·U^(1/k) for k < 1.
type gamma struct {
	r        *rand.Rand
	k        float64
	d, c     float64 // of shape max(k, k+1 when k < 1)
	boostInv float64 // 1/k when k < 1, else 0
}

func newGamma(r *rand.Rand, k float64) *gamma {
	g := &gamma{r: r, k: k}
	a := k
	if k < 1 {
		a, g.boostInv = k+1, 1/k
	}
	g.d = a - 1.0/3
	g.c = 1 / math.Sqrt(9*g.d)
	return g
}

func (g *gamma) draw() float64 {
	var x float64
	for {
		z := g.r.NormFloat64()
		v := 1 + g.c*z
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := g.r.Float64()
		if u < 1-0.0331*z*z*z*z || math.Log(u) < 0.5*z*z+g.d*(1-v+math.Log(v)) {
			x = g.d * v
			break
		}
	}
	if g.boostInv > 0 {
		// 1−U is in (0, 1]: no zero to a power.
		x *= math.Pow(1-g.r.Float64(), g.boostInv)
	}
	return x
}
