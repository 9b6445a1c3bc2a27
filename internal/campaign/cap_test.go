package campaign

import (
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/schedule"
	"github.com/ptuprobe/ptuprobe/sim"
)

// TestBudgetBoundsEveryAttempt: the cap on the time spent sending
// (--max-duration: Options.Budget) bounds every attempt, retries
// included. Against the embedded simulator, in memory, bursts far over
// its capacity are refused with advised waits of seconds, and the retry
// owner (with a budget of its own far past the cap) would retry them past
// it: under --max-duration 10s a retry once went out at 27.9 s. No
// attempt goes at or past the cap, every planned request has a row, and
// a retry that would have gone past it is a local give-up (timeout),
// recorded as not sent. Characterize's plans, one after another under
// one budget, likewise.
func TestBudgetBoundsEveryAttempt(t *testing.T) {
	t.Parallel()
	const budget = 10 * time.Second
	bursts := func(t *testing.T) []Plan {
		p, err := BurstPlan(burst.Config{Size: 50, Waves: 3, Gap: 4900 * time.Millisecond}, false)
		if err != nil {
			t.Fatal(err)
		}
		return []Plan{p}
	}
	burstThenSchedule := func(t *testing.T) []Plan {
		b, err := BurstPlan(burst.Config{Size: 50, Waves: 1}, false)
		if err != nil {
			t.Fatal(err)
		}
		s, err := SchedulePlan(schedule.Config{Phases: []schedule.Phase{{Name: "c", Duration: 8 * time.Second, From: 12, To: 12}}})
		if err != nil {
			t.Fatal(err)
		}
		return []Plan{b, s}
	}
	retries := func() *admission.Policy {
		return &admission.Policy{MaxAttempts: 8, Budget: 5 * time.Minute, MaxWait: time.Minute}
	}
	cooldown := func() *admission.Policy {
		p := retries()
		p.SharedCooldown = true
		return p
	}
	for _, c := range []struct {
		name  string
		plans func(*testing.T) []Plan
		owner func() *admission.Policy
	}{
		{"burst, --max-attempts 8", bursts, retries},
		{"burst, shared cooldown", bursts, cooldown},
		{"characterize's plans", burstThenSchedule, retries},
	} {
		if testkit.Race && c.name != "burst, --max-attempts 8" {
			continue // the same goroutines at work in each
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			job := Job{
				Plans:  c.plans(t),
				Output: filepath.Join(t.TempDir(), "results.csv"),
				Target: Target{Spec: client.Spec{PromptTokens: 1000, MaxTokens: 100, Timeout: 30 * time.Second},
					Sim: sim.DefaultConfig(), InMemory: true, Owner: c.owner(), PolicyName: "p"},
				Options: Options{MaxInFlight: 256, MaxRequests: 1000, Budget: budget, Wait: sleep.Until},
			}
			var out Outcome
			caps := map[string]time.Duration{} // each plan's cap, from its own start
			synctest.Test(t, func(t *testing.T) {
				began := time.Now()
				job.Options.Watch = func(p Plan) (func(*results.Record), func(dispatch.Outcome)) {
					caps[p.Shape] = budget - time.Since(began)
					return nil, nil
				}
				var err error
				if out, err = Run(t.Context(), job); err != nil {
					t.Fatal(err)
				}
			})
			checkCapped(t, testkit.ReadRecords(t, job.Output), out, caps)
		})
	}
}

// checkCapped checks the rows of a run under a budget: none sent at or
// past it (caps: its time left when each plan began, by shape), a row for each request sent, each request's last row saying
// what ended it, and a retry given up at the cap among them.
func checkCapped(t *testing.T, recs []results.Record, out Outcome, caps map[string]time.Duration) {
	t.Helper()
	var capped, retries, late int
	for _, r := range recs {
		if c := caps[r.Shape]; r.SentMS != results.None && r.SentMS >= float64(c/time.Millisecond) {
			if late++; late <= 3 {
				t.Errorf("%s seq %d attempt %d sent at %.0f ms of its plan, past the cap at %v", r.Shape, r.Seq, r.Attempt, r.SentMS, c)
			}
		}
		if r.Attempt > 1 && !r.NotSent() {
			retries++
		}
		if r.NotSent() {
			if r.Decision != results.DecisionGiveUpLocal || r.Error != results.ClassTimeout || r.Status != 0 || r.LatencyMS != results.None {
				t.Errorf("seq %d attempt %d not sent: %+v, want give-up-local, timeout", r.Seq, r.Attempt, r)
			}
			if r.Policy != "p" || r.MaxTokens != 100 {
				t.Errorf("seq %d attempt %d not sent lacks its policy or max_tokens: %+v", r.Seq, r.Attempt, r)
			}
			capped++
		}
	}
	if late > 0 {
		t.Errorf("%d attempts of %d sent past the cap", late, len(recs))
	}
	last := map[[2]any]results.Record{} // by plan and seq
	for _, r := range recs {
		k := [2]any{r.Shape, r.Seq}
		if l, ok := last[k]; !ok || r.Attempt > l.Attempt {
			last[k] = r
		}
	}
	if len(last) != out.Sent {
		t.Errorf("%d requests have rows, %d were handed to the sender", len(last), out.Sent)
	}
	for _, r := range last {
		if r.Decision == results.DecisionSleep || r.Decision == results.DecisionInterrupted {
			t.Errorf("seq %d ends with %q: a request's last row must say what ended it", r.Seq, r.Decision)
		}
	}
	if capped == 0 || retries == 0 {
		t.Errorf("%d retries sent, %d attempts given up at the cap: the run does not test the cap on retries", retries, capped)
	}
	t.Logf("%d rows, %d retries sent, %d given up at the cap", len(recs), retries, capped)
}
