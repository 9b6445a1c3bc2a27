package policylab

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/policy"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/results"
)

// Named is the lab against a named target instead of the simulator: on
// the wall clock, one run at a time, Pause apart, the policies
// interleaved within each repeat (A B C A B C) so that drift in the
// deployment spreads over all of them. Nothing in it is deterministic:
// the Sweep says so.
type Named struct {
	// Target is the deployment: its policy.Spec (endpoint, deployment, key
	// variable, request shape) and FallbackDeployment for the policies
	// that redirect. Owner and the emulation fields are set per client.
	Target campaign.Target
	// Capacity is what the deployment sustains, requests per second (from
	// --capacity or a calibrate run); 0 when unknown: loads must then be
	// plain rates and capacity shares stay empty.
	Capacity float64
	// Pause separates runs, so each meets a deployment that has drained.
	Pause time.Duration
	// MaxRequests bounds the requests the whole lab offers.
	MaxRequests int
}

// Planned is the number of requests the lab offers a named target: every
// run's arrivals, a coordinated lab's twins included.
func (l *Lab) Planned(capacity float64) int {
	n := 0
	for _, ld := range l.Loads {
		v := virtualRun{Rate: ld.rate(capacity), Duration: l.Duration, Warmup: l.Warmup, Tail: l.Tail, Arrival: l.Arrival}
		n += v.count()
	}
	policies := len(l.Policies)
	if l.Coordinate != nil {
		policies += l.CoordinatedPolicies() // run twice
	}
	return n * policies * len(l.Clients) * max(l.Repeat, 1)
}

// runNamed runs the lab against the named target, in turn.
func runNamed(ctx context.Context, l Lab, cells []labCell, repeat int) ([]runOutcome, []bool, error) {
	outs := make([]runOutcome, len(cells)*repeat)
	done := make([]bool, len(outs))
	finished := 0
	id := labID()
	for k := range repeat {
		for i, c := range cells {
			if finished > 0 && sleep.For(ctx, l.Named.Pause) != nil {
				return outs, done, ctx.Err()
			}
			v := virtualRun{Spec: c.spec, Rate: c.load.rate(l.Named.Capacity), Duration: l.Duration, Warmup: l.Warmup, Tail: l.Tail, Arrival: l.Arrival,
				Clients: c.clients, Seed: uint64(l.Sim.Seed) + uint64(k), Budget: l.Budget}
			j := i*repeat + k
			f := wallFleet{target: l.Named.Target}
			if l.Coordinate != nil {
				f.apart = true
				if c.coordinated {
					f.open, f.namespace = l.Coordinate.Open, namespace(id, j)
				}
			}
			out, err := v.runWall(ctx, f)
			if err != nil {
				return outs, done, err
			}
			outs[j], done[j] = out, true
			finished++
			if l.Progress != nil {
				l.Progress(finished, len(outs))
			}
		}
	}
	return outs, done, nil
}

// runWall plays the plan once on the wall clock against f's target, each
// client its own client.Target with its own retry owner, and counts what
// the rows of its attempts say (the client's own count of early retries:
// a named target witnesses none for the lab).
func (v *virtualRun) runWall(ctx context.Context, f wallFleet) (runOutcome, error) {
	f.calls = new(atomic.Int64)
	clients, shared, err := v.wallClients(f)
	defer func() {
		for _, c := range clients {
			c.Close()
		}
		for _, s := range shared {
			s.Close()
		}
	}()
	if err != nil {
		return runOutcome{}, err
	}
	tally := &wallTally{budgetMS: ms(v.Budget), planMS: ms(v.plan()), clients: len(clients),
		reqs: map[int]*wallRequest{}}
	start := time.Now()
	var wg sync.WaitGroup
	for i, at := range v.arrivals() {
		if !sleep.Until(ctx, start.Add(at)) {
			break
		}
		first := results.Blank()
		first.RunID, first.Group, first.Shape, first.Seq, first.Attempt = "lab", v.Spec.Name, "schedule", i, 1
		first.IntendedMS, first.SentMS = ms(at), ms(time.Since(start))
		c := clients[i%len(clients)]
		tally.dispatch(i, at)
		wg.Go(func() { c.Send(ctx, first, start, ctx, tally.observe) })
	}
	wg.Wait()
	if ctx.Err() != nil {
		return runOutcome{}, ctx.Err()
	}
	out := tally.outcome()
	for _, s := range shared {
		out.Fallbacks += s.Fallbacks()
	}
	out.CoordinatorCalls = f.calls.Load()
	return out, nil
}

