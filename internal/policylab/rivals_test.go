package policylab

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/policy"
	"github.com/ptuprobe/ptuprobe/sim"
)

// TestRivalsRunTheirMechanism: each built-in after a policy of the field
// runs its mechanism, seen against the built-in it adds to, on the same
// arrivals at 3x capacity (8 clients, 10 s): without its mechanism it
// would measure the same as that one.
func TestRivalsRunTheirMechanism(t *testing.T) {
	t.Parallel()
	run := func(name string) runOutcome {
		t.Helper()
		spec, err := policy.Parse(name)
		if err != nil {
			t.Fatal(err)
		}
		cfg := sim.DefaultConfig()
		capacity, _ := cfg.Capacity(1000, 256, 8)
		v := virtualRun{Spec: spec.Fair(policy.DefaultBudget, policy.DefaultMaxAttempts), Sim: cfg, Rate: 3 * capacity, Duration: 10 * time.Second,
			Arrival: Arrival{Kind: arrivalPoisson}, Clients: 8, Seed: 1, Budget: policy.DefaultBudget, PromptTokens: 1000, MaxTokens: 256}
		out, err := v.run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	per := func(n, of int) float64 { return float64(n) / float64(max(of, 1)) }
	outs := map[string]runOutcome{}
	for _, n := range []string{"honor", "backoff", "pace", "honor-full-jitter", "sre-throttle", "honor-aws-quota", "honor-aws-adaptive", "decorrelated", "utilization"} {
		outs[n] = run(n)
		o := outs[n]
		t.Logf("%-17s %5d requests, %5.2f attempts and %5.2f 429s per request, %4d succeeded, %d early returns",
			n, o.Requests, per(o.Attempts, o.Requests), per(o.HTTP429, o.Requests), o.Succeeded, o.EarlyReturns)
	}
	for _, c := range []struct {
		rival, base string
		fewer       func(runOutcome) float64
		what        string
	}{
		// The SRE book's throttling and the AWS retry quota send fewer
		// attempts per request than honouring alone.
		{"sre-throttle", "honor", func(o runOutcome) float64 { return per(o.Attempts, o.Requests) }, "attempts per request"},
		{"honor-aws-quota", "honor", func(o runOutcome) float64 { return per(o.Attempts, o.Requests) }, "attempts per request"},
		// The adaptive rate limits sends: fewer refusals.
		{"honor-aws-adaptive", "honor", func(o runOutcome) float64 { return per(o.HTTP429, o.Requests) }, "429s per request"},
		// Decorrelated waits grow faster than full jitter's: fewer attempts.
		{"decorrelated", "backoff", func(o runOutcome) float64 { return per(o.Attempts, o.Requests) }, "attempts per request"},
		// Reading the utilization, the pace is cut between refusals too:
		// fewer attempts (the simulator's header on an admitted answer
		// comes with the whole completion, its reading a second old, so
		// the refusals are about pace's: 0.34 per request both).
		{"utilization", "pace", func(o runOutcome) float64 { return per(o.Attempts, o.Requests) }, "attempts per request"},
	} {
		if r, b := c.fewer(outs[c.rival]), c.fewer(outs[c.base]); !(r < b) {
			t.Errorf("%s: %.2f %s, %s %.2f: want fewer", c.rival, r, c.what, c.base, b)
		}
	}
	// Full jitter over the advised wait waits longer than honor's fifth:
	// the same arrivals meet the deployment at other times.
	if reflect.DeepEqual(outs["honor-full-jitter"], outs["honor"]) {
		t.Error("honor-full-jitter measured exactly as honor")
	}
}
