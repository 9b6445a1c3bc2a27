package policylab

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/results"
)

// Named is the lab against a named target instead of the simulator: on
// the wall clock, one run at a time, Pause apart, the policies
// interleaved within each repeat (A B C A B C) so that drift in the
// deployment spreads over all of them. Nothing in it is deterministic:
// the Sweep says so.
type Named struct {
	// Target is the deployment: its Spec (endpoint, deployment, key
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
// run's arrivals.
func (l *Lab) Planned(capacity float64) int {
	n := 0
	for _, ld := range l.Loads {
		v := virtualRun{Rate: ld.rate(capacity), Duration: l.Duration}
		n += v.count()
	}
	return n * len(l.Policies) * len(l.Clients) * max(l.Repeat, 1)
}

// runNamed runs the lab against the named target, in turn.
func runNamed(ctx context.Context, l Lab, cells []labCell, repeat int) ([]runOutcome, []bool, error) {
	outs := make([]runOutcome, len(cells)*repeat)
	done := make([]bool, len(outs))
	finished := 0
	for k := range repeat {
		for i, c := range cells {
			if finished > 0 && sleep.For(ctx, l.Named.Pause) != nil {
				return outs, done, ctx.Err()
			}
			v := virtualRun{Spec: c.spec, Rate: c.load.rate(l.Named.Capacity), Duration: l.Duration, Poisson: l.Poisson,
				Clients: c.clients, Seed: uint64(l.Sim.Seed) + uint64(k), Budget: l.Budget}
			out, err := v.runNamed(ctx, l.Named.Target)
			if err != nil {
				return outs, done, err
			}
			j := i*repeat + k
			outs[j], done[j] = out, true
			finished++
			if l.Progress != nil {
				l.Progress(finished, len(outs))
			}
		}
	}
	return outs, done, nil
}

// runNamed plays the plan once against a named target, each client its
// own client.Target with its own retry owner, and counts what the rows
// of its attempts say (the client's own count of early retries: no
// simulator witnesses them).
func (v *virtualRun) runNamed(ctx context.Context, target campaign.Target) (runOutcome, error) {
	clients, err := v.namedClients(target)
	if err != nil {
		return runOutcome{}, err
	}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	tally := &wallTally{budgetMS: ms(v.Budget), planMS: ms(v.Duration),
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
		wg.Go(func() { c.Send(ctx, first, start, ctx, tally.observe) })
	}
	wg.Wait()
	if ctx.Err() != nil {
		return runOutcome{}, ctx.Err()
	}
	return tally.outcome(), nil
}

// namedClients builds the fleet's clients: one client.Target each, its
// own Owner (and so its own cooldown and pace), the fleet's Slots shared.
func (v *virtualRun) namedClients(target campaign.Target) ([]*client.Target, error) {
	slots := v.fleetSlots()
	out := make([]*client.Target, 0, max(v.Clients, 1))
	for i := range max(v.Clients, 1) {
		p, err := v.clientPolicy(i, slots)
		if err != nil {
			return nil, err
		}
		t := target
		t.Owner, t.PolicyName, t.Fallback = p, v.Spec.Name, v.Spec.Fallback
		t.AppAttempts, t.AppDelay, t.MarkSDKRetries = v.Spec.AppAttempts, v.Spec.AppDelay, v.Spec.SDK
		c, err := t.Client()
		if err != nil {
			for _, o := range out {
				o.Close()
			}
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// wallTally counts a named run's rows as they come (from many requests'
// goroutines at once).
type wallTally struct {
	budgetMS, planMS float64

	mu   sync.Mutex
	reqs map[int]*wallRequest
	out  runOutcome
}

type wallRequest struct {
	firstSent, lastEnd float64
	lastStatus         int
	sent, redirected   bool
	prevReady          float64 // when the previous attempt's advised wait ended; -1: none
}

func (w *wallTally) observe(r *results.Record) {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := w.reqs[r.Seq]
	if q == nil {
		q = &wallRequest{firstSent: r.SentMS, prevReady: -1}
		w.reqs[r.Seq] = q
		w.out.Requests++
	}
	if r.Error == admission.ClassCooldown || r.Error == admission.ClassPaced {
		return // refused locally: nothing reached the deployment
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
	for _, q := range w.reqs {
		if q.redirected {
			out.Redirected++
		}
		out.end(q.sent, q.lastStatus, q.lastEnd-q.firstSent, w.budgetMS, q.lastEnd <= w.planMS)
	}
	return out
}
