package capacity

import (
	"context"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/sim"
)

// BenchmarkSearch is `ptuprobe capacity --sim-ptu PTU --slo ttft=2s`'s
// search with the command's defaults, in process on the virtual clock.
func BenchmarkSearch(b *testing.B) {
	for _, ptu := range []float64{100, 200} {
		b.Run("ptu="+map[float64]string{100: "100", 200: "200"}[ptu], func(b *testing.B) {
			cfg := sim.DefaultConfig()
			cfg.PTU = ptu
			p := &InProcess{Sim: cfg, Shape: fixed(1000, 100)}
			c := Config{Max429Share: DefaultMax429Share, SLO: analyze.SLO{TTFT: 2 * time.Second}}
			c.Defaults()
			for b.Loop() {
				if _, err := Search(context.Background(), c, p.Measure); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
