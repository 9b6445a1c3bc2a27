// Package policylab is `ptuprobe policies`: the same traffic plan sent by
// many client policies, one after another, each against a fresh embedded
// simulator (or, against a real target, in turn with a cooldown between
// them), measured side by side. A policy is an admission.Policy (the retry
// owner ptuprobe and its users import) configured to behave like a client
// style: none, honour the header, fixed waits, backoff, an SDK, stacked
// owners, redirect, the documents' budget rule, a shared cooldown.
package policylab

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/sim"
)

// Lab is one comparison.
type Lab struct {
	// Plans builds the traffic plan afresh for each run (a plan's pacer is
	// consumed by its run), with durations divided by scale and rates
	// multiplied by it, so the simulator sees the plan as written.
	Plans    func(scale float64) ([]campaign.Plan, error)
	Policies []Spec
	// Target is where requests go; its Owner, PolicyName, Fallback and
	// emulation fields are set per policy.
	Target  campaign.Target
	Options campaign.Options
	// Output is the results file every run appends to.
	Output string
	// Repeat runs the policies this many times, interleaved (A B C A B C),
	// so that drift in a real target spreads over all of them.
	Repeat int
	// Cooldown separates runs against a real target, so each meets a
	// deployment that has drained. With Options.Start it separates every
	// run, on the simulator too (in model time): the runs are then on one
	// timeline, run i starting i × (the plans' Slots + Cooldown) after
	// Start on every worker of a fleet.
	Cooldown time.Duration
	// ReferenceBudget is the latency a request should stay within, for the
	// over_budget count (model time).
	ReferenceBudget time.Duration
	// Seed seeds each policy's jitter and backoff draws, so a lab on the
	// simulator (seeded too) is repeatable; 0 means 1.
	Seed uint64
	// Watch, when set, is told as each run starts, with the policy's name.
	Watch func(policy string, p campaign.Plan) (func(*results.Record), func(dispatch.Outcome))
}

// scale is the simulator's time scale: the factor between model time (what
// the plans, the policies and the outputs are written in) and wall time.
func (l *Lab) scale() float64 {
	if l.Target.Embedded() && l.Target.Sim.TimeScale > 0 {
		return l.Target.Sim.TimeScale
	}
	return 1
}

// Run runs every policy Repeat times, interleaved, and returns one
// Measure per policy, in the order of Policies, in model time.
func Run(ctx context.Context, l Lab) ([]Measure, error) {
	if len(l.Policies) == 0 {
		return nil, fmt.Errorf("no policy to run")
	}
	scale := l.scale()
	recs := make([]*recorder, len(l.Policies))
	for i, s := range l.Policies {
		recs[i] = newRecorder(s.Name, float64(l.ReferenceBudget)/float64(time.Millisecond)/scale)
		if l.Target.Embedded() {
			recs[i].m.SimEarlyReturns, recs[i].m.SimSDKRetries = 0, 0
		}
	}
	slot, err := l.runSlot(scale)
	if err != nil {
		return nil, err
	}
	run := 0
	for round := 0; round < max(l.Repeat, 1); round++ {
		for i, spec := range l.Policies {
			if run > 0 && !l.Target.Embedded() && l.Options.Start.IsZero() {
				if err := sleep.For(ctx, l.Cooldown); err != nil {
					return measures(recs, scale), dispatch.ErrInterrupted
				}
			}
			if err := l.runOne(ctx, spec, recs[i], scale, l.Options.Offset+time.Duration(run)*slot); err != nil {
				return measures(recs, scale), err
			}
			run++
		}
	}
	return measures(recs, scale), nil
}

// runSlot is how far apart the runs start on a common timeline
// (Options.Start): the plans' Slots and the Cooldown, in wall time; 0
// without one.
func (l *Lab) runSlot(scale float64) (time.Duration, error) {
	if l.Options.Start.IsZero() {
		return 0, nil
	}
	plans, err := l.Plans(scale)
	if err != nil {
		return 0, err
	}
	slot := scaled(l.Cooldown, scale)
	for _, p := range plans {
		slot += p.Slot
	}
	return slot, nil
}

