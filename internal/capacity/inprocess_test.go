package capacity

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/sim"
)

func fixed(prompt, maxTokens int) func(int) (int, int) {
	return func(int) (int, int) { return prompt, maxTokens }
}

// TestInProcessStopsEarlyWhenTTFTRises: on a simulator that admits
// everything but prefills slower than prompts arrive, TTFT rises with
// the load through the step, and the step stops before its plan is sent
// (the SLO is lenient, so only the rising TTFT stops it).
func TestInProcessStopsEarlyWhenTTFTRises(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.PTU, cfg.TokensPerPTU = 15, 1_000_000 // admits everything; prefills 1,500 tokens a second
	p := &InProcess{Sim: cfg, Shape: fixed(1000, 50)}
	c := Config{Max429Share: 0.05, SLO: analyze.SLO{TTFT: 10 * time.Minute}, StepDuration: 60 * time.Second}
	c.Defaults()
	var sent int
	tl := NewTally(&c, 4) // 6,000 prompt tokens a second offered
	counting := *p
	if err := counting.Measure(context.Background(), Probe{Rate: 4}, tl); err != nil {
		t.Fatal(err)
	}
	s := tl.Step(Probe{Rate: 4})
	sent = s.Answered
	if s.StoppedEarly != StopSaturated || s.Passed || sent >= s.Judged {
		t.Fatalf("step at 4/s: %+v; want it stopped as TTFT rises, before its plan was sent", s)
	}
	calm := NewTally(&c, 1) // 1,000 a second: TTFT stays flat
	if err := p.Measure(context.Background(), Probe{Rate: 1}, calm); err != nil {
		t.Fatal(err)
	}
	if s := calm.Step(Probe{Rate: 1}); !s.Passed || s.StoppedEarly != "" || s.Answered != s.Judged {
		t.Fatalf("step at 1/s: %+v; want it run whole and passed", s)
	}
}

// TestInProcessTimesTheStream: the time to first token and per output
// token are the simulator's own on an idle deployment.
func TestInProcessTimesTheStream(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	c := Config{Max429Share: 0.05, StepDuration: 10 * time.Second}
	c.Defaults()
	tl := NewTally(&c, 0.5)
	p := &InProcess{Sim: cfg, Shape: fixed(sim.PrefillRefTokens, 100)}
	if err := p.Measure(context.Background(), Probe{Rate: 0.5}, tl); err != nil {
		t.Fatal(err)
	}
	s := tl.Step(Probe{Rate: 0.5})
	if s.Answered == 0 || s.TTFTP99MS != ms(cfg.TTFT) || !(s.TPOTP99MS > 0 && s.TPOTP99MS <= ms(cfg.TPOT)) {
		t.Errorf("%+v: want TTFT %v and TPOT up to %v", s, cfg.TTFT, cfg.TPOT)
	}
}

// TestSearchOnTheSimulator: twice the PTU sustain about twice the load,
// and a search is a function of its settings: the same files twice.
func TestSearchOnTheSimulator(t *testing.T) {
	t.Parallel()
	search := func(ptu float64) ([]byte, Result) {
		cfg := sim.DefaultConfig()
		cfg.PTU = ptu
		p := &InProcess{Sim: cfg, Shape: fixed(1000, 200)}
		res, err := Search(context.Background(), def(Config{Max429Share: 0.05, SLO: analyze.SLO{TTFT: 2 * time.Second}, StepDuration: 30 * time.Second}), p.Measure)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := res.WriteDir(dir); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, FileJSON))
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(filepath.Join(dir, FileChart)); err != nil || fi.Size() == 0 {
			t.Errorf("chart: %v", err)
		}
		return b, res
	}
	a, small := search(50)
	b, _ := search(50)
	if !bytes.Equal(a, b) {
		t.Error("two searches of one setting wrote different capacity.json")
	}
	_, large := search(100)
	if r := large.Max / small.Max; small.Verdict != VerdictFound || !(r >= 1.6 && r <= 2.4) {
		t.Errorf("50 PTU %g/s, 100 PTU %g/s: ratio %g", small.Max, large.Max, r)
	}
	var doc map[string]any
	if err := json.Unmarshal(a, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"max_rate_per_s", "max_tokens_per_min", "interval_low_per_s", "interval_high_per_s", "steps"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("capacity.json has no %s", k)
		}
	}
}
