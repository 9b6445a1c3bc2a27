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
// admission.Transport) and the simulator on one virtual clock, in
// process (internal/vrun), so the same flags and seed give the same
// policies.csv, byte for byte, on any machine under any load, in seconds.
// Against a real target the policies run in turn on the wall clock.
package policylab

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/internal/policy"
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

// clip cuts a value quoted in an error to 40 bytes.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
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
	Policies []policy.Spec
	Loads    []Load
	Clients  []int // fleet sizes
	// Budget and MaxAttempts are the fair caps: every policy that does not
	// model a named client gets them.
	Budget      time.Duration
	MaxAttempts int
	// Sim is the simulator each run starts afresh (its Seed is the first
	// repeat's; repeat k adds k).
	Sim sim.Config
	// Duration is the window measured; Warmup and Tail are arrivals
	// before and after it, so that the window is the steady state
	// (measure.go): the budget each is recommended (cmd's default).
	Duration     time.Duration
	Warmup, Tail time.Duration
	// SLO is the latency a success must be answered within to count in
	// the measure (DefaultSLO is recommended).
	SLO time.Duration
	// StoreDelay is what each decision through the fleet's shared store
	// costs on the simulator's virtual clock (a policy whose state is the
	// fleet's, slots: admission.MemoryCoordinator), the round trip to the
	// Redis a real fleet would share it in (DefaultStoreDelay).
	StoreDelay time.Duration
	// Arrival is how each run's requests arrive (poisson, constant,
	// waves or a replayed run), at each load's rate.
	Arrival Arrival
	Repeat  int
	// PromptTokens and MaxTokens shape every request, unless sizes are
	// given: then they are the sizes' means (the capacity's), and request
	// i of a run has sizes[i mod len(sizes)] (a recorded run's, in its
	// order: with its arrivals replayed, each arrival keeps its size).
	PromptTokens, MaxTokens int
	sizes                   []requestSize
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
	// Grid is the grid of unknowns run around the given conditions
	// (grid.go): GridFinalists, GridFull, or GridOff ("" too).
	Grid string
	// Fixed are the unknowns the user fixed, which the grid does not vary.
	Fixed Unknowns
}

// maxRuns bounds a lab's runs (policies × loads × fleet sizes × repeats).
const maxRuns = 20_000

// Runs is the number of runs the lab makes, at most: a fair policy's run
// under the SDKs' cap that would repeat its run under the lab's is not
// made again (runVirtual).
func (l *Lab) Runs() int {
	policies := len(l.Policies)
	if l.Coordinate != nil {
		policies += l.CoordinatedPolicies()
	}
	if l.capped() {
		for _, s := range l.Policies {
			if !s.OwnCaps() {
				policies++
			}
		}
	}
	return policies * len(l.Loads) * len(l.Clients) * max(l.Repeat, 1)
}

// CoordinatedPolicies counts the policies a coordinated lab runs twice:
// those with a shared cooldown, Slots or a Pace.
func (l *Lab) CoordinatedPolicies() int {
	n := 0
	for _, s := range l.Policies {
		if s.Fair(l.Budget, l.MaxAttempts).Shares() {
			n++
		}
	}
	return n
}

// labCell is one (policy, load, clients) of the sweep.
type labCell struct {
	spec    policy.Spec
	load    Load
	clients int
	// coordinated: the run's clients share their state (Lab.Coordinate).
	coordinated bool
	// sdkCap: a fair policy under the SDKs' cap instead of the lab's.
	sdkCap bool
}

// sdkMaxAttempts is the attempts cap of the OpenAI and Anthropic SDKs
// (2 retries): every fair policy also runs under it, so the verdict can
// show what the lab's own cap decides (a persistent retrier's load
// follows its cap).
const sdkMaxAttempts = admission.DefaultMaxAttempts

// DefaultStoreDelay is a decision's round trip to a fleet's shared store
// on the simulator: a Redis in the fleet's own network, about a
// millisecond away.
const DefaultStoreDelay = time.Millisecond

// DefaultSLO is the latency a success must be answered within to count:
// an interactive request, ten times the embedded simulator's median
// answer and inside the documents' long waits (5-17 s).
const DefaultSLO = 10 * time.Second