func measures(recs []*recorder, scale float64) []Measure {
	out := make([]Measure, len(recs))
	for i, r := range recs {
		m := r.measure()
		for j := range m.E2E {
			m.E2E[j] *= scale
		}
		for j := range m.RetrySends {
			m.RetrySends[j] *= scale
		}
		out[i] = m
	}
	return out
}

// runOne sends the plan once with spec's client, into Output, grouped by
// the policy's name; on a common timeline, offset after Options.Start.
func (l *Lab) runOne(ctx context.Context, spec Spec, rec *recorder, scale float64, offset time.Duration) error {
	plans, err := l.Plans(scale)
	if err != nil {
		return err
	}
	t := l.Target
	p := spec.Policy(scale)
	p.Rand = lockedRand(max(l.Seed, 1))
	t.Owner, t.PolicyName = p, spec.Name
	t.Fallback = spec.Fallback
	t.AppAttempts, t.AppDelay, t.MarkSDKRetries = spec.AppAttempts, scaled(spec.AppDelay, scale), spec.SDK
	if t.Embedded() {
		t.OnSimulatorStats = func(s sim.Stats) {
			rec.mu.Lock()
			rec.m.SimEarlyReturns += int(s.EarlyReturns)
			rec.m.SimSDKRetries += int(s.SDKRetries)
			rec.mu.Unlock()
		}
	}
	o := l.Options
	o.Group, o.RunID = spec.Name, results.NewRunID()
	if !o.Start.IsZero() {
		o.Offset = offset
	}
	o.Watch = func(plan campaign.Plan) (func(*results.Record), func(dispatch.Outcome)) {
		var observe func(*results.Record)
		var done func(dispatch.Outcome)
		if l.Watch != nil {
			observe, done = l.Watch(spec.Name, plan)
		}
		return func(r *results.Record) {
			rec.Observe(r)
			if observe != nil {
				observe(r)
			}
		}, done
	}
	_, err = campaign.Run(ctx, campaign.Job{Plans: plans, Target: t, Output: l.Output, Options: o})
	return err
}

// Policy is the admission.Policy spec describes, its durations divided by
// scale (wall time against a simulator running scale times faster).
func (s Spec) Policy(scale float64) *admission.Policy {
	if s.Attempts == 1 && !s.Fallback {
		// One attempt: the refusal is the answer, as it is.
		return &admission.Policy{MaxAttempts: 1, ReturnLastResponse: true}
	}
	p := &admission.Policy{
		MaxAttempts:        s.Attempts,
		Jitter:             s.Jitter,
		MaxWait:            scaled(s.MaxWait, scale),
		RedirectFirst:      s.RedirectFirst,
		SharedCooldown:     s.Cooldown,
		ReturnLastResponse: s.SDK,
	}
	if s.Budget > 0 {
		p.Budget = max(scaled(s.Budget, scale), 1) // a budget scaled below 1ns is still one
	}
	if s.LongWaitBackoff {
		p.OverMaxWait = admission.BackoffOverMaxWait
	}
	if s.IgnoreAdvice {
		p.Advice = admission.IgnoreAdvice
	}
	if s.Constant {
		p.Backoff = admission.Constant(scaled(s.BackoffBase, scale))
	} else if s.BackoffBase > 0 {
		p.Backoff = admission.Exponential(scaled(s.BackoffBase, scale), scaled(s.BackoffCap, scale))
	}
	return p
}

func scaled(d time.Duration, scale float64) time.Duration {
	return time.Duration(float64(d) / scale)
}

// lockedRand is a seeded source of [0,1) safe for the owner's concurrent
// requests.
func lockedRand(seed uint64) func() float64 {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	return func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return r.Float64()
	}
}
