package policylab

import (
	"context"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/policy"
	"github.com/ptuprobe/ptuprobe/sim"
)

// BenchmarkVirtualRun is one run of the lab, the unit its time is made
// of: honor (the policy with the most attempts) at 3x capacity, 16
// clients, 20 s of Poisson arrivals. Reported per run, with attempts/s:
// go test -bench VirtualRun -cpuprofile cpu.out ./internal/policylab/
// shows where the time goes.
func BenchmarkVirtualRun(b *testing.B) {
	for _, name := range []string{"honor", "pace"} {
		b.Run(name, func(b *testing.B) {
			s, err := policy.Parse(name)
			if err != nil {
				b.Fatal(err)
			}
			s = s.Fair(policy.DefaultBudget, policy.DefaultMaxAttempts)
			cfg := sim.DefaultConfig()
			capacity, _ := cfg.Capacity(1000, 256, 16)
			v := virtualRun{Spec: s, Sim: cfg, Rate: 3 * capacity, Duration: 20 * time.Second, Arrival: Arrival{Kind: ArrivalPoisson}, Clients: 16,
				Seed: 1, Budget: policy.DefaultBudget, PromptTokens: 1000, MaxTokens: 256}
			attempts := 0
			b.ReportAllocs()
			for b.Loop() {
				out, err := v.run(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				attempts += out.Attempts
			}
			b.ReportMetric(float64(attempts)/b.Elapsed().Seconds(), "attempts/s")
		})
	}
}