// plan is the length of a run's arrivals: the window and the arrivals
// around it.
func (l *Lab) plan() time.Duration { return l.Warmup + l.Duration + l.Tail }

// capped reports whether the lab runs its fair policies under the SDKs'
// cap too: on the simulator, when its own cap is another.
func (l *Lab) capped() bool {
	return l.MaxAttempts != sdkMaxAttempts && l.Named == nil && l.Coordinate == nil
}

// cells are the lab's (policy, load, clients) in order: every policy
// under the lab's caps, then each fair one under the SDKs' cap.
func (l *Lab) cells() []labCell {
	var cells []labCell
	add := func(attempts int, fairOnly bool) {
		for _, s := range l.Policies {
			if fairOnly && s.OwnCaps() {
				continue
			}
			s = s.Fair(l.Budget, attempts)
			for _, ld := range l.Loads {
				for _, n := range l.Clients {
					// On the virtual clock a policy whose state is the
					// fleet's shares it through a store (it is coordinated).
					shared := s.Slots && l.Named == nil && l.Coordinate == nil
					cells = append(cells, labCell{spec: s, load: ld, clients: n, sdkCap: fairOnly, coordinated: shared})
				}
			}
		}
	}
	add(l.MaxAttempts, false)
	if l.capped() {
		add(sdkMaxAttempts, true)
	}
	return cells
}

// runLab runs every (policy, load, clients, repeat): on the simulator each
// on its own simulator and virtual clock, spread over the machine's cores
// (the result does not depend on how), against a Named target one after
// another on the wall clock; a coordinated lab (Coordinate) on the wall
// clock, on loopback simulators a few at a time or against Named in turn.
// On the simulator the repeats are raced (raceRepeats): a row clearly
// beaten after the first repeats keeps them. It returns the Sweep of every
// row whose runs all completed, with the grid's rows (grid.go).
func runLab(ctx context.Context, l Lab) (Sweep, error) {
	if l.Named == nil && l.Coordinate == nil {
		// The lab allocates as it simulates, hundreds of MB a second: a
		// larger heap between collections halves what collecting costs the
		// run (and the parallel runs' collections cross cores less).
		defer debug.SetGCPercent(debug.SetGCPercent(labGCPercent))
	}
	sw, err := runOnce(ctx, l, nil)
	if err != nil {
		return sw, err
	}
	if l.gridOn() && !sw.Partial() {
		if err := runGrid(ctx, l, &sw); err != nil {
			if ctx.Err() != nil {
				return sw, ErrInterrupted
			}
			return sw, err
		}
	}
	return sw, nil
}

// raceRepeats is how many repeats every row of a lab on the simulator
// gets; only the finalists (grid.go: not clearly beaten on the measure,
// nor as good as another and clearly heavier, and none) get the rest of
// Lab.Repeat. A row clearly beaten after raceRepeats is beaten with an
// interval from them (minRepeats) and never recommended; more repeats of
// it would move no verdict, and the persistent retriers that the throttles
// and none beat on the load past capacity are most of the lab's attempts.
const raceRepeats = minRepeats

// MinRaceRepeats is the repeats every row of a lab on the simulator gets
// before the finalists get the rest (raceRepeats), for the command's
// announcement.
const MinRaceRepeats = raceRepeats

// runOnce is Run without the grid; on the simulator its runs wait for a
// token of sem when it is not nil (the grid's conditions share the cores).
func runOnce(ctx context.Context, l Lab, sem chan struct{}) (Sweep, error) {
	sw, capacity := l.sweep()
	if len(l.Policies) == 0 || len(l.Loads) == 0 || len(l.Clients) == 0 {
		return sw, fmt.Errorf("policylab: nothing to run")
	}
	repeat := max(l.Repeat, 1)
	cells := l.cells()
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
	wanted := func(int) bool { return true }
	switch {
	case l.Named != nil:
		outs, done, runErr = runNamed(ctx, l, cells, repeat)
	case l.Coordinate != nil:
		outs, done, runErr = runLoopback(ctx, l, cells, repeat, capacity)
	default:
		outs, done, wanted, sw.Reused, runErr = raceVirtual(ctx, l, &sw, cells, repeat, capacity, sem)
	}
	sw.Runs, sw.Completed = 0, 0
	for j, d := range done {
		if wanted(j) {
			sw.Runs++
			if d {
				sw.Completed++
			}
		}
	}
	sw.Rows, sw.Unfinished = nil, nil
	sw.addRows(l, cells, repeat, capacity, outs, done, wanted)
	if ctx.Err() != nil {
		return sw, ErrInterrupted
	}
	return sw, runErr
}

