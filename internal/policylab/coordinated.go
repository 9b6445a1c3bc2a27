package policylab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/sim"
)

// A coordinated lab (Lab.Coordinate, `ptuprobe policies --coordinate`)
// asks what sharing the retry owners' state across a fleet changes: every
// client of a run is a process of its own — its own cooldown, its own
// Slots, its own Pace — and each policy with state to share runs twice on
// the same arrivals, alone and with the run's clients sharing that state
// through a Coordinator (Redis). Redis's expiries and the Coordinator's
// fallback timers are wall time, which the virtual clock cannot drive, so
// a coordinated lab runs on the wall clock: against the embedded
// simulator on loopback, a fresh one per run, a few runs at a time, or
// against a named target in turn. It is not byte-reproducible.

// Shared is one client's handle on a run's shared state: an
// admission.Coordinator it closes when the run ends, which counts the
// decisions it left to the client's own state because it failed (as
// redisstate.Coordinator does).
type Shared interface {
	admission.Coordinator
	Fallbacks() int64
	Close() error
}

// Coordination is how a coordinated lab's clients reach shared state.
type Coordination struct {
	// Open returns one client's Coordinator on the state named namespace.
	// Every client of a coordinated run opens the run's namespace; no two
	// runs share one, and no two labs (a namespace holds a random id), so
	// runs side by side, or a rerun within the state's expiry, never meet
	// another run's state. It must be safe for concurrent use.
	Open func(namespace string) (Shared, error)
}

// counted is a client's Shared, counting the calls its owner makes: the
// decisions of which Fallbacks are a part.
type counted struct {
	Shared
	calls *atomic.Int64
}

func (c counted) Cooldown(ctx context.Context, until time.Time, source string) (time.Time, string, error) {
	c.calls.Add(1)
	return c.Shared.Cooldown(ctx, until, source)
}

func (c counted) Slot(ctx context.Context, at time.Time, width time.Duration) (time.Time, error) {
	c.calls.Add(1)
	return c.Shared.Slot(ctx, at, width)
}

func (c counted) Pace(ctx context.Context, step admission.PaceStep) (admission.PaceResult, error) {
	c.calls.Add(1)
	return c.Shared.Pace(ctx, step)
}

// coordinatedSuffix marks the Policy of a coordinated row: "slots
// (coordinated)" beside "slots", alone. A policy name (checkName) holds
// no space, so no custom name can collide with it.
const coordinatedSuffix = " (coordinated)"

// coordinatedCells are the lab's cells with a coordinated twin after each
// cell of a policy that shares state.
func coordinatedCells(cells []labCell) []labCell {
	var out []labCell
	for _, c := range cells {
		out = append(out, c)
		if c.spec.Shares() {
			c.coordinated = true
			out = append(out, c)
		}
	}
	return out
}

// labID is a random name for one lab's namespaces.
func labID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail
	return hex.EncodeToString(b[:])
}

// namespace names run j of a lab: the lab's id and the run's index.
func namespace(lab string, j int) string {
	return "ptuprobe policies " + lab + " run " + strconv.Itoa(j)
}

// wallFleet is how a wall-clock run builds its clients.
type wallFleet struct {
	target campaign.Target
	// keyed gives client i its own key, lab-client-i, as on the virtual
	// clock (the simulator's gateway tells keys apart).
	keyed bool
	// apart gives each client its own Slots, as a process would (a
	// coordinated lab); otherwise the fleet shares one in process.
	apart bool
	// open, when set, is each client's Coordinator on namespace.
	open      func(namespace string) (Shared, error)
	namespace string
	calls     *atomic.Int64 // the run's calls to its Coordinators
}

// runLoopback runs every labCell's repeats of a coordinated lab on the
// wall clock, each against a fresh embedded simulator on loopback, a few
// at a time (a run's alone and coordinated twins side by side).
func runLoopback(ctx context.Context, l Lab, cells []labCell, repeat int, capacity float64) ([]runOutcome, []bool, error) {
	id := labID()
	// Repeat by repeat, so a cell's alone and coordinated runs go
	// together, against the same machine's load.
	order := make([]int, 0, len(cells)*repeat)
	for k := range repeat {
		for i := range cells {
			order = append(order, i*repeat+k)
		}
	}
	return runPool(ctx, l, cells, repeat, capacity, LoopbackRuns(), order,
		func(j int, c labCell, v virtualRun) (runOutcome, error) {
			f := wallFleet{keyed: true, apart: true}
			if c.coordinated {
				f.open, f.namespace = l.Coordinate.Open, namespace(id, j)
			}
			return v.runLoopback(ctx, f)
		}, l.progress())
}

// LoopbackRuns is how many runs of a coordinated lab on the embedded
// simulator go at once: wall-clock runs wait far more than they compute,
// but each has its own simulator and fleet, so no more than the cores,
// and at least two, so a cell's twins run side by side.
func LoopbackRuns() int { return max(2, runtime.GOMAXPROCS(0)) }

// runLoopback plays the plan once on the wall clock against a fresh
// embedded simulator on loopback.
func (v *virtualRun) runLoopback(ctx context.Context, f wallFleet) (runOutcome, error) {
	cfg := v.Sim
	if cfg.SpilloverDeployment == "" {
		cfg.SpilloverDeployment, cfg.SpilloverPerRequest = fallbackDeployment, true
	}
	cfg.UtilizationHeader = cfg.UtilizationHeader || v.Spec.Utilization > 0
	srv, err := sim.Start(context.WithoutCancel(ctx), cfg, "127.0.0.1:0")
	if err != nil {
		return runOutcome{}, fmt.Errorf("start the embedded simulator: %w", err)
	}
	defer srv.Close()
	f.target = campaign.Target{
		Spec: client.Spec{API: client.APIAzure, Endpoint: srv.URL, Deployment: srv.Deployment, APIVersion: apiVersion,
			APIKeyEnv: "PTUPROBE_LAB_KEY", PromptTokens: v.PromptTokens, MaxTokens: v.MaxTokens, Timeout: v.Budget},
		FallbackDeployment: fallbackDeployment,
		MaxConns:           max(64, 4*v.Clients),
	}
	out, err := v.runWall(ctx, f)
	if err != nil {
		return out, err
	}
	// The simulator witnessed every retry: its count, as on the virtual
	// clock, rather than the clients' own.
	out.EarlyReturns, out.SDKRetries = int(srv.Server.Stats().EarlyReturns), int(srv.Server.Stats().SDKRetries)
	return out, nil
}

