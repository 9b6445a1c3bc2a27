package policylab

import (
	"context"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/policy"
	"github.com/ptuprobe/ptuprobe/sim"
)

// TestLateRequestsCounted: rule (e) reads, per request, whether it ended
// after the lab's budget, on the simulator's own runs. A policy built to
// break the rule — its own budget a minute, the lab's 2 s — ends most
// requests late; the same policy under the lab's budget ends fewer, but
// not none: the Transport does not cut an attempt in flight at the
// budget (admission.Policy.Budget), and at 2 s an answer of 256 tokens
// often takes longer. So the check can fail, for a policy with a budget
// too.
func TestLateRequestsCounted(t *testing.T) {
	t.Parallel()
	const budget = 2 * time.Second
	late := func(name string) (late, offered int) {
		t.Helper()
		spec, err := policy.Parse(name)
		if err != nil {
			t.Fatal(err)
		}
		cfg := sim.DefaultConfig()
		capacity, _ := cfg.Capacity(1000, 256, 8)
		v := virtualRun{Spec: spec.Fair(budget, policy.DefaultMaxAttempts), Sim: cfg, Rate: 3 * capacity, Duration: 6 * time.Second,
			Arrival: Arrival{Kind: arrivalPoisson}, Clients: 8, Seed: 1, Budget: budget, PromptTokens: 1000, MaxTokens: 256}
		out, err := v.run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		m, _ := measureOf(out.Each, window{0, v.Duration}, 10*time.Second)
		return m.Late, m.Offered
	}
	breaker, n := late("slow=honor,budget=1m")
	if n == 0 || breaker == 0 {
		t.Fatalf("honor with its own 1 m budget under the lab's 2 s: %d of %d requests ended late, want some", breaker, n)
	}
	fair, n2 := late("honor")
	if fair == 0 || fair*3 > breaker {
		t.Errorf("honor under the lab's budget: %d of %d requests ended late, against %d of %d for the breaker", fair, n2, breaker, n)
	}
	t.Logf("late: slow %d of %d, honor %d of %d", breaker, n, fair, n2)
}