// addRows sums each cell's wanted runs into its row, or names the cell
// unfinished when one of them did not complete.
func (sw *Sweep) addRows(l Lab, cells []labCell, repeat int, capacity float64, outs []runOutcome, done []bool, wanted func(j int) bool) {
	w := window{l.Warmup, l.Warmup + l.Duration}
	for i, c := range cells {
		name := c.spec.Name
		if c.coordinated {
			name += coordinatedSuffix
		}
		var got []runOutcome
		finished := true
		for j := i * repeat; j < (i+1)*repeat; j++ {
			if !wanted(j) {
				continue
			}
			if !done[j] {
				finished = false
				break
			}
			got = append(got, outs[j])
		}
		if !finished || len(got) == 0 {
			sw.Unfinished = append(sw.Unfinished, unfinishedCell{Policy: name, Load: c.load.Text, Clients: c.clients, SDKCap: c.sdkCap})
			continue
		}
		r := rowOf(c, capacity, sw.Plan, w, l.SLO, got)
		r.Policy, r.Coordinated = name, c.coordinated
		sw.Rows = append(sw.Rows, r)
	}
}

// raceVirtual runs the cells' first raceRepeats repeats on the simulator,
// then the rest of the repeats of the finalists among the rows they make
// (by name, per load, under both caps); wanted says which runs the lab
// made. The choice is a function of the first repeats' outcomes alone, so
// the lab stays deterministic.
func raceVirtual(ctx context.Context, l Lab, sw *Sweep, cells []labCell, repeat int, capacity float64, sem chan struct{}) (
	outs []runOutcome, done []bool, wanted func(int) bool, reused int, err error) {
	first := min(repeat, raceRepeats)
	early := func(j int) bool { return j%repeat < first }
	progress := l.progress()
	outs, done, reused, err = runVirtual(ctx, l, cells, repeat, capacity, early, sem, progress)
	if err != nil || ctx.Err() != nil || repeat <= first {
		return outs, done, early, reused, err
	}
	pre := *sw
	pre.addRows(l, cells, repeat, capacity, outs, done, early)
	if pre.Partial() {
		return outs, done, early, reused, nil
	}
	var names []string
	for _, s := range l.Policies {
		names = append(names, s.Name)
	}
	keep := finalists(pre, names)
	late := func(j int) bool {
		c := cells[j/repeat]
		return j%repeat >= first && slices.Contains(keep[c.load.Text], c.spec.Name)
	}
	more, moreDone, moreReused, err := runVirtual(ctx, l, cells, repeat, capacity, late, sem, progress)
	for j := range outs {
		if late(j) {
			outs[j], done[j] = more[j], moreDone[j]
		}
	}
	return outs, done, func(j int) bool { return early(j) || late(j) }, reused + moreReused, err
}

// sweep is the Sweep's description of the lab, before its rows, and the
// capacity its loads are multiples of.
func (l *Lab) sweep() (Sweep, float64) {
	capacity, formula := l.Sim.Capacity(l.PromptTokens, l.MaxTokens, slices.Min(l.Clients))
	sw := Sweep{Capacity: capacity, CapacityFormula: formula, Limiter: l.Sim.Profile, Duration: l.Duration,
		Seed: l.Sim.Seed, Deterministic: true, SLO: l.SLO, Warmup: l.Warmup, Tail: l.Tail, Plan: l.plan(),
		MaxAttempts: l.MaxAttempts, Profile: l.Sim.ProfileSource, Fit: l.Sim.Fit}
	if l.capped() {
		sw.SDKMaxAttempts = sdkMaxAttempts
	}
	sw.Arrival = l.Arrival.Describe()
	if len(l.sizes) > 0 {
		sw.Arrival += fmt.Sprintf("; each request's prompt and max_tokens replayed from the run's %d, in its order (means %d and %d tokens, the capacity's)",
			len(l.sizes), l.PromptTokens, l.MaxTokens)
	}
	if l.Named != nil {
		capacity = l.Named.Capacity
		sw.Capacity, sw.Limiter, sw.Deterministic = capacity, "the named target", false
		sw.CapacityFormula = "unknown: no --capacity given"
		if capacity > 0 {
			sw.CapacityFormula = "as given (--capacity)"
		}
	}
	return sw, capacity
}