// comparison is one policy of a coordinated lab at one load and fleet
// size: its row alone and its row coordinated, on the same arrivals.
type comparison struct {
	Alone, Coordinated Row
}

// starvedPoints is how far, in points of success share, the slowest
// client may trail the fastest before the comparison calls it starved.
const starvedPoints = 10.0

// comparisons pairs a coordinated sweep's rows, in the sweep's order.
func comparisons(s Sweep) []comparison {
	alone := map[string]Row{}
	for _, r := range s.Rows {
		if !r.Coordinated {
			alone[fmt.Sprintf("%s\x00%s\x00%d", r.Name, r.Load, r.Clients)] = r
		}
	}
	var out []comparison
	for _, r := range s.Rows {
		if !r.Coordinated {
			continue
		}
		if a, ok := alone[fmt.Sprintf("%s\x00%s\x00%d", r.Name, r.Load, r.Clients)]; ok {
			out = append(out, comparison{Alone: a, Coordinated: r})
		}
	}
	return out
}

// Name is the policy and its group: "slots, 3x, 4 clients".
func (c comparison) Name() string {
	return fmt.Sprintf("%s, %s, %d %s", c.Alone.Policy, c.Alone.Load, c.Alone.Clients, plural(c.Alone.Clients, "client", "clients"))
}

// HalvesRefusals: coordinated, at most half the 429s per success alone.
func (c comparison) HalvesRefusals() bool {
	a, b := c.Alone.HTTP429PerSuccess, c.Coordinated.HTTP429PerSuccess
	return a > 0 && b >= 0 && b <= a/2
}

// NoFewerSuccesses: coordinated, at least as many successes as alone.
func (c comparison) NoFewerSuccesses() bool {
	return c.Coordinated.Succeeded >= c.Alone.Succeeded
}

// NoneStarved: coordinated, in every repeat, the slowest client's
// success within starvedPoints of the fastest's.
func (c comparison) NoneStarved() bool {
	r := c.Coordinated
	return r.ClientSpreadPts >= 0 && r.ClientSpreadPts <= starvedPoints
}

// claimText is the claim in words, once for every output.
var claimText = fmt.Sprintf("coordination should cut 429s per success by at least half with no fewer successes, and leave no client starved (in every repeat, the slowest client's success within %s points of the fastest's)",
	num.Decimal(starvedPoints, 0))

// Figures are the comparison's numbers, alone then coordinated.
func (c comparison) Figures() string {
	a, b := &c.Alone, &c.Coordinated
	return fmt.Sprintf("429s per success %s alone, %s coordinated; successes %s and %s; goodput %s and %s /s; client success %s and %s, the widest gap in one repeat %s and %s points",
		ratio(a.HTTP429PerSuccess), ratio(b.HTTP429PerSuccess), num.Grouped(float64(a.Succeeded), 0), num.Grouped(float64(b.Succeeded), 0),
		num.Grouped(a.GoodputPerS, 2), num.Grouped(b.GoodputPerS, 2),
		spread(a.ClientSuccessPctMin, a.ClientSuccessPctMax, 1, "%"), spread(b.ClientSuccessPctMin, b.ClientSuccessPctMax, 1, "%"),
		ratio10(a.ClientSpreadPts), ratio10(b.ClientSpreadPts)) +
		fellBack(b.Fallbacks, b.CoordinatorCalls)
}

// ratio10 is v with one decimal, "—" when unknown.
func ratio10(v float64) string {
	if v < 0 {
		return "—"
	}
	return num.Decimal(v, 1)
}

// fellBack notes the decisions a coordinated row took on its clients'
// own state: a Redis slower than its call timeout dilutes what is shared.
func fellBack(n, of int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %s of %s shared decisions (%s) fell back to a client's own state",
		num.Grouped(float64(n), 0), num.Grouped(float64(of), 0), pct(100*float64(n)/float64(max(of, 1))))
}

// Verdict says whether the claim held, and what failed when it did not.
func (c comparison) Verdict() string {
	var failed []string
	if !c.HalvesRefusals() {
		failed = append(failed, "429s per success not halved")
	}
	if !c.NoFewerSuccesses() {
		failed = append(failed, "fewer successes")
	}
	if !c.NoneStarved() {
		failed = append(failed, "a client starved")
	}
	if len(failed) == 0 {
		return "holds"
	}
	return "fails: " + strings.Join(failed, ", ")
}

// coordinationIntro heads the comparison in every output.
const coordinationIntro = "Each policy with state to share ran twice on the same arrivals: alone, every client (a process) with its own cooldown, slots and pace, and coordinated, the run's clients sharing that state through the --coordinate Redis, under the same caps. The claim: "

// coordinationLines are the comparison's lines for policies.md and
// report.html: one per policy and group.
func coordinationLines(s Sweep) []string {
	var out []string
	for _, c := range comparisons(s) {
		out = append(out, c.Name()+" — "+c.Verdict()+": "+c.Figures()+".")
	}
	return out
}
