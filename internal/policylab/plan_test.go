package policylab

import (
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/policy"
)

// planLab is defaultLab with the named policies, loads, fleet sizes,
// repeats and window (cmd's defaults otherwise).
func planLab(t *testing.T, names []string, loads string, clients []int, repeat int, duration time.Duration) Lab {
	t.Helper()
	l := defaultLab(t)
	if names != nil {
		l.Policies = nil
		for _, n := range names {
			l.Policies = append(l.Policies, mustParse(t, n))
		}
	}
	var err error
	if l.Loads, err = ParseLoads(loads); err != nil {
		t.Fatal(err)
	}
	l.Clients, l.Repeat, l.Duration, l.MaxWork = clients, repeat, duration, DefaultMaxWork
	return l
}

func mustParse(t *testing.T, name string) policy.Spec {
	t.Helper()
	s, err := policy.Parse(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestWritePlanAsCmdWroteIt: the dry run's plan, moved from cmd, writes
// the bytes `ptuprobe policies --dry-run` wrote there (at 8569561: the
// default lab; a named target at --capacity 6; two coordinated fleets on
// a 200-PTU simulator), and the announcement its first line.
func TestWritePlanAsCmdWroteIt(t *testing.T) {
	t.Parallel()
	named := planLab(t, []string{"honor", "pace"}, "1.5x,8/s", []int{16}, 2, 60*time.Second)
	named.Named = &Named{Target: campaign.Target{}, Capacity: 6, Pause: 30 * time.Second}
	coordinated := planLab(t, []string{"pace", "honor"}, "3x", []int{4, 8}, 1, 40*time.Second)
	coordinated.Sim.PTU, coordinated.Coordinate = 200, &Coordination{}
	for _, c := range []struct {
		name string
		lab  Lab
		want string
	}{
		{"default", planLab(t, nil, "0.8x,1.5x,3x", []int{16}, 5, 40*time.Second), `runs: 645 (25 policies × 3 loads × 1 fleet size × 5 repeats), each on a virtual clock (seconds of wall time)
loads: 0.8x (4.742/s), 1.5x (8.891/s), 3x (17.78/s), each for 40s: 397250 requests in all (first attempts), peak 17.78/s
work: at most 7,082,955 attempts on the simulator (--max-work 320,000,000)
report: ptuprobe-policies
`},
		{"named", named, `runs: 8 (2 policies × 2 loads × 1 fleet size × 2 repeats), on the wall clock, one run at a time
loads: 1.5x (9/s), 8/s (8/s), each for 1m0s: 8348 requests in all (first attempts), peak 9/s
expected duration: up to about 15m30s
report: ptuprobe-policies
`},
		{"coordinated", coordinated, `runs: 6 (2 policies × 1 load × 2 fleet sizes × 1 repeat), each on a virtual clock (seconds of wall time); 1 policy also coordinated through --coordinate's Redis, in real time
loads: 3x (20.92/s), each for 40s: 12600 requests in all (first attempts), peak 20.92/s
work: at most 251,040 attempts on the simulator (--max-work 320,000,000)
report: ptuprobe-policies
`},
	} {
		var b strings.Builder
		Job{Lab: c.lab, OutDir: "ptuprobe-policies"}.WritePlan(&b)
		if b.String() != c.want {
			t.Errorf("%s:\n%s\nwant\n%s", c.name, b.String(), c.want)
		}
	}
	small := planLab(t, []string{"none", "honor"}, "3x", []int{16}, 1, 5*time.Second)
	named.Named.Pause = time.Second
	for _, c := range []struct {
		lab  Lab
		want string
	}{
		{small, "ptuprobe: up to 3 runs (2 policies × 1 loads × 1 fleet sizes × 1 repeats; on the simulator a row clearly beaten after 3 keeps them) on the embedded simulator, on a virtual clock, at most 27,720 attempts\n"},
		{named, "ptuprobe: up to 8 runs (2 policies × 2 loads × 1 fleet sizes × 2 repeats; on the simulator a row clearly beaten after 3 keeps them) against the named target, in turn on the wall clock, 8348 requests in all, up to about 12m7s\n"},
	} {
		var b strings.Builder
		c.lab.Announce(&b)
		if b.String() != c.want {
			t.Errorf("announced\n%s\nwant\n%s", b.String(), c.want)
		}
		c.lab.Progress(1, 3)
		if !strings.HasSuffix(b.String(), "ptuprobe: 1 of 3 runs done\n") {
			t.Errorf("progress: %q", b.String())
		}
	}
}