// runVirtual runs the labCells' repeats that want says, on the
// simulator, on every core, the heaviest first (so that the last runs to
// finish are short ones and no core waits long at the end): the lab's
// caps, then, as each finishes, its twin under the SDKs' cap — unless the
// run under the lab's cap never took a request past the SDKs' cap, and so
// is that twin (the same decisions on the same arrivals: nothing to run
// again). A run waits for a token of sem when sem is not nil. The
// outcomes do not depend on the order.
func runVirtual(ctx context.Context, l Lab, cells []labCell, repeat int, capacity float64, want func(j int) bool, sem chan struct{}, progress func()) (outs []runOutcome, done []bool, reused int, err error) {
	first := 0
	for first < len(cells) && !cells[first].sdkCap {
		first++
	}
	twinOf := map[int]int{} // a run under the lab's cap → its twin's
	for c, t := range twins(cells, first) {
		twinOf[t] = c
	}
	q := &runQueue{ctx: ctx, l: l, cells: cells, repeat: repeat, capacity: capacity, progress: progress, sem: sem,
		outs: make([]runOutcome, len(cells)*repeat), done: make([]bool, len(cells)*repeat)}
	sdkTwin := twins(cells, first)
	for j := range len(cells) * repeat {
		if !want(j) {
			continue
		}
		// A run under the SDKs' cap waits for its twin's, unless that one
		// is not run.
		if c := j / repeat; c < first {
			q.ready = append(q.ready, j)
		} else if t, ok := sdkTwin[c]; !ok || !want(t*repeat+j%repeat) {
			q.ready = append(q.ready, j)
		}
	}
	weight := func(j int) float64 {
		c := cells[j/repeat]
		return c.load.rate(capacity) * float64(max(c.spec.Attempts, 1)*max(c.spec.AppAttempts, 1))
	}
	slices.SortStableFunc(q.ready, func(a, b int) int { return cmp.Compare(weight(b), weight(a)) })
	q.finished = func(j int) {
		t, ok := twinOf[j/repeat]
		if !ok {
			return
		}
		tj := t*repeat + j%repeat
		if !want(tj) {
			return
		}
		if q.outs[j].reach() <= sdkMaxAttempts {
			q.outs[tj], q.done[tj] = q.outs[j], true
			q.reused++
			q.progress()
			return
		}
		q.ready = append([]int{tj}, q.ready...) // cheap: soon, while its twin's weight is still running elsewhere
	}
	q.run(max(1, runtime.GOMAXPROCS(0)))
	return q.outs, q.done, q.reused, q.err
}

// labGCPercent is the collector's target while a lab runs on the
// simulator (GOGC 100 by default): measured on the default sweep, 300
// took its wall time from 14.2 s to 10.8 s on two cores, for 150 MB of
// peak memory instead of 86 MB.
const labGCPercent = 300

// runQueue is runVirtual's pool: workers take runs off ready until none
// is ready and none is running (a run that finishes may make its twin
// ready).
type runQueue struct {
	ctx      context.Context
	l        Lab
	cells    []labCell
	repeat   int
	capacity float64
	progress func()
	// sem, when not nil, holds a token for each run in progress across
	// the labs that share it.
	sem chan struct{}
	// finished is told of each run that completed, under mu.
	finished func(j int)

	mu      sync.Mutex
	cond    *sync.Cond
	ready   []int
	running int
	outs    []runOutcome
	done    []bool
	reused  int
	err     error
}

