package policylab

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/policy"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/sim"
)

// smallLab is the default lab made small: the named policies at 1.5x and
// 3x, a fleet of 16, one repeat of 20 s of arrivals.
func smallLab(t *testing.T, profile string, names ...string) Lab {
	t.Helper()
	var specs []policy.Spec
	for _, n := range names {
		s, err := policy.Parse(n)
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
	return Lab{Policies: specs, Loads: loads, Clients: []int{16}, Budget: policy.DefaultBudget, MaxAttempts: policy.DefaultMaxAttempts,
		Sim: cfg, Duration: 20 * time.Second, Arrival: Arrival{Kind: arrivalPoisson}, Repeat: 1, PromptTokens: 1000, MaxTokens: 256, MaxWork: DefaultMaxWork, SLO: DefaultSLO}
}

// runTwiceAlike runs l twice and fails unless the two sweeps are the
// same (what names the lab in the message); it returns the first.
func runTwiceAlike(t *testing.T, l Lab, what string) Sweep {
	t.Helper()
	var sw [2]Sweep
	for i := range sw {
		var err error
		if sw[i], err = runLab(context.Background(), l); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(sw[0], sw[1]) {
		t.Fatalf("two runs of one %s differ", what)
	}
	return sw[0]
}

// rowsByCell are the rows under the lab's cap by (policy, load); with
// sdkCap, those under the SDKs' (a policy with caps of its own in both).
func rowsByCell(rows []Row, sdkCap ...bool) map[[2]string]Row {
	out := map[[2]string]Row{}
	for _, r := range rows {
		if r.SDKCap == (len(sdkCap) > 0 && sdkCap[0]) || r.OwnCaps {
			out[[2]string{r.Policy, r.Load}] = r
		}
	}
	return out
}

// TestSweepIsAFunctionOfItsSettings: the same lab gives the same rows,
// however its runs were spread over the cores, and another seed gives
// other rows.
func TestSweepIsAFunctionOfItsSettings(t *testing.T) {
	t.Parallel()
	l := smallLab(t, sim.ProfilePTU, "backoff", "pace", "slots")
	l.Loads, l.Repeat, l.Duration = l.Loads[1:], 2, 4*time.Second
	a := runTwiceAlike(t, l, "lab")
	l.Sim.Seed = 7
	c, err := runLab(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(a.Rows, c.Rows) {
		t.Fatal("another seed gave the same rows")
	}
	if len(a.Rows) != 6 || a.Rows[0].Repeats != 2 || a.Rows[0].Requests == 0 || !a.Deterministic {
		t.Fatalf("rows %d, repeats %d", len(a.Rows), a.Rows[0].Repeats)
	}
}

// TestWhatTheLabFinds checks, as relations on the simulator's PTU model
// under sustained overload with a fleet of 16, what the steady-state
// measure found. A failure here is a finding about the model or the
// policies: report it, do not tune the model.
func TestWhatTheLabFinds(t *testing.T) {
	t.Parallel()
	if !*long {
		t.Skip("six policies' whole runs: run with -long (.ci/run's long stage does)")
	}
	l := smallLab(t, sim.ProfilePTU, "none", "honor", "backoff", "sdk", "stacked", "pace")
	l.Loads, l.Repeat, l.Duration, l.Warmup, l.Tail = l.Loads[1:], 2, 10*time.Second, 10*time.Second, 10*time.Second
	sw, err := runLab(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	rows, sdkCap := rowsByCell(sw.Rows), rowsByCell(sw.Rows, true)
	r := func(p string) Row { return rows[[2]string{p, "3x"}] }
	// Past capacity, retrying adds no success: the deployment answers what
	// it drains, whoever asks. Honouring the header ends within a point
	// of a client that never retries.
	if d := r("honor").SuccessInSLOPct - r("none").SuccessInSLOPct; d < -1 || d > 3 {
		t.Errorf("honor %.1f%% within the SLO, none %.1f%%", r("honor").SuccessInSLOPct, r("none").SuccessInSLOPct)
	}
	// ... and its load follows its attempts cap, not the header.
	if h, h3 := r("honor").AttemptsPerRequest, sdkCap[[2]string{"honor", "3x"}].AttemptsPerRequest; !(h > 3*h3) {
		t.Errorf("honor: %.2f attempts per request under 20 attempts, %.2f under 3", h, h3)
	}
	// Pacing queues what it cannot send: its successes come late, past the
	// SLO, and it gives up locally.
	if p := r("pace"); !(p.SuccessInSLOPct < r("honor").SuccessInSLOPct-10) || p.GaveUpLocal == 0 {
		t.Errorf("pace %.1f%% within the SLO (%d given up locally), honor %.1f%%", p.SuccessInSLOPct, p.GaveUpLocal, r("honor").SuccessInSLOPct)
	}
	// Stacked owners multiply the attempts of the SDK alone.
	if !(r("stacked").AttemptsPerRequest > r("sdk").AttemptsPerRequest) {
		t.Errorf("stacked %.2f attempts per request, sdk %.2f", r("stacked").AttemptsPerRequest, r("sdk").AttemptsPerRequest)
	}
	for _, p := range []string{"honor", "pace"} {
		if r(p).EarlyRetries != 0 {
			t.Errorf("%s came back early %d times", p, r(p).EarlyRetries)
		}
	}
	for _, p := range []string{"none", "honor", "backoff", "sdk", "stacked", "pace"} {
		t.Logf("3x %-8s %5.1f%% within the SLO (%.1f–%.1f), %.2f attempts per request, p99 %.0f ms, %d given up locally",
			p, r(p).SuccessInSLOPct, r(p).CILow, r(p).CIHigh, r(p).AttemptsPerRequest, r(p).SuccessP99MS, r(p).GaveUpLocal)
	}
}

// TestSDKCapRunsNotRepeated: a fair policy's run under the SDKs' cap whose
// twin under the lab's cap never took a request past 3 attempts is that
// twin, and what the lab makes of it is what running it would give.
func TestSDKCapRunsNotRepeated(t *testing.T) {
	t.Parallel()
	l := smallLab(t, sim.ProfilePTU, "pace", "honor")
	l.Loads, l.Repeat, l.Duration, l.Warmup, l.Tail = []Load{{Text: "0.3x", X: 0.3}, {Text: "3x", X: 3}}, 1, 5*time.Second, time.Second, time.Second
	sw, err := runLab(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	twin := rowsByCell(sw.Rows, true)
	l.MaxAttempts, l.Progress = sdkMaxAttempts, nil
	direct, err := runLab(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	// Under capacity nothing needs a fourth attempt; at 3x honor does.
	if sw.Reused < 2 || sw.Reused > 3 || len(direct.Rows) != 4 {
		t.Fatalf("%d runs reused, %d rows", sw.Reused, len(direct.Rows))
	}
	for _, d := range direct.Rows {
		got := twin[[2]string{d.Policy, d.Load}]
		got.SDKCap = false
		if !reflect.DeepEqual(got, d) {
			t.Errorf("%s under the SDKs' cap: %+v\nrun directly: %+v", d.Policy, got, d)
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
	sw, err := runLab(context.Background(), l)
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
	sw, err = runLab(context.Background(), g)
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
	sw, err := runLab(ctx, smallLab(t, sim.ProfilePTU, "honor"))
	if !errors.Is(err, ErrInterrupted) || len(sw.Rows) != 0 {
		t.Fatalf("err %v, %d rows", err, len(sw.Rows))
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
	// A line a row, and a second for a row of a policy with its own caps
	// when the SDKs' group of its load has a row too (csvLines):
	// which runs finish before the cancel is the machine's, so the test
	// asks for the rows' policies, each at least once, and no other
	// (round 15: 3 lines for 1 row, 1 run in 31 under -test.cpu=1,4).
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")[1:]
	inFile, inSweep := map[string]bool{}, map[string]bool{}
	for _, line := range lines {
		policy, _, _ := strings.Cut(line, ",")
		inFile[policy] = true
	}
	for _, r := range sw.Rows {
		inSweep[r.Policy] = true
	}
	if len(lines) < len(sw.Rows) || !maps.Equal(inFile, inSweep) {
		t.Fatalf("policies.csv has %d lines of %v for %d rows of %v", len(lines), inFile, len(sw.Rows), inSweep)
	}
}

// TestJitterSparesNoStorm: on the referee's storm (a deployment a few
// calls overload, no burst allowance, 100 ms deep), a fleet that returns
// exactly on its advised deadlines answers as much within the SLO, at as
// little load, as one that jitters over the wait (×U[1, 1.2] or ×U[1, 2]):
// the finding the referee's herd rests on (it reports the herd, and fails
// no client for it by default). A failure here is a finding about the
// model: report it, do not tune it.
//
// Under the SDKs' 3 attempts it holds within 2 points. Under the lab's 20
// it held within 2 points until round 5's token-realistic timing: on a
// deployment whose decode a few answers fill, `honor` (×U[1, 1.2]) now
// answers 27.8% against 24.8% without jitter, 3.0 points (docs/referee.md
// reports it). The margin there is the finding's, 5 points: jitter buys a
// storm a few points on this model, not the herd's tens.
func TestJitterSparesNoStorm(t *testing.T) {
	t.Parallel()
	l := smallLab(t, sim.ProfilePTU, "honor-no-jitter", "honor", "honor-full-jitter")
	l.Sim.PTU, l.Sim.BucketDepth, l.Sim.BurstPct = 1, 100*time.Millisecond, 0
	l.PromptTokens, l.MaxTokens, l.Clients = 3, 10, []int{4}
	l.Loads, l.Repeat, l.Duration, l.Warmup, l.Tail = l.Loads[1:], 3, 10*time.Second, 10*time.Second, 10*time.Second
	sw, err := runLab(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	for _, sdkCap := range []bool{false, true} {
		rows := rowsByCell(sw.Rows, sdkCap)
		plain := rows[[2]string{"honor-no-jitter", "3x"}]
		margin := 2.0
		if !sdkCap {
			margin = 5
		}
		for _, p := range []string{"honor", "honor-full-jitter"} {
			r := rows[[2]string{p, "3x"}]
			if r.SuccessInSLOPct > plain.SuccessInSLOPct+margin || plain.AttemptsPerRequest > 1.05*r.AttemptsPerRequest {
				t.Errorf("under the SDKs' cap %v: %s %.1f%% within the SLO at %.2f attempts per request, honor-no-jitter %.1f%% at %.2f",
					sdkCap, p, r.SuccessInSLOPct, r.AttemptsPerRequest, plain.SuccessInSLOPct, plain.AttemptsPerRequest)
			}
			t.Logf("cap3 %v %-17s %5.1f%% within the SLO, %.2f attempts per request, p99 %.0f ms", sdkCap, p, r.SuccessInSLOPct, r.AttemptsPerRequest, r.SuccessP99MS)
		}
		t.Logf("cap3 %v honor-no-jitter   %5.1f%% within the SLO, %.2f attempts per request, p99 %.0f ms", sdkCap, plain.SuccessInSLOPct, plain.AttemptsPerRequest, plain.SuccessP99MS)
	}
}

// TestRefusalCostPunishesPersistence: when each refusal takes 2% of a
// request's capacity (sim.Config.RefusalCost), a persistent retrier
// (honor, 20 attempts) at 3x answers at least 5 points less than not
// retrying, on the model, where with free refusals it answers as much or
// more (issue 38's measure; the full lab: honor 1.0%, none 31.9%).
func TestRefusalCostPunishesPersistence(t *testing.T) {
	t.Parallel()
	l := smallLab(t, sim.ProfilePTU, "none", "honor")
	l.Loads, l.Duration = l.Loads[1:], 10*time.Second
	pct := func(cost float64) (none, honor float64) {
		l.Sim.RefusalCost = cost
		sw, err := runLab(context.Background(), l)
		if err != nil {
			t.Fatal(err)
		}
		cells := rowsByCell(sw.Rows)
		return cells[[2]string{"none", "3x"}].SuccessPct, cells[[2]string{"honor", "3x"}].SuccessPct
	}
	none, honor := pct(0.02)
	if honor > none-5 {
		t.Errorf("refusals at 2%%: honor answers %.1f%%, none %.1f%%: want honor at least 5 points less", honor, none)
	}
	if none0, honor0 := pct(0); honor0 < none0-2 {
		t.Errorf("free refusals: honor answers %.1f%%, none %.1f%%: the cost is what makes the difference", honor0, none0)
	}
}

// TestRepeatsAreRaced: every row gets raceRepeats repeats; the finalists
// (none always) get the rest of Repeat, and a row clearly beaten after
// the first repeats (pace at 3x, queueing past the SLO) keeps them. The
// finalist's first repeats are the same runs a lab of raceRepeats makes
// (the seeds are per repeat), and the raced lab is deterministic.
func TestRepeatsAreRaced(t *testing.T) {
	t.Parallel()
	l := smallLab(t, sim.ProfilePTU, "none", "pace")
	l.Loads, l.Repeat, l.Duration, l.MaxAttempts = l.Loads[1:], raceRepeats+2, 10*time.Second, sdkMaxAttempts
	l.Warmup, l.Tail = l.Budget, l.Budget
	a := runTwiceAlike(t, l, "raced lab")
	repeats := map[string]int{}
	for _, r := range a.Rows {
		repeats[r.Policy] = r.Repeats
	}
	if repeats["none"] != raceRepeats+2 || repeats["pace"] != raceRepeats || a.Runs != 2*raceRepeats+2 || a.Completed != a.Runs {
		t.Fatalf("repeats %v, runs %d of %d: want none %d, pace %d", repeats, a.Completed, a.Runs, raceRepeats+2, raceRepeats)
	}
	short := l
	short.Repeat = raceRepeats
	c, err := runLab(context.Background(), short)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Rows[0].Measures[:raceRepeats], c.Rows[0].Measures) {
		t.Error("the finalist's first repeats differ from a lab of as many repeats")
	}
}

// TestDurationFloor: a lab's phases are a second at least (cmd's tests
// lower the floor with SetMinDurationForTests; this package's do not),
// and a shorter one is refused naming Duration.
func TestDurationFloor(t *testing.T) {
	t.Parallel()
	l := smallLab(t, sim.ProfilePTU, "honor")
	l.Duration = time.Second - time.Millisecond
	var ve *valid.Error
	if err := l.Validate(); !errors.As(err, &ve) || ve.Name != "Duration" || !strings.Contains(err.Error(), "1s") {
		t.Errorf("a phase of 999ms: %v, want Duration's error naming 1s", err)
	}
	l.Duration = time.Second
	if err := l.Validate(); err != nil {
		t.Errorf("a phase of 1s: %v", err)
	}
}