// wallClients builds the fleet's clients: one client.Target each, its
// own Owner (and so its own cooldown and pace), the fleet's Slots shared
// in process unless f keeps the clients apart, and each client's
// Coordinator on f's namespace when f coordinates them. What it opened
// is returned with an error too, to close.
func (v *virtualRun) wallClients(f wallFleet) ([]*client.Target, []Shared, error) {
	slots := v.fleetSlots()
	var out []*client.Target
	var shared []Shared
	for i := range max(v.Clients, 1) {
		if f.apart {
			slots = v.fleetSlots()
		}
		env := v.wallEnv(i, slots)
		if f.open != nil {
			s, err := f.open(f.namespace)
			if err != nil {
				return out, shared, err
			}
			shared = append(shared, s)
			env.Coordinator = counted{s, f.calls}
		}
		p, err := v.clientPolicy(i, env)
		if err != nil {
			return out, shared, err
		}
		t := f.target
		if f.keyed {
			key := "lab-client-" + strconv.Itoa(i)
			t.Getenv = func(string) string { return key }
		}
		t.Own(v.Spec, p)
		c, err := t.Client()
		if err != nil {
			return out, shared, err
		}
		out = append(out, c)
	}
	return out, shared, nil
}

// wallEnv is client i's environment on the wall clock: the fleet's slots,
// and its jitter's source locked, for its requests run at once.
func (v *virtualRun) wallEnv(i int, slots *admission.Slots) policy.Env {
	return policy.Env{Slots: slots, Rand: lockedRand(v.clientSeed(i))}
}

// wallTally counts a named run's rows as they come (from many requests'
// goroutines at once).
type wallTally struct {
	budgetMS, planMS float64
	clients          int // arrival i went to client i % clients

	mu   sync.Mutex
	reqs map[int]*wallRequest
	out  runOutcome
}

type wallRequest struct {
	firstSent, lastEnd float64
	lastStatus         int
	seen               bool // a row of it came
	sent, redirected   bool
	prevReady          float64 // when the previous attempt's advised wait ended; -1: none
	// arrival is when the plan offered it, ms from the run's start; each
	// is how it ended as the measure reads it (its at, e2e and ok are
	// set by outcome).
	arrival float64
	each    requestOutcome
}

// dispatch counts arrival seq as a request before it is sent: one the
// owner refuses before its first send (a pace or a cooldown that does
// not fit the budget) has no row, and is given up unsent.
func (w *wallTally) dispatch(seq int, at time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reqs[seq] = &wallRequest{prevReady: -1, arrival: ms(at)}
	w.out.Requests++
}

func (w *wallTally) observe(r *results.Record) {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := w.reqs[r.Seq]
	if q == nil { // not dispatched: counted from its first row
		q = &wallRequest{prevReady: -1}
		w.reqs[r.Seq] = q
		w.out.Requests++
	}
	if !q.seen {
		q.seen, q.firstSent = true, r.SentMS
	}
	q.each.reach = max(q.each.reach, int32(r.Attempt))
	q.each.local = r.NotSent() || r.Error == admission.ClassCooldown || r.Error == admission.ClassPaced ||
		r.Error == admission.ClassThrottled || r.Error == admission.ClassAdaptive
	if q.each.local {
		return // refused locally: nothing reached the deployment
	}
	q.each.attempts++
	if r.Status == http.StatusTooManyRequests {
		q.each.http429++
	}
	if q.sent && q.prevReady >= 0 && r.SentMS < q.prevReady && !(r.Fallback && !q.redirected) {
		w.out.EarlyReturns++
	}
	q.sent = true
	w.out.Attempts++
	if r.Status == http.StatusTooManyRequests {
		w.out.HTTP429++
	}
	end := r.SentMS + max(r.LatencyMS, 0)
	q.lastEnd, q.lastStatus = end, r.Status
	q.redirected = q.redirected || r.Fallback
	q.prevReady = -1
	if r.HasWait() {
		q.prevReady = end + r.WaitMS
	}
}

func (w *wallTally) outcome() runOutcome {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.out
	requests, succeeded := make([]int, max(w.clients, 1)), make([]int, max(w.clients, 1))
	seqs := slices.Sorted(maps.Keys(w.reqs))
	for _, seq := range seqs {
		q := w.reqs[seq]
		if q.redirected {
			out.Redirected++
		}
		before := out.Succeeded
		out.end(q.sent, q.lastStatus, q.lastEnd-q.firstSent, w.budgetMS, q.lastEnd <= w.planMS)
		e := q.each
		e.at = time.Duration(q.arrival * float64(time.Millisecond))
		e.redirected = q.redirected
		if q.sent {
			e.e2e = time.Duration((q.lastEnd - q.arrival) * float64(time.Millisecond))
		}
		e.late = q.sent && w.budgetMS > 0 && q.lastEnd-q.arrival > w.budgetMS
		e.ok = q.sent && q.lastStatus >= 200 && q.lastStatus < 300 && (w.budgetMS <= 0 || q.lastEnd-q.arrival <= w.budgetMS)
		out.Each = append(out.Each, e)
		i := seq % len(requests)
		requests[i]++
		succeeded[i] += out.Succeeded - before
	}
	for i := range requests {
		if requests[i] > 0 {
			out.ClientSuccessPct = append(out.ClientSuccessPct, 100*float64(succeeded[i])/float64(requests[i]))
		}
	}
	return out
}
