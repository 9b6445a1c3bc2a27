package schedule

import (
	"math"
	"strings"
	"testing"
	"time"
)

func collect(t *testing.T, c Config) []time.Duration {
	t.Helper()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	p := NewPlan(c)
	var out []time.Duration
	for i := 0; i < 1_000_000; i++ {
		off, w, ok := p.Next()
		if !ok {
			return out
		}
		if w != -1 {
			t.Fatalf("wave = %d, want -1", w)
		}
		out = append(out, off)
	}
	t.Fatal("plan did not end")
	return nil
}

func TestConstantRateIsExact(t *testing.T) {
	t.Parallel()
	c := Config{Phases: []Phase{{Name: "flat", Duration: 60 * time.Second, From: 30, To: 30}}}
	got := collect(t, c)
	if len(got) != 1800 || c.Total() != 1800 {
		t.Fatalf("got %d arrivals (Total %d), want 1800", len(got), c.Total())
	}
	for i, off := range got {
		want := time.Duration(float64(i) / 30 * float64(time.Second))
		if d := off - want; d < -time.Microsecond || d > time.Microsecond {
			t.Fatalf("arrival %d at %v, want %v", i, off, want)
		}
	}
}

func TestRampFollowsInverseCumulativeRate(t *testing.T) {
	t.Parallel()
	// 0.5/s → 2.5/s over 10 s: Λ(t) = 0.5t + 0.1t², Λ(10) = 15.
	c := Config{Phases: []Phase{{Name: "ramp", Duration: 10 * time.Second, From: 0.5, To: 2.5}}}
	got := collect(t, c)
	if len(got) != 15 {
		t.Fatalf("got %d arrivals, want 15", len(got))
	}
	for k, off := range got {
		// Solve 0.1t² + 0.5t − k = 0.
		want := (-0.5 + math.Sqrt(0.25+0.4*float64(k))) / 0.2
		if math.Abs(off.Seconds()-want) > 1e-6 {
			t.Errorf("arrival %d at %.6fs, want %.6fs", k, off.Seconds(), want)
		}
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("arrivals not increasing at %d", i)
		}
	}
}

func TestPhasesChainWithoutGapOrOverlap(t *testing.T) {
	t.Parallel()
	c := Config{Phases: []Phase{
		{Name: "warmup", Duration: 10 * time.Second, From: 1, To: 1},
		{Name: "ramp", Duration: 10 * time.Second, From: 1, To: 3},
		{Name: "sustain", Duration: 10 * time.Second, From: 3, To: 3},
	}}
	got := collect(t, c)
	if want := 10 + 20 + 30; len(got) != want || c.Total() != want {
		t.Fatalf("got %d arrivals (Total %d), want %d", len(got), c.Total(), want)
	}
	if got[10] != 10*time.Second {
		t.Errorf("first ramp arrival at %v, want 10s", got[10])
	}
	if got[30] != 20*time.Second {
		t.Errorf("first sustain arrival at %v, want 20s", got[30])
	}
	if last := got[len(got)-1]; last >= 30*time.Second {
		t.Errorf("last arrival at %v, past the plan end", last)
	}
}

func TestFallingRamp(t *testing.T) {
	t.Parallel()
	c := Config{Phases: []Phase{{Duration: 10 * time.Second, From: 3, To: 0}}}
	got := collect(t, c)
	if len(got) != 15 {
		t.Fatalf("got %d arrivals, want 15", len(got))
	}
	if last := got[len(got)-1]; last > 10*time.Second {
		t.Fatalf("last arrival at %v, past the phase", last)
	}
}

func TestPoissonDeterministicAndNearRate(t *testing.T) {
	t.Parallel()
	c := Config{Phases: []Phase{{Duration: 100 * time.Second, From: 50, To: 50}}, Arrival: ArrivalPoisson, Seed: 7}
	a, b := collect(t, c), collect(t, c)
	if len(a) != len(b) {
		t.Fatalf("same seed gave %d and %d arrivals", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed differs at %d", i)
		}
	}
	// 5000 expected; a Poisson count has sd ≈ 71: allow 5 sd.
	if n := len(a); n < 5000-355 || n > 5000+355 {
		t.Fatalf("got %d arrivals, want about 5000", n)
	}
	c.Seed = 8
	if d := collect(t, c); len(d) == len(a) && d[1] == a[1] {
		t.Fatal("a different seed gave the same plan")
	}
}

