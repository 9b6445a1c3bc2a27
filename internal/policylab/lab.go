// Package policylab is `ptuprobe policies`: which retry policy should a
// client use? It sends one open-loop plan through many client policies at
// several loads and fleet sizes, each policy an admission.Policy (the retry
// owner ptuprobe and its users import) configured as a client style, and
// publishes the comparison with a recommendation.
//
// The comparison is fair: every retrying policy gets the same latency
// budget per request and the same attempts cap, except the built-ins that
// model a named client (none, sdk, stacked), which keep that client's own
// and say so. On the embedded simulator it is deterministic: each run
// plays the plan's arrivals, the fleet's clients (each its own
// admission.Transport) and the simulator on one virtual clock
// (internal/vclock), in process, so the same flags and seed give the same
// policies.csv, byte for byte, on any machine under any load, in seconds.
// Against a real target the policies run in turn on the wall clock.
package policylab

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/sim"
)

// ErrInterrupted is returned by Run when its context ended: the Sweep
// holds every row whose runs had all completed, and is Partial when some
// had not.
var ErrInterrupted = errors.New("policylab: interrupted")

// Load is one point of the sweep: a multiple of the deployment's capacity
// (X, from "1.5x") or a plain rate (Rate, from "8/s").
type Load struct {
	Text string
	X    float64 // 0 for a plain rate
	Rate float64 // requests per second; 0 for a multiple
}

// ParseLoads parses --load: comma-separated multiples (0.8x) or rates
// (8/s, 8), each above 0 and at most 100x or 100,000/s, no repeats.
func ParseLoads(v string) ([]Load, error) {
	var out []Load
	seen := map[string]bool{}
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		var l Load
		if x, ok := strings.CutSuffix(f, "x"); ok {
			n, err := strconv.ParseFloat(x, 64)
			if err != nil || !(n > 0 && n <= 100) {
				return nil, fmt.Errorf("%q: want a multiple of capacity above 0 and at most 100, such as 1.5x", clip(f))
			}
			l = Load{Text: f, X: n}
		} else {
			n, err := strconv.ParseFloat(strings.TrimSuffix(f, "/s"), 64)
			if err != nil || !(n > 0 && n <= 100_000) {
				return nil, fmt.Errorf("%q: want a multiple such as 1.5x or a rate such as 8/s (above 0, at most 100000/s)", clip(f))
			}
			l = Load{Text: f, Rate: n}
		}
		if seen[l.Text] {
			return nil, fmt.Errorf("%q is given twice", clip(f))
		}
		seen[l.Text] = true
		out = append(out, l)
	}
	if len(out) == 0 || len(out) > 16 {
		return nil, fmt.Errorf("want 1 to 16 loads")
	}
	return out, nil
}

// rate is the arrival rate of load l against capacity (requests/s).
func (l Load) rate(capacity float64) float64 {
	if l.X > 0 {
		return l.X * capacity
	}
	return l.Rate
}

// Lab is one comparison on the embedded simulator.
type Lab struct {
	// Policies are run in order; Run gives each the fair caps (Spec.Fair).
	Policies []Spec
	Loads    []Load
	Clients  []int // fleet sizes
	// Budget and MaxAttempts are the fair caps: every policy that does not
	// model a named client gets them.
	Budget      time.Duration
	MaxAttempts int
	// Sim is the simulator each run starts afresh (its Seed is the first
	// repeat's; repeat k adds k).
	Sim      sim.Config
	Duration time.Duration // the plan's length
	Poisson  bool          // Poisson arrivals (else evenly spaced)
	Repeat   int
	// PromptTokens and MaxTokens shape every request.
	PromptTokens, MaxTokens int
	// MaxWork caps Work, the simulated attempts the lab may send at most:
	// Validate refuses a lab on the simulator past it (a named target's
	// lab is capped by Named.MaxRequests instead).
	MaxWork int64
	// Progress, when set, is called after each run (done of total), on
	// one goroutine at a time.
	Progress func(done, total int)
	// Named, when set, is a real deployment to run the lab against
	// instead of the simulator (Sim then only seeds the arrivals).
	Named *Named
	// Coordinate, when set, makes the lab a coordinated one (see
	// Coordination): each client a process apart, and every policy that
	// has state to share run twice, alone and coordinated; on the wall
	// clock, against the embedded simulator on loopback unless Named.
	Coordinate *Coordination
}

