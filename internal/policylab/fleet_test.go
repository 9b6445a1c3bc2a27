package policylab

import (
	"context"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/schedule"
	"github.com/ptuprobe/ptuprobe/sim"
)

// TestLabOnATimeline: with a Start, run i of the lab (policy by policy,
// round by round) starts i × (the plans' Slots + the cooldown) after it,
// on the simulator too, and a shard sends its share of every run.
func TestLabOnATimeline(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var specs []Spec
		for _, name := range []string{"none", "honor"} {
			s, err := ParseSpec(name)
			if err != nil {
				t.Fatal(err)
			}
			specs = append(specs, s)
		}
		plans := func(float64) ([]campaign.Plan, error) {
			b, err := campaign.BurstPlan(burst.Config{Size: 8, Waves: 2, Gap: time.Second}, false) // slot 2 s
			if err != nil {
				return nil, err
			}
			s, err := campaign.SchedulePlan(schedule.Config{Phases: []schedule.Phase{{Name: "c", Duration: 2 * time.Second, From: 4, To: 4}}}) // slot 2 s
			return []campaign.Plan{b, s}, err
		}
		start := time.Now().Add(10 * time.Minute)
		type begun struct {
			policy, shape string
			at            time.Time
		}
		var starts []begun
		sent := 0
		lab := Lab{
			Plans:    plans,
			Policies: specs,
			Target: campaign.Target{
				Spec: client.Spec{PromptTokens: client.DefaultPromptTokens, MaxTokens: client.DefaultMaxTokens, Timeout: client.DefaultTimeout},
				Sim:  sim.DefaultConfig(), InMemory: true,
			},
			Options: campaign.Options{MaxInFlight: 64, MaxRequests: 1000, Wait: sleep.Until,
				Start: start, Shard: dispatch.Shard{Index: 1, Count: 3}},
			Output:   filepath.Join(t.TempDir(), "results.csv"),
			Repeat:   2,
			Cooldown: 5 * time.Second,
			Watch: func(policy string, p campaign.Plan) (func(*results.Record), func(dispatch.Outcome)) {
				starts = append(starts, begun{policy, p.Shape, p.Start})
				return nil, func(o dispatch.Outcome) { sent += o.Sent }
			},
		}
		if _, err := Run(context.Background(), lab); err != nil {
			t.Fatal(err)
		}
		// Each run: 16 burst and 8 scheduled arrivals, of which shard 1/3
		// sends 5 and 3 (seq 1, 4, 7, …); four runs.
		if len(starts) != 8 || sent != 4*(5+3) {
			t.Fatalf("%d plans started, %d requests sent", len(starts), sent)
		}
		const slot = 2*time.Second + 2*time.Second + 5*time.Second
		for i, b := range starts {
			run := i / 2
			want := start.Add(time.Duration(run) * slot)
			if b.shape == results.ShapeScheduled {
				want = want.Add(2 * time.Second)
			}
			if b.policy != specs[run%2].Name || !b.at.Equal(want) {
				t.Errorf("plan %d: %s %s began at %v, want %s at +%v", i, b.policy, b.shape, b.at.Sub(start), specs[run%2].Name, want.Sub(start))
			}
		}
	})
}
