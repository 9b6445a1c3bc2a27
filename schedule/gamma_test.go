package schedule

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// gapStats are the mean and coefficient of variation of the gaps
// between arrivals, in seconds.
func gapStats(at []time.Duration) (mean, cv float64) {
	var s, ss float64
	n := float64(len(at) - 1)
	for i := 1; i < len(at); i++ {
		g := (at[i] - at[i-1]).Seconds()
		s += g
		ss += g * g
	}
	mean = s / n
	return mean, math.Sqrt(ss/n-mean*mean) / mean
}

// TestGammaHasTheRateAndCV: gamma gaps have the rate's mean and the CV
// asked, steady (the lab's) and in phases (traffic's), seeded.
func TestGammaHasTheRateAndCV(t *testing.T) {
	t.Parallel()
	for _, cv := range []float64{0.5, 1, 2, 4} {
		steady := Steady{Arrival: ArrivalGamma, CV: cv}
		at := steady.Offsets(10, 3000*time.Second, 7)
		mean, got := gapStats(at)
		if math.Abs(mean-0.1) > 0.005 || math.Abs(got-cv) > 0.1*cv {
			t.Errorf("steady CV %g: %d arrivals, mean gap %.4fs, CV %.3f; want 0.1s and %g", cv, len(at), mean, got, cv)
		}
		if again := steady.Offsets(10, 3000*time.Second, 7); len(again) != len(at) || again[len(at)/2] != at[len(at)/2] {
			t.Errorf("steady CV %g: not the same arrivals for one seed", cv)
		}
		if steady.Count(10, 3000*time.Second, 7) != len(at) {
			t.Errorf("steady CV %g: Count is not the arrivals'", cv)
		}
		c := Config{Phases: []Phase{{Name: "p", Duration: 3000 * time.Second, From: 10, To: 10}}, Arrival: "gamma:" + strconv.FormatFloat(cv, 'g', -1, 64), Seed: 7}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		var planned []time.Duration
		for p := NewPlan(c); ; {
			off, wave, ok := p.Next()
			if !ok {
				break
			}
			if wave != -1 {
				t.Fatalf("wave %d", wave)
			}
			planned = append(planned, off)
		}
		mean, got = gapStats(planned)
		if math.Abs(mean-0.1) > 0.005 || math.Abs(got-cv) > 0.1*cv || planned[len(planned)-1] >= c.Duration() {
			t.Errorf("phases CV %g: %d arrivals, mean gap %.4fs, CV %.3f; want 0.1s and %g", cv, len(planned), mean, got, cv)
		}
	}
}

func TestParseArrival(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]struct {
		arrival string
		cv      float64
	}{
		"constant": {ArrivalConstant, 0}, "": {ArrivalConstant, 0}, "poisson": {ArrivalPoisson, 0},
		"gamma:2": {ArrivalGamma, 2}, " gamma: 0.5 ": {ArrivalGamma, 0.5}, "gamma:10": {ArrivalGamma, 10},
	} {
		a, cv, err := ParseArrival(in)
		if err != nil || a != want.arrival || cv != want.cv {
			t.Errorf("%q: %s %g %v", in, a, cv, err)
		}
	}
	for _, bad := range []string{"gamma", "gamma:", "gamma:0", "gamma:-1", "gamma:11", "gamma:NaN", "gamma:inf", "poisson:2", "bursty", "constant:1"} {
		if _, _, err := ParseArrival(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	c := Config{Phases: []Phase{{Name: "p", Duration: time.Second, From: 10, To: 10}}, Arrival: ArrivalGamma}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "gamma:CV") {
		t.Errorf("gamma without a CV: %v", err)
	}
	c.Arrival = "gamma:20"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "coefficient of variation") {
		t.Errorf("gamma:20: %v", err)
	}
}

// TestSteadyIsTheLabsProcesses: the constant process counts whole
// requests, evenly spaced; the seeded Poisson keeps the lab's stream.
func TestSteadyIsTheLabsProcesses(t *testing.T) {
	t.Parallel()
	at := Steady{}.Offsets(4, 2600*time.Millisecond, 1)
	if len(at) != 10 || at[1] != 250*time.Millisecond || at[9] != 2250*time.Millisecond {
		t.Errorf("constant: %v", at)
	}
	p := Steady{Arrival: ArrivalPoisson}.Offsets(5, 100*time.Second, 42)
	mean, cv := gapStats(p)
	if math.Abs(mean-0.2) > 0.03 || math.Abs(cv-1) > 0.15 {
		t.Errorf("poisson: mean %.3f cv %.3f", mean, cv)
	}
	rep := RepeatAt([]time.Duration{0, time.Second}, 2*time.Second, 2, 3*time.Second)
	if len(rep) != 6 || rep[1] != 500*time.Millisecond || rep[2] != time.Second {
		t.Errorf("a trace of 1/s at 2/s over 3s: %v", rep)
	}
}