// MaxRuns bounds a lab's runs (policies × loads × fleet sizes × repeats).
const MaxRuns = 20_000

// Runs is the number of runs the lab makes.
func (l *Lab) Runs() int {
	policies := len(l.Policies)
	if l.Coordinate != nil {
		policies += l.CoordinatedPolicies()
	}
	return policies * len(l.Loads) * len(l.Clients) * max(l.Repeat, 1)
}

// CoordinatedPolicies counts the policies a coordinated lab runs twice:
// those with a shared cooldown, Slots or a Pace.
func (l *Lab) CoordinatedPolicies() int {
	n := 0
	for _, s := range l.Policies {
		if s.Fair(l.Budget, l.MaxAttempts).shares() {
			n++
		}
	}
	return n
}

// labCell is one (policy, load, clients) of the sweep.
type labCell struct {
	spec    Spec
	load    Load
	clients int
	// coordinated: the run's clients share their state (Lab.Coordinate).
	coordinated bool
}

// Run runs every (policy, load, clients, repeat): on the simulator each
// on its own simulator and virtual clock, spread over the machine's cores
// (the result does not depend on how), against a Named target one after
// another on the wall clock; a coordinated lab (Coordinate) on the wall
// clock, on loopback simulators a few at a time or against Named in turn. It returns the Sweep of every row whose runs
// all completed, and the cells whose runs did not (Sweep.Unfinished).
func Run(ctx context.Context, l Lab) (Sweep, error) {
	capacity, formula := CapacityOf(l.Sim, l.PromptTokens, l.MaxTokens, l.Clients)
	sw := Sweep{Capacity: capacity, CapacityFormula: formula, Limiter: l.Sim.Profile, Duration: l.Duration,
		Seed: l.Sim.Seed, Deterministic: true}
	if l.Named != nil {
		capacity = l.Named.Capacity
		sw.Capacity, sw.Limiter, sw.Deterministic = capacity, "the named target", false
		sw.CapacityFormula = "unknown: no --capacity given"
		if capacity > 0 {
			sw.CapacityFormula = "as given (--capacity)"
		}
	}
	if len(l.Policies) == 0 || len(l.Loads) == 0 || len(l.Clients) == 0 {
		return sw, fmt.Errorf("policylab: nothing to run")
	}
	repeat := max(l.Repeat, 1)
	var cells []labCell
	for _, s := range l.Policies {
		s = s.Fair(l.Budget, l.MaxAttempts)
		for _, ld := range l.Loads {
			for _, n := range l.Clients {
				cells = append(cells, labCell{spec: s, load: ld, clients: n})
			}
		}
	}
	if l.Coordinate != nil {
		if l.Coordinate.Open == nil {
			return sw, fmt.Errorf("policylab: a coordinated lab without Coordination.Open")
		}
		cells = coordinatedCells(cells)
		sw.Coordinated, sw.Deterministic = true, false
	}
	var (
		outs   []runOutcome
		done   []bool
		runErr error
	)
	switch {
	case l.Named != nil:
		outs, done, runErr = runNamed(ctx, l, cells, repeat)
	case l.Coordinate != nil:
		outs, done, runErr = runLoopback(ctx, l, cells, repeat, capacity)
	default:
		outs, done, runErr = runVirtual(ctx, l, cells, repeat, capacity)
	}
	sw.Runs = len(done)
	for _, d := range done {
		if d {
			sw.Completed++
		}
	}
	for i, c := range cells {
		name := c.spec.Name
		if c.coordinated {
			name += CoordinatedSuffix
		}
		if !allDone(done[i*repeat : (i+1)*repeat]) {
			sw.Unfinished = append(sw.Unfinished, Cell{Policy: name, Load: c.load.Text, Clients: c.clients})
			continue
		}
		r := rowOf(c.spec, c.load, c.clients, capacity, l.Duration, outs[i*repeat:(i+1)*repeat])
		r.Policy, r.Coordinated = name, c.coordinated
		sw.Rows = append(sw.Rows, r)
	}
	if ctx.Err() != nil {
		return sw, ErrInterrupted
	}
	return sw, runErr
}

