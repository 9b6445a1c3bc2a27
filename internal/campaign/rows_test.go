package campaign

import (
	"context"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/schedule"
	"github.com/ptuprobe/ptuprobe/sim"
)

// overloadJob is the run on one worker: 16 requests/s for 15 s
// against the embedded simulator (about 5.9 requests/s), in memory, with
// owner as the retry owner.
func overloadJob(t *testing.T, owner *admission.Policy) Job {
	t.Helper()
	plan, err := SchedulePlan(schedule.Config{Phases: []schedule.Phase{{Name: "c", Duration: 15 * time.Second, From: 16, To: 16}}})
	if err != nil {
		t.Fatal(err)
	}
	return Job{
		Plans:  []Plan{plan},
		Output: filepath.Join(t.TempDir(), "results.csv"),
		Target: Target{Spec: client.Spec{PromptTokens: 1000, MaxTokens: 100, Timeout: 30 * time.Second},
			Sim: sim.DefaultConfig(), InMemory: true, Owner: owner, PolicyName: "p"},
		Options: Options{MaxInFlight: 256, MaxRequests: 1000, Wait: sleep.Until},
	}
}

// pacePolicy and slotsPolicy are --policy pace's and slots' owners, as
// --max-attempts 10 --retry-budget 10s make them. One worker's pace at
// 16/s holds its queue within the default 30 s (the four workers,
// each learning its own rate, did not); within 10 s it sheds.
func pacePolicy(t *testing.T) *admission.Policy {
	p, err := admission.NewPace(admission.DefaultPaceConfig())
	if err != nil {
		t.Fatal(err)
	}
	return &admission.Policy{MaxAttempts: 10, Budget: 10 * time.Second, Jitter: 0.2, Pace: p}
}

func slotsPolicy(*testing.T) *admission.Policy {
	return &admission.Policy{MaxAttempts: 10, Budget: 10 * time.Second, MaxWait: time.Minute, Slots: admission.NewSlots(0)}
}

// lastRows are the last row of each seq of recs.
func lastRows(recs []results.Record) map[int]results.Record {
	last := map[int]results.Record{}
	for _, r := range recs {
		if l, ok := last[r.Seq]; !ok || r.Attempt > l.Attempt {
			last[r.Seq] = r
		}
	}
	return last
}

// TestEveryPlannedRequestHasARow: at overload a pace sheds requests
// locally, before their first send; each still has its row, so the file
// holds every planned seq, and each request's last row says what ended
// it. Under --policy pace 18 to 34 of 60 planned requests of a worker
// once had no row at all.
func TestEveryPlannedRequestHasARow(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		owner  func(*testing.T) *admission.Policy
		unsent bool // the policy sheds requests before their first send
	}{{"pace", pacePolicy, true}, {"slots", slotsPolicy, false}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			job := overloadJob(t, c.owner(t))
			synctest.Test(t, func(t *testing.T) {
				if _, err := Run(t.Context(), job); err != nil {
					t.Fatal(err)
				}
			})
			last := lastRows(testkit.ReadRecords(t, job.Output))
			if len(last) != job.Planned() {
				t.Fatalf("%d of %d planned requests have rows", len(last), job.Planned())
			}
			ends := map[string]int{}
			for _, r := range last {
				ends[r.Decision]++
				if r.NotSent() && (r.Status != 0 || r.SentMS != results.None || r.Error != results.ClassPaced) {
					t.Errorf("seq %d not sent: %+v", r.Seq, r)
				}
			}
			if ends[results.DecisionSleep] > 0 || ends[""] > 0 || ends[results.DecisionInterrupted] > 0 {
				t.Errorf("requests ended %v: a request's last row must say what ended it", ends)
			}
			if shed := ends[results.DecisionGiveUpLocal] > 0; shed != c.unsent {
				t.Errorf("requests ended %v; given up locally: %v, want %v", ends, shed, c.unsent)
			}
		})
	}
}

// TestInterruptRecordsRequestsHeld: Ctrl-C while the pace holds requests
// (and others wait out an advised wait) ends each at once with a row not
// sent, and nothing goes after it. Held requests were once sent after
// the stop, or left without a row when the grace ran out.
func TestInterruptRecordsRequestsHeld(t *testing.T) {
	t.Parallel()
	job := overloadJob(t, pacePolicy(t))
	const stopMS = 5010 // arrivals are 62.5 ms apart: seqs 0 to 80 are due by then
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(stopMS*time.Millisecond, cancel)
		if _, err := Run(ctx, job); !Interrupted(err) {
			t.Fatalf("err = %v, want interrupted", err)
		}
	})
	recs := testkit.ReadRecords(t, job.Output)
	last := lastRows(recs)
	if len(last) != 81 {
		t.Fatalf("%d requests have rows, want the 81 due before the stop", len(last))
	}
	for _, r := range recs {
		if r.SentMS > stopMS {
			t.Errorf("seq %d attempt %d sent at %v ms, after the stop", r.Seq, r.Attempt, r.SentMS)
		}
	}
	interrupted := 0
	for _, r := range last {
		if r.Decision == results.DecisionInterrupted {
			interrupted++
			if r.Error != results.ClassCanceled || r.Status != 0 || r.SentMS != results.None {
				t.Errorf("seq %d interrupted: %+v", r.Seq, r)
			}
		}
	}
	if interrupted == 0 {
		t.Error("no request was held at the stop: the test does not test it")
	}
}
