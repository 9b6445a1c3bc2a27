package analyze

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func meanSD(v []float64) (m, sd float64) {
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for _, x := range v {
		sd += (x - m) * (x - m)
	}
	return m, math.Sqrt(sd / float64(len(v)-1))
}

// TestBootstrapPercentileMatchesResampling: the replicates drawn from the
// order statistics spread as a bootstrap that builds every resample does,
// for a median and a tail percentile of skewed values.
func TestBootstrapPercentileMatchesResampling(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	v := make([]float64, 1000)
	for i := range v {
		v[i] = math.Round(100*rng.ExpFloat64()*50) / 100
	}
	s := selected{v: v}
	for _, p := range []float64{50, 90, 99} {
		ests, all := bootstrapPercentiles(selectedRanks(&s), []float64{p}, rand.New(rand.NewPCG(3, 4)))
		est, reps := ests[0], all[0]
		if want := Percentile(slices.Sorted(slices.Values(v)), p); est != want {
			t.Errorf("p%v: estimate %v, want %v", p, est, want)
		}
		naive := make([]float64, 600)
		re := make([]float64, len(v))
		for b := range naive {
			for i := range re {
				re[i] = v[rng.IntN(len(v))]
			}
			slices.Sort(re)
			naive[b] = Percentile(re, p)
		}
		m1, sd1 := meanSD(reps)
		m2, sd2 := meanSD(naive)
		if math.Abs(sd1-sd2) > 0.15*sd2 || math.Abs(m1-m2) > 0.5*sd2 {
			t.Errorf("p%v: replicates mean %.3f sd %.3f, resampling mean %.3f sd %.3f", p, m1, sd1, m2, sd2)
		}
	}
}

// TestBinomial: the draws have the binomial's mean and variance, exactly
// drawn and by the normal approximation, at both ends of p.
func TestBinomial(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		n int
		p float64
	}{{50, 0.1}, {1000, 0.01}, {1000, 0.995}, {100000, 0.3}, {20, 0.5}} {
		d := make([]float64, 20000)
		for i := range d {
			k := binomial(rng, c.n, c.p)
			if k < 0 || k > c.n {
				t.Fatalf("n %d p %v: %d", c.n, c.p, k)
			}
			d[i] = float64(k)
		}
		m, sd := meanSD(d)
		wm, wsd := float64(c.n)*c.p, math.Sqrt(float64(c.n)*c.p*(1-c.p))
		if math.Abs(m-wm) > 4*wsd/math.Sqrt(float64(len(d))) || math.Abs(sd-wsd) > 0.05*wsd {
			t.Errorf("n %d p %v: mean %.3f sd %.3f, want %.3f %.3f", c.n, c.p, m, sd, wm, wsd)
		}
	}
	if binomial(rng, 10, 0) != 0 || binomial(rng, 10, 1) != 10 {
		t.Error("p 0 or 1")
	}
}