// runVirtual runs every labCell's repeats on the simulator, on every core.
func runVirtual(ctx context.Context, l Lab, cells []labCell, repeat int, capacity float64) ([]runOutcome, []bool, error) {
	order := make([]int, len(cells)*repeat)
	for j := range order {
		order[j] = j
	}
	return runPool(ctx, l, cells, repeat, capacity, max(1, runtime.GOMAXPROCS(0)), order,
		func(_ int, _ labCell, v virtualRun) (runOutcome, error) { return v.run(ctx) })
}

// runPool runs the repeats of cells, in the given order of their indexes
// (cell × repeat + k), workers at a time, each by run on its virtualRun;
// it returns every outcome in its slot, which ran, and the first error
// (none once ctx has ended). l.Progress hears of each run finished.
func runPool(ctx context.Context, l Lab, cells []labCell, repeat int, capacity float64, workers int, order []int,
	run func(j int, c labCell, v virtualRun) (runOutcome, error)) ([]runOutcome, []bool, error) {
	outs := make([]runOutcome, len(cells)*repeat)
	done := make([]bool, len(outs))
	jobs := make(chan int)
	var mu sync.Mutex
	var firstErr error
	finished := 0
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				c, k := cells[j/repeat], j%repeat
				cfg := l.Sim
				cfg.Seed += int64(k)
				v := virtualRun{Spec: c.spec, Sim: cfg, Rate: c.load.rate(capacity), Duration: l.Duration, Poisson: l.Poisson,
					Clients: c.clients, Seed: uint64(cfg.Seed), Budget: l.Budget, PromptTokens: l.PromptTokens, MaxTokens: l.MaxTokens}
				out, err := run(j, c, v)
				mu.Lock()
				if err != nil && firstErr == nil && ctx.Err() == nil {
					firstErr = err
				}
				if err == nil {
					outs[j], done[j] = out, true
					finished++
					if l.Progress != nil {
						l.Progress(finished, len(outs))
					}
				}
				mu.Unlock()
			}
		})
	}
	for _, j := range order {
		if ctx.Err() != nil {
			break
		}
		jobs <- j
	}
	close(jobs)
	wg.Wait()
	return outs, done, firstErr
}

func allDone(d []bool) bool {
	for _, x := range d {
		if !x {
			return false
		}
	}
	return true
}

// rowOf sums a labCell's repeats into its Row.
func rowOf(s Spec, ld Load, clients int, capacity float64, d time.Duration, outs []runOutcome) Row {
	r := Row{Policy: s.Name, Models: s.Models, Fallback: s.Fallback, Load: ld.Text, LoadX: -1, RatePerS: ld.rate(capacity), Clients: clients,
		MaxAttempts: s.Attempts, Budget: s.Budget, Repeats: len(outs), CapacitySharePct: -1,
		SuccessPctMin: math.Inf(1), SuccessPctMax: math.Inf(-1), GoodputMin: math.Inf(1), GoodputMax: math.Inf(-1),
		ClientSuccessPctMin: -1, ClientSuccessPctMax: -1, ClientSpreadPts: -1}
	if capacity > 0 {
		r.LoadX = r.RatePerS / capacity
	}
	goodput := 0.0
	for _, o := range outs {
		r.Requests += o.Requests
		r.Succeeded += o.Succeeded
		r.GaveUp += o.GaveUp
		r.Redirected += o.Redirected
		r.Attempts += o.Attempts
		r.HTTP429 += o.HTTP429
		r.OverBudget += o.OverBudget
		r.EarlyRetries += o.EarlyReturns
		r.Fallbacks += o.Fallbacks
		r.CoordinatorCalls += o.CoordinatorCalls
		r.SuccessE2E = append(r.SuccessE2E, o.SuccessE2E...)
		pct := 0.0
		if o.Requests > 0 {
			pct = 100 * float64(o.Succeeded) / float64(o.Requests)
		}
		g := float64(o.InPlan) / d.Seconds()
		goodput += g
		r.SuccessPctMin, r.SuccessPctMax = min(r.SuccessPctMin, pct), max(r.SuccessPctMax, pct)
		r.GoodputMin, r.GoodputMax = min(r.GoodputMin, g), max(r.GoodputMax, g)
		if len(o.ClientSuccessPct) > 0 {
			lo, hi := slices.Min(o.ClientSuccessPct), slices.Max(o.ClientSuccessPct)
			if r.ClientSuccessPctMin < 0 || lo < r.ClientSuccessPctMin {
				r.ClientSuccessPctMin = lo
			}
			r.ClientSuccessPctMax = max(r.ClientSuccessPctMax, hi)
			r.ClientSpreadPts = max(r.ClientSpreadPts, hi-lo)
		}
	}
	if r.Requests > 0 {
		r.SuccessPct = 100 * float64(r.Succeeded) / float64(r.Requests)
	}
	r.GoodputPerS = goodput / float64(len(outs))
	if capacity > 0 {
		r.CapacitySharePct = 100 * r.GoodputPerS / capacity
	}
	r.AttemptsPerSuccess, r.HTTP429PerSuccess = -1, -1
	if r.Succeeded > 0 {
		r.AttemptsPerSuccess = float64(r.Attempts) / float64(r.Succeeded)
		r.HTTP429PerSuccess = float64(r.HTTP429) / float64(r.Succeeded)
	}
	slices.Sort(r.SuccessE2E)
	r.E2EP50MS, r.E2EP99MS, r.E2EMaxMS = -1, -1, -1
	if len(r.SuccessE2E) > 0 {
		r.E2EP50MS = analyze.Percentile(r.SuccessE2E, 50)
		r.E2EP99MS = analyze.Percentile(r.SuccessE2E, 99)
		r.E2EMaxMS = r.SuccessE2E[len(r.SuccessE2E)-1]
	}
	return r
}