func (q *runQueue) run(workers int) {
	q.cond = sync.NewCond(&q.mu)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(q.work)
	}
	wg.Wait()
}

// work runs runs until the queue is drained, or the lab ends (its context,
// or an error).
func (q *runQueue) work() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		for len(q.ready) == 0 && q.running > 0 {
			q.cond.Wait()
		}
		if len(q.ready) == 0 || q.ctx.Err() != nil || q.err != nil {
			q.cond.Broadcast()
			return
		}
		j := q.ready[0]
		q.ready = q.ready[1:]
		q.running++
		q.mu.Unlock()
		v := q.virtualRun(j)
		if q.sem != nil {
			q.sem <- struct{}{}
		}
		out, err := v.run(q.ctx)
		if q.sem != nil {
			<-q.sem
		}
		q.mu.Lock()
		q.running--
		switch {
		case err != nil && q.ctx.Err() == nil && q.err == nil:
			q.err = err
		case err == nil:
			q.outs[j], q.done[j] = out, true
			q.progress()
			q.finished(j)
		}
		q.cond.Broadcast()
	}
}

// virtualRun is run j: repeat j%repeat of cell j/repeat.
func (q *runQueue) virtualRun(j int) virtualRun {
	return q.l.virtualRun(q.cells[j/q.repeat], j%q.repeat, q.capacity)
}

// twins maps each cell from first on (the SDKs' cap) to its twin under
// the lab's caps: the same policy, load and fleet size.
func twins(cells []labCell, first int) map[int]int {
	at := map[string]int{}
	key := func(c labCell) string { return fmt.Sprintf("%s\x00%s\x00%d", c.spec.Name, c.load.Text, c.clients) }
	for i := range first {
		at[key(cells[i])] = i
	}
	out := map[int]int{}
	for i := first; i < len(cells); i++ {
		if t, ok := at[key(cells[i])]; ok {
			out[i] = t
		}
	}
	return out
}

