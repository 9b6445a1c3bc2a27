package policylab

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/sim"
)

func TestExplore(t *testing.T) {
	if os.Getenv("EXPLORE") == "" {
		t.Skip()
	}
	var specs []Spec
	for _, n := range DefaultPolicies() {
		s, _ := ParseSpec(n)
		specs = append(specs, s)
	}
	loads, _ := ParseLoads("0.8x,1.5x,3x")
	cfg := sim.DefaultConfig()
	if p := os.Getenv("PROFILE"); p != "" {
		cfg.Profile = p
	}
	l := Lab{Policies: specs, Loads: loads, Clients: []int{16}, Budget: 30 * time.Second, MaxAttempts: 20, Sim: cfg,
		Duration: 40 * time.Second, Poisson: true, Repeat: 3, PromptTokens: 1000, MaxTokens: 256}
	start := time.Now()
	sw, err := Run(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("capacity %.3f (%s) in %v\n", sw.Capacity, sw.CapacityFormula, time.Since(start))
	for _, r := range sw.Rows {
		fmt.Printf("%-16s %5s req %5d ok %5.1f%% [%5.1f %5.1f] cap %6.1f%% att/s %6.2f 429/s %6.2f p50 %7.0f p99 %7.0f over %4d early %4d redir %d\n",
			r.Policy, r.Load, r.Requests, r.SuccessPct, r.SuccessPctMin, r.SuccessPctMax, r.CapacitySharePct, r.AttemptsPerSuccess, r.HTTP429PerSuccess, r.E2EP50MS, r.E2EP99MS, r.OverBudget, r.EarlyRetries, r.Redirected)
	}
}
