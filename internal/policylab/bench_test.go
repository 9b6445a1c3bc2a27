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
			v := virtualRun{Spec: s, Sim: cfg, Rate: 3 * capacity, Duration: 20 * time.Second, Arrival: Arrival{Kind: arrivalPoisson}, Clients: 16,
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

// defaultLab is the lab `ptuprobe policies` runs with no flags (cmd's
// defaults): every built-in at 0.8x, 1.5x and 3x, 16 clients, 5 repeats,
// the 40 s window between 30 s of warmup and tail, the grid on the
// finalists.
func defaultLab(tb testing.TB) Lab {
	tb.Helper()
	var specs []policy.Spec
	for _, n := range policy.Defaults() {
		s, err := policy.Parse(n)
		if err != nil {
			tb.Fatal(err)
		}
		specs = append(specs, s)
	}
	loads, err := ParseLoads("0.8x,1.5x,3x")
	if err != nil {
		tb.Fatal(err)
	}
	return Lab{Policies: specs, Loads: loads, Clients: []int{16}, Repeat: 5, Budget: policy.DefaultBudget, MaxAttempts: policy.DefaultMaxAttempts,
		Sim: sim.DefaultConfig(), Duration: 40 * time.Second, Warmup: policy.DefaultBudget, Tail: policy.DefaultBudget, SLO: DefaultSLO,
		StoreDelay: DefaultStoreDelay, Arrival: Arrival{Kind: arrivalPoisson}, PromptTokens: 1000, MaxTokens: 100, MaxWork: 320_000_000, Grid: GridFinalists}
}

// BenchmarkDefaultLab is the default run's core (runLab: the sweep and the
// grid, no files written), on every core of the machine:
// go test -run '^$' -bench DefaultLab -benchtime 1x -cpuprofile cpu.out ./internal/policylab/
func BenchmarkDefaultLab(b *testing.B) {
	l := defaultLab(b)
	if err := l.Validate(); err != nil {
		b.Fatal(err)
	}
	runs := 0
	for b.Loop() {
		sw, err := runLab(context.Background(), l)
		if err != nil {
			b.Fatal(err)
		}
		runs = sw.Runs
	}
	b.ReportMetric(float64(runs), "runs")
}