// runPool runs the repeats of cells, in the given order of their indexes
// (cell × repeat + k), workers at a time, each by run on its virtualRun;
// it returns every outcome in its slot, which ran, and the first error
// (none once ctx has ended). l.Progress hears of each run finished.
func runPool(ctx context.Context, l Lab, cells []labCell, repeat int, capacity float64, workers int, order []int,
	run func(j int, c labCell, v virtualRun) (runOutcome, error), progress func()) ([]runOutcome, []bool, error) {
	outs := make([]runOutcome, len(cells)*repeat)
	done := make([]bool, len(outs))
	jobs := make(chan int)
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				c := cells[j/repeat]
				out, err := run(j, c, l.virtualRun(c, j%repeat, capacity))
				mu.Lock()
				if err != nil && firstErr == nil && ctx.Err() == nil {
					firstErr = err
				}
				if err == nil {
					outs[j], done[j] = out, true
					progress()
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

// virtualRun is repeat k of cell c: the cell's policy, load and fleet on
// the simulator seeded for the repeat.
func (l *Lab) virtualRun(c labCell, k int, capacity float64) virtualRun {
	cfg := l.Sim
	cfg.Seed += int64(k)
	return virtualRun{Spec: c.spec, Sim: cfg, Rate: c.load.rate(capacity), Duration: l.Duration, Warmup: l.Warmup, Tail: l.Tail,
		Arrival: l.Arrival, StoreDelay: l.StoreDelay, Clients: c.clients, Seed: uint64(cfg.Seed), Budget: l.Budget,
		PromptTokens: l.PromptTokens, MaxTokens: l.MaxTokens, sizes: l.sizes}
}

// progress is a counter of the lab's finished runs that tells
// l.Progress of each, out of Runs(); its caller holds one lock at a time.
func (l *Lab) progress() func() {
	finished, total := 0, l.Runs()
	return func() {
		finished++
		if l.Progress != nil {
			l.Progress(finished, total)
		}
	}
}

// rowOf sums a labCell's repeats into its Row: the measure over the
// window w under slo, and the counts over every arrival of a plan of
// length plan.
func rowOf(c labCell, capacity float64, plan time.Duration, w window, slo time.Duration, outs []runOutcome) Row {
	s, ld := c.spec, c.load
	r := Row{Policy: s.Name, Name: s.Name, Traits: s.Traits(), Models: s.Models, Fallback: s.Fallback, Load: ld.Text, LoadX: -1, RatePerS: ld.rate(capacity), Clients: c.clients,
		MaxAttempts: s.Attempts, Budget: s.Budget, OwnCaps: s.OwnCaps(), SDKCap: c.sdkCap, Repeats: len(outs), CapacitySharePct: -1,
		SuccessPctMin: math.Inf(1), SuccessPctMax: math.Inf(-1), GoodputMin: math.Inf(1), GoodputMax: math.Inf(-1),
		ClientSuccessPctMin: -1, ClientSuccessPctMax: -1, ClientSpreadPts: -1}
	if capacity > 0 {
		r.LoadX = r.RatePerS / capacity
	}
	goodput := 0.0
	for _, o := range outs {
		r.add(o)
		pct := 0.0
		if o.Requests > 0 {
			pct = 100 * float64(o.Succeeded) / float64(o.Requests)
		}
		g := float64(o.InPlan) / plan.Seconds()
		goodput += g
		r.SuccessPctMin, r.SuccessPctMax = min(r.SuccessPctMin, pct), max(r.SuccessPctMax, pct)
		r.GoodputMin, r.GoodputMax = min(r.GoodputMin, g), max(r.GoodputMax, g)
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
	r.measure(outs, w, slo)
	return r
}

// add sums one repeat's counts into r.
func (r *Row) add(o runOutcome) {
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
	if len(o.ClientSuccessPct) > 0 {
		lo, hi := slices.Min(o.ClientSuccessPct), slices.Max(o.ClientSuccessPct)
		if r.ClientSuccessPctMin < 0 || lo < r.ClientSuccessPctMin {
			r.ClientSuccessPctMin = lo
		}
		r.ClientSuccessPctMax = max(r.ClientSuccessPctMax, hi)
		r.ClientSpreadPts = max(r.ClientSpreadPts, hi-lo)
	}
}

// steadyPts is the drift of the measure within the window, in points,
// from which a clear drift makes a row not steady.
const steadyPts = 1.0

// measure sets r's measure from its repeats' requests in w under slo.
func (r *Row) measure(outs []runOutcome, w window, slo time.Duration) {
	ms := make([]repeatMeasure, len(outs))
	var lat []float64
	for k, o := range outs {
		m, l := measureOf(o.Each, w, slo)
		ms[k] = m
		lat = append(lat, l...)
	}
	slices.Sort(lat)
	r.setMeasures(ms, lat)
}

// setMeasures sets r's measure from its repeats' measures and the
// latencies of their successes (ms, sorted).
func (r *Row) setMeasures(ms []repeatMeasure, lat []float64) {
	var share, load, load429, drift []float64
	r.Measures, r.Offered, r.GaveUpLocal = ms, 0, 0
	for _, m := range ms {
		r.Offered += m.Offered
		r.GaveUpLocal += m.GaveUpLocal
		if m.Offered > 0 {
			share = append(share, m.InSLOPct())
			load = append(load, m.AttemptsPerRequest())
			load429 = append(load429, ratioOf(m.HTTP429, m.Offered))
			drift = append(drift, m.DriftPts())
		}
	}
	iv := meanInterval(share)
	// A share's interval ends where shares do: 0 and 100.
	r.SuccessInSLOPct, r.CILow, r.CIHigh = iv.mean, max(iv.lo, 0), min(iv.hi, 100)
	if iv.n == 0 {
		r.CILow, r.CIHigh = -1, -1
	}
	r.AttemptsPerRequest = meanInterval(load).mean
	r.HTTP429PerRequest = meanInterval(load429).mean
	r.DriftPts, r.Steady = 0, true // nothing measured: no drift to see
	if d := meanInterval(drift); d.n > 0 {
		r.DriftPts = d.mean
		r.Steady = !(d.excludesZero() && math.Abs(d.mean) >= steadyPts)
	}
	r.SuccessLatencies = lat
	r.SuccessP50MS, r.SuccessP99MS = percentiles(lat)
}
