package policylab

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/sim"
)

// TestApplicationLoopOutcomes: a virtual client's application loop
// (stacked's four calls a second apart; one call for the others) gives,
// request by request, the outcomes testdata/outer.golden holds — written
// by the lab's own loop before it became policy.Outer.Run.
func TestApplicationLoopOutcomes(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	capacity, _ := cfg.Capacity(1000, 100, 4)
	var b strings.Builder
	for _, name := range []string{"stacked", "sdk", "honor", "none"} {
		v := virtualRun{Spec: mustSpec(t, name), Sim: cfg, Rate: 3 * capacity, Duration: 4 * time.Second, Arrival: Arrival{Kind: arrivalPoisson},
			Clients: 4, Seed: 1, Budget: 10 * time.Second, PromptTokens: 1000, MaxTokens: 100}
		out, err := v.run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s: %d requests, %d succeeded, %d gave up, %d attempts, %d 429s, %d over budget, %d in plan, %d SDK retries\n",
			name, out.Requests, out.Succeeded, out.GaveUp, out.Attempts, out.HTTP429, out.OverBudget, out.InPlan, out.SDKRetries)
		for i, q := range out.Each {
			fmt.Fprintf(&b, "  %d %+v\n", i, q)
		}
	}
	golden(t, "outer.golden", []byte(b.String()))
}
