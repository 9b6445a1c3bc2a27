package fit

import (
	"os"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/sim"
)

// TestLatencyLineTakesOffThePrefill: answers to 4,000-token prompts from
// a deployment of 100 PTU took (4,000 − 1,000) ÷ 10,000 tokens a second
// = 300 ms longer to their first token than --sim-ttft says (the TTFT of
// a 1,000-token prompt); the line read from them is the simulator's TTFT,
// not TTFT + 300 ms, at that size, and a smaller deployment reads them
// more slowly still.
func TestLatencyLineTakesOffThePrefill(t *testing.T) {
	const ttft, tpot = 200.0, 8.0 // ms
	extra := 3000 / sim.PrefillRate(100) * 1000
	var l latencyFit
	for i := range 40 {
		completion := float64(20 + 10*i)
		prompt := 1000.0
		if i%2 == 1 {
			prompt = 4000
		}
		lat := ttft + completion*tpot
		if prompt == 4000 {
			lat += extra
		}
		// One answer at a time (a second apart): no queue, no shared decode.
		l.add("run", latencyPoint{sent: float64(i) * 10_000, latency: lat, completion: completion, prompt: prompt})
	}
	line, ok := l.line()
	if !ok {
		t.Fatal("no line from 40 answers")
	}
	gotTTFT, gotTPOT := line.At(at(100))
	if d := gotTTFT - 200*time.Millisecond; d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("TTFT %v, want 200ms (the prefill of the longer prompts, %.0f ms, taken off)", gotTTFT, extra)
	}
	if d := gotTPOT - 8*time.Millisecond; d < -10*time.Microsecond || d > 10*time.Microsecond {
		t.Errorf("TPOT %v, want 8ms", gotTPOT)
	}
	// At 50 PTU the same latencies hold less prefill (a 4,000-token prompt
	// takes 600 ms to read there), so the line's TTFT is lower.
	if small, _ := line.At(at(50)); small >= gotTTFT {
		t.Errorf("TTFT at 50 PTU %v, not below %v at 100", small, gotTTFT)
	}
}

// at is the default deployment at ptu PTU.
func at(ptu float64) sim.Config {
	c := sim.DefaultConfig()
	c.PTU = ptu
	return c
}

// TestLatencyLineTakesOffTheQueue: the main job's answers from a
// simulator of TTFT 150 ms and TPOT 6 ms waited behind each other's
// prompts (a burst wave's 40 at once) and shared its decode; the line
// read from them is the simulator's own TTFT and TPOT, not the queue's
// mean (a plain line of latency on completion read a TTFT of 432 ms from
// a served target of TTFT 200 ms; the twin queued its answers again).
func TestLatencyLineTakesOffTheQueue(t *testing.T) {
	t.Parallel()
	f, err := os.Open(hiddenRun(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := fromResults(t.Context(), []input{{Name: "hidden.csv", R: f}}, client.DefaultPromptTokens, client.DefaultMaxTokens, 0, nil)
	if err != nil || !s.LatencyOK {
		t.Fatalf("no latency line: %v", err)
	}
	h := hidden()
	ttft, tpot := s.Latency.At(h)
	t.Logf("read TTFT %v TPOT %v, the simulator's %v %v", ttft, tpot, h.TTFT, h.TPOT)
	if d := ttft - h.TTFT; d < -15*time.Millisecond || d > 15*time.Millisecond {
		t.Errorf("TTFT %v, want %v within 15 ms", ttft, h.TTFT)
	}
	if d := tpot - h.TPOT; d < -300*time.Microsecond || d > 300*time.Microsecond {
		t.Errorf("TPOT %v, want %v within 0.3 ms", tpot, h.TPOT)
	}
}
