package fit

import (
	"testing"
	"time"

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
		l.add(completion, lat, prompt)
	}
	line, ok := l.line()
	if !ok {
		t.Fatal("no line from 40 answers")
	}
	gotTTFT, gotTPOT := line.At(100)
	if d := gotTTFT - 200*time.Millisecond; d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("TTFT %v, want 200ms (the prefill of the longer prompts, %.0f ms, taken off)", gotTTFT, extra)
	}
	if d := gotTPOT - 8*time.Millisecond; d < -10*time.Microsecond || d > 10*time.Microsecond {
		t.Errorf("TPOT %v, want 8ms", gotTPOT)
	}
	// At 50 PTU the same latencies hold less prefill (a 4,000-token prompt
	// takes 600 ms to read there), so the line's TTFT is lower.
	if small, _ := line.At(50); small >= gotTTFT {
		t.Errorf("TTFT at 50 PTU %v, not below %v at 100", small, gotTTFT)
	}
}