// CapacityOf is what the simulator sustains for requests of promptTokens
// and maxTokens from a fleet of clients (each its own key), in requests
// per second of model time, and the formula, in words:
//   - ptu: the bucket's drain D = PTU × TokensPerPTU / 60 weighted tokens
//     a second over a request's mean actual cost, prompt + OutputWeight ×
//     the mean completion (drawn uniformly from ⌈0.3 m⌉ to m tokens);
//   - gateway: the tightest ceiling: organizations × OrgRPS, keys ×
//     KeyRPS, and the token ceilings over the request's estimate (prompt
//   - max_tokens), which they charge;
//   - window: WindowLimit requests per WindowSize.
//
// It does not count the burst allowance a rested deployment spends once,
// so a short run's goodput can pass it.
func CapacityOf(c sim.Config, promptTokens, maxTokens int, clients []int) (float64, string) {
	lo := max(1, int(math.Ceil(0.3*float64(maxTokens))))
	meanCompletion := float64(lo+maxTokens) / 2
	if maxTokens <= lo {
		meanCompletion = float64(maxTokens)
	}
	switch c.Profile {
	case sim.ProfileGateway:
		keys := slices.Min(clients)
		est := float64(promptTokens + maxTokens)
		rps := min(float64(c.GatewayOrgs*c.GatewayOrgRPS), float64(c.GatewayOrgs)*float64(c.GatewayOrgTPM)/60/est,
			float64(keys*c.GatewayKeyRPS), float64(keys)*float64(c.GatewayKeyTPM)/60/est)
		return rps, fmt.Sprintf("the gateway's tightest ceiling for %d keys: min(orgs × %d req/s, orgs × %d tokens/min ÷ 60 ÷ %g, keys × %d req/s, keys × %d tokens/min ÷ 60 ÷ %g) = %s req/s",
			keys, c.GatewayOrgRPS, c.GatewayOrgTPM, est, c.GatewayKeyRPS, c.GatewayKeyTPM, est, strconv.FormatFloat(rps, 'f', 3, 64))
	case sim.ProfileWindow:
		rps := float64(c.WindowLimit) / c.WindowSize.Seconds()
		return rps, fmt.Sprintf("%d requests per %v window = %s req/s", c.WindowLimit, c.WindowSize, strconv.FormatFloat(rps, 'f', 3, 64))
	}
	cost := float64(promptTokens) + c.OutputWeight*meanCompletion
	rps := c.DrainTokensPerSecond() / cost
	return rps, fmt.Sprintf("drain %s weighted tokens/s (PTU %g × %g tokens/min ÷ 60) ÷ mean cost %s (prompt %d + %g × mean completion %s) = %s req/s",
		strconv.FormatFloat(c.DrainTokensPerSecond(), 'f', 1, 64), c.PTU, c.TokensPerPTU, strconv.FormatFloat(cost, 'f', 1, 64),
		promptTokens, c.OutputWeight, strconv.FormatFloat(meanCompletion, 'f', 1, 64), strconv.FormatFloat(rps, 'f', 3, 64))
}
