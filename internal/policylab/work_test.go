package policylab

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/internal/policy"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/sim"
)

// TestWorkIsRefusedPastItsCap: the lab of issue 28 (every built-in, 1024
// clients, 100x, 20 repeats: no row after a minute) is refused before it
// runs, by a *valid.Error naming MaxWork with its estimate; raised past
// the estimate, it passes.
func TestWorkIsRefusedPastItsCap(t *testing.T) {
	t.Parallel()
	l := smallLab(t, sim.ProfilePTU, policy.Defaults()...)
	l.Loads, l.Clients, l.Repeat, l.Duration, l.MaxTokens = []Load{{Text: "100x", X: 100}}, []int{1024}, 20, 40*time.Second, 100
	l.Warmup, l.Tail = policy.DefaultBudget, policy.DefaultBudget // as policies runs it
	err := l.Validate()
	var v *valid.Error
	if !errors.As(err, &v) || v.Field() != "MaxWork" || !strings.Contains(err.Error(), num.Grouped(float64(l.Work()), 0)+" attempts") {
		t.Fatalf("Validate = %v; want MaxWork refused with the estimate", err)
	}
	l.MaxWork = l.Work()
	if err := l.Validate(); err != nil {
		t.Fatalf("with MaxWork at the estimate: %v", err)
	}
	l.MaxWork = 0
	if err := l.Validate(); !errors.As(err, &v) || v.Field() != "MaxWork" {
		t.Fatalf("MaxWork 0: %v", err)
	}
}

// TestWorkCountsEveryAttemptCap: the estimate is every arrival at its
// policy's attempts cap (stacked's application retries times its SDK's),
// per fleet size and repeat, a coordinated twin counted again; and it
// bounds what a run past capacity sends.
func TestWorkCountsEveryAttemptCap(t *testing.T) {
	t.Parallel()
	l := smallLab(t, sim.ProfilePTU, "none", "honor", "stacked", "slots")
	l.Loads, l.Clients, l.Repeat, l.Duration = []Load{{Text: "8/s", Rate: 8}}, []int{2, 4}, 3, 10*time.Second
	// 80 arrivals × (1 + 20 + 4 × 3 + 20, and honor and slots again at
	// the SDKs' 3) attempts × 2 fleet sizes × 3 repeats.
	if got, want := l.Work(), int64(80*(53+6)*2*3); got != want {
		t.Fatalf("Work = %d, want %d", got, want)
	}
	// A coordinated lab runs under its own cap only, slots twice.
	l.Coordinate = &Coordination{}
	if got, want := l.Work(), int64(80*(53+20)*2*3); got != want {
		t.Fatalf("coordinated: Work = %d, want %d (slots twice)", got, want)
	}
	// Past capacity honor retries to its cap, stacked to its application's.
	l.Coordinate, l.Policies = nil, l.Policies[1:3]
	l.Arrival, l.Loads, l.Clients, l.Repeat, l.Duration = Arrival{Kind: arrivalConstant}, []Load{{Text: "3x", X: 3}}, []int{4}, 1, 4*time.Second
	sw, err := runLab(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	sent := int64(0)
	for _, r := range sw.Rows {
		sent += int64(r.Attempts)
	}
	if sent == 0 || sent > l.Work() {
		t.Fatalf("the run sent %d attempts; the estimate %d should bound them", sent, l.Work())
	}
}