func TestParseRate(t *testing.T) {
	t.Parallel()
	good := map[string]float64{"30": 30, "30/s": 30, "600/m": 10, "0.5/s": 0.5, "3600/h": 1, " 2 /s": 2}
	for in, want := range good {
		got, err := ParseRate(in)
		if err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "abc", "5/d", "NaN", "Inf", "1e9", "/s"} {
		if _, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q) accepted", in)
		}
	}
}

func TestParsePhase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Phase
	}{
		{"warmup:2m@0.3/s", Phase{"warmup", 2 * time.Minute, 0.3, 0.3}},
		{"ramp:10m@0.5/s-2.5/s", Phase{"ramp", 10 * time.Minute, 0.5, 2.5}},
		{"sustain:10m@2/s", Phase{"sustain", 10 * time.Minute, 2, 2}},
		{"90s@120/m", Phase{"phase", 90 * time.Second, 2, 2}},
		{"up:1m@0-5", Phase{"up", time.Minute, 0, 5}},
	}
	for _, tt := range tests {
		got, err := ParsePhase(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParsePhase(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "warmup", "warmup:2m", ":2m@1/s", "x:0s@1/s", "x:-1m@1/s", "x:2m@0/s", "x:2m@0-0", "x:2m@-1/s", "x:bad@1/s", "x:2m@1/s-", "x:1m@1/s-2/s-3/s"} {
		if _, err := ParsePhase(in); err == nil {
			t.Errorf("ParsePhase(%q) accepted", in)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("ParsePhase(%q) error spans lines", in)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := (Config{}).Validate(); err == nil {
		t.Error("empty plan accepted")
	}
	if err := (Config{Phases: []Phase{{Duration: time.Second, From: 0.1, To: 0.1}}}).Validate(); err == nil {
		t.Error("plan of 0.1 requests accepted")
	}
	if err := (Config{Phases: []Phase{{Duration: time.Second, From: 1, To: 1}}, Arrival: "burst"}).Validate(); err == nil {
		t.Error("unknown arrival accepted")
	}
}

func FuzzParsePhase(f *testing.F) {
	for _, s := range []string{"warmup:2m@0.3/s", "ramp:10m@0.5/s-2.5/s", "1s@1", "x:1h@1e5/s-0", "::@@--", "a:1ns@999999/s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePhase(s)
		if err != nil {
			return
		}
		if p.Duration <= 0 || p.From < 0 || p.To < 0 || (p.From == 0 && p.To == 0) || p.From > MaxRate || p.To > MaxRate {
			t.Fatalf("ParsePhase(%q) accepted an invalid phase %+v", s, p)
		}
		// Walking a valid phase must end and stay inside it.
		c := Config{Phases: []Phase{p}}
		if c.Expected() > 10000 {
			return
		}
		pl := NewPlan(c)
		for i := 0; ; i++ {
			off, _, ok := pl.Next()
			if !ok {
				break
			}
			if off < 0 || off > p.Duration {
				t.Fatalf("arrival %d at %v outside the phase %v", i, off, p.Duration)
			}
			if i > c.Total() {
				t.Fatalf("more arrivals than Total %d", c.Total())
			}
		}
	})
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"30", "30/s", "600/m", "0.5/h", "-1", "1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseRate(s)
		if err == nil && (v <= 0 || v > MaxRate || math.IsNaN(v)) {
			t.Fatalf("ParseRate(%q) = %v", s, v)
		}
	})
}

// TestInverseInvertsTheCumulativeRate checks Λ(Λ⁻¹(s)) = s over rising,
// falling and constant phases: the count of a plan rests on it.
func TestInverseInvertsTheCumulativeRate(t *testing.T) {
	t.Parallel()
	for _, p := range []Phase{
		{Duration: 10 * time.Second, From: 3, To: 24},
		{Duration: 10 * time.Second, From: 24, To: 3},
		{Duration: 10 * time.Second, From: 5, To: 5},
		{Duration: time.Minute, From: 0, To: 2},
	} {
		for s := 0.0; s < p.Expected(); s += p.Expected() / 37 {
			if got := p.cumulative(p.inverse(s)); math.Abs(got-s) > 1e-9*max(1, s) {
				t.Errorf("%+v: Λ(Λ⁻¹(%v)) = %v", p, s, got)
			}
		}
	}
}
