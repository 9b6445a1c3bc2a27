package policylab

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/sim"
)

// smallLab is the default lab made small: the named policies at 1.5x and
// 3x, a fleet of 16, one repeat of 20 s of arrivals.
func smallLab(t *testing.T, profile string, names ...string) Lab {
	t.Helper()
	var specs []Spec
	for _, n := range names {
		s, err := ParseSpec(n)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	loads, err := ParseLoads("1.5x,3x")
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.DefaultConfig()
	cfg.Profile = profile
	return Lab{Policies: specs, Loads: loads, Clients: []int{16}, Budget: DefaultBudget, MaxAttempts: DefaultMaxAttempts,
		Sim: cfg, Duration: 20 * time.Second, Poisson: true, Repeat: 1, PromptTokens: 1000, MaxTokens: 256, MaxWork: DefaultMaxWork}
}

func rowsByCell(rows []Row) map[[2]string]Row {
	out := map[[2]string]Row{}
	for _, r := range rows {
		out[[2]string{r.Policy, r.Load}] = r
	}
	return out
}

// TestSweepIsAFunctionOfItsSettings: the same lab gives the same rows,
// however its runs were spread over the cores, and another seed gives
// other rows.
func TestSweepIsAFunctionOfItsSettings(t *testing.T) {
	t.Parallel()
	l := smallLab(t, sim.ProfilePTU, "backoff", "pace", "slots")
	l.Loads, l.Repeat, l.Duration = l.Loads[1:], 2, 10*time.Second
	a, err := Run(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs of one lab differ")
	}
	l.Sim.Seed = 7
	c, err := Run(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(a.Rows, c.Rows) {
		t.Fatal("another seed gave the same rows")
	}
	if len(a.Rows) != 3 || a.Rows[0].Repeats != 2 || a.Rows[0].Requests == 0 || !a.Deterministic {
		t.Fatalf("rows %d, repeats %d", len(a.Rows), a.Rows[0].Repeats)
	}
}

// TestTheHerd checks, as relations on the simulator's PTU model under
// sustained overload with a fleet of 16, what the comparison found. A
// failure here is a finding about the model or the policies: report it,
// do not tune the model.
func TestTheHerd(t *testing.T) {
	t.Parallel()
	l := smallLab(t, sim.ProfilePTU, "honor", "backoff", "sdk", "stacked", "slots", "pace")
	l.Duration = 12 * time.Second
	sw, err := Run(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	rows := rowsByCell(sw.Rows)
	for _, load := range []string{"1.5x", "3x"} {
		r := func(p string) Row { return rows[[2]string{p, load}] }
		// Honouring alone loses to backoff: every refused client hears the
		// wait of the next single request and comes back together.
		if !(r("honor").AttemptsPerSuccess > 2*r("backoff").AttemptsPerSuccess) {
			t.Errorf("%s: honor %.2f attempts per success, backoff %.2f: the herd should make honouring alone costlier",
				load, r("honor").AttemptsPerSuccess, r("backoff").AttemptsPerSuccess)
		}
		// Distinct slots answer the herd without early returns.
		if !(r("slots").HTTP429PerSuccess < r("honor").HTTP429PerSuccess/2) || r("slots").EarlyRetries != 0 {
			t.Errorf("%s: slots %.2f 429s per success (%d early), honor %.2f", load,
				r("slots").HTTP429PerSuccess, r("slots").EarlyRetries, r("honor").HTTP429PerSuccess)
		}
		// Stacked owners multiply the attempts of the SDK alone.
		if !(r("stacked").AttemptsPerSuccess > r("sdk").AttemptsPerSuccess) {
			t.Errorf("%s: stacked %.2f attempts per success, sdk %.2f", load, r("stacked").AttemptsPerSuccess, r("sdk").AttemptsPerSuccess)
		}
		// Pacing: the fewest attempts per success of every retrying policy,
		// most of the capacity as goodput, and never early.
		pace := r("pace")
		for _, p := range []string{"honor", "backoff", "slots", "stacked", "sdk"} {
			if !(pace.AttemptsPerSuccess < r(p).AttemptsPerSuccess) {
				t.Errorf("%s: pace %.2f attempts per success, %s %.2f", load, pace.AttemptsPerSuccess, p, r(p).AttemptsPerSuccess)
			}
		}
		if pace.CapacitySharePct < 85 || pace.EarlyRetries != 0 {
			t.Errorf("%s: pace delivers %.1f%% of capacity, %d early", load, pace.CapacitySharePct, pace.EarlyRetries)
		}
		for _, p := range []string{"honor", "slots", "pace"} {
			if r(p).EarlyRetries != 0 {
				t.Errorf("%s: %s came back early %d times", load, p, r(p).EarlyRetries)
			}
		}
		// The ambition (≥ 95%% of capacity at ≤ 1.2 attempts per success):
		// logged, for the record; TestTheHerd asserts only what holds.
		for _, p := range []string{"honor", "backoff", "slots", "pace"} {
			t.Logf("%s %-8s goodput %5.1f%% of capacity, %.2f attempts and %.2f 429s per success, p99 %.0f ms",
				load, p, r(p).CapacitySharePct, r(p).AttemptsPerSuccess, r(p).HTTP429PerSuccess, r(p).E2EP99MS)
		}
	}
}

// TestOtherLimiters: the fixed-window limiter and the gateway's dual
// ceilings run the same lab; on the window, ignoring the header returns
// early (before the window's end) and honouring it never does.
func TestOtherLimiters(t *testing.T) {
	t.Parallel()
	l := smallLab(t, sim.ProfileWindow, "backoff", "honor", "pace")
	l.Duration = 12 * time.Second
	sw, err := Run(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	if sw.Capacity != 5 || sw.Limiter != sim.ProfileWindow {
		t.Fatalf("window capacity %v (%s)", sw.Capacity, sw.CapacityFormula)
	}
	rows := rowsByCell(sw.Rows)
	if rows[[2]string{"backoff", "3x"}].EarlyRetries == 0 || rows[[2]string{"honor", "3x"}].EarlyRetries != 0 {
		t.Errorf("window: backoff early %d, honor early %d", rows[[2]string{"backoff", "3x"}].EarlyRetries, rows[[2]string{"honor", "3x"}].EarlyRetries)
	}
	g := smallLab(t, sim.ProfileGateway, "honor", "pace")
	g.Sim.GatewayKeyRPS, g.Sim.GatewayOrgRPS = 1, 8
	g.Duration = 10 * time.Second
	sw, err = Run(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	if sw.Capacity != 8 {
		t.Fatalf("gateway capacity %v (%s)", sw.Capacity, sw.CapacityFormula)
	}
	for _, r := range sw.Rows {
		if r.Succeeded == 0 || r.CapacitySharePct < 50 {
			t.Errorf("gateway %s %s: %d succeeded, %.1f%% of capacity", r.Policy, r.Load, r.Succeeded, r.CapacitySharePct)
		}
	}
}

// TestInterruptKeepsCompletedRows: a lab canceled before it starts
// returns ErrInterrupted and no row it did not finish.
func TestInterruptKeepsCompletedRows(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sw, err := Run(ctx, smallLab(t, sim.ProfilePTU, "honor"))
	if !errors.Is(err, ErrInterrupted) || len(sw.Rows) != 0 {
		t.Fatalf("err %v, %d rows", err, len(sw.Rows))
	}
}

func TestCapacityOf(t *testing.T) {
	t.Parallel()
	c := sim.DefaultConfig()
	// 170 PTU × 2500 / 60 = 7083.3 tokens/s over 1000 + 3 × (77 + 256)/2.
	got, formula := CapacityOf(c, 1000, 256, []int{16})
	if want := 170 * 2500.0 / 60 / (1000 + 3*166.5); got < want-1e-9 || got > want+1e-9 || formula == "" {
		t.Fatalf("ptu capacity %v, want %v (%s)", got, want, formula)
	}
}

func TestParseLoads(t *testing.T) {
	t.Parallel()
	ls, err := ParseLoads("0.8x, 1.5x,8/s,12")
	if err != nil || len(ls) != 4 || ls[0].X != 0.8 || ls[2].Rate != 8 || ls[3].Rate != 12 {
		t.Fatalf("%+v %v", ls, err)
	}
	for _, bad := range []string{"", "0x", "-1x", "101x", "x", "fast", "1x,1x", "0/s", "NaNx", "Infx"} {
		if _, err := ParseLoads(bad); err == nil {
			t.Errorf("ParseLoads(%q) accepted", bad)
		}
	}
}

// TestExecuteKeepsCompletedRowsOnInterrupt: a lab interrupted after its
// first run publishes the rows completed by then, and says it was
// interrupted.
func TestExecuteKeepsCompletedRowsOnInterrupt(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := smallLab(t, sim.ProfilePTU, "none", "backoff", "pace", "slots")
	l.Loads, l.Duration = l.Loads[:1], 5*time.Second
	l.Progress = func(done, total int) { cancel() }
	dir := t.TempDir()
	sw, written, err := Execute(ctx, Job{Lab: l, OutDir: dir})
	if !errors.Is(err, ErrInterrupted) || len(sw.Rows) == 0 || len(sw.Rows) == 4 || len(written) == 0 {
		t.Fatalf("err %v, %d rows, %d files", err, len(sw.Rows), len(written))
	}
	b, err := os.ReadFile(filepath.Join(dir, "policies.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(b), "\n"); lines != len(sw.Rows)+1 {
		t.Fatalf("policies.csv has %d lines for %d rows", lines, len(sw.Rows))
	}
}
