package campaign

import (
	"context"
	"errors"
	"time"

	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/results"
)

// Options configure Run.
type Options struct {
	RunID string
	// Group overrides every plan's default group label when set.
	Group       string
	MaxInFlight int
	MaxRequests int // per plan, a safety cap of the engine
	// Budget bounds the time spent sending over all plans; 0 means each
	// plan runs to its end.
	Budget time.Duration
	// Grace is how long in-flight requests may finish after a cancel
	// (dispatch.Options.Grace; 0 means dispatch.DefaultGrace).
	Grace time.Duration
	// Wait is the engine's pacing wait (nil: its precise wait).
	Wait dispatch.WaitFunc
	// PaceWindow and PaceFixed are dispatch.Options'.
	PaceWindow time.Duration
	PaceFixed  bool
	// Watch, when set, is told as each plan starts (Plan.Bound: what its
	// progress counts to); it returns what sees
	// the plan's Records (safe for concurrent use) and what is told when
	// the plan ends. Either may be nil.
	Watch func(Plan) (observe func(*results.Record), done func(dispatch.Outcome))

	// Start, when set, puts the plans on one timeline that every worker of
	// a fleet computes alike: the first plan starts at Start, each next
	// one its predecessor's Slot later (not when its last answer came),
	// and the Budget counts from Start. A worker that begins more than
	// StartTolerance after Start is refused (Job.Validate); one that
	// begins before waits. The clocks of the workers must agree (NTP):
	// each reads Start on its own.
	Start time.Time
	// Offset places these plans Offset after Start on that timeline: a
	// later part of a run that began at Start (the policy lab's runs). Only
	// the part at Offset 0 is checked against the clock; a later part that
	// begins late sends late, each request recorded as late as it went.
	Offset time.Duration
	// Shard is the share of every plan this worker sends
	// (dispatch.Options.Shard); more than one shard needs a Start.
	Shard dispatch.Shard
	// Metrics, when set, counts every plan's requests and Records live
	// (--metrics-addr).
	Metrics Meter
}

// Outcome is what Run sent and recorded over every plan.
type Outcome struct {
	Sent, Retries, Written int
	Interrupted            bool
	CappedBy               dispatch.Cap
	Plans                  []dispatch.Outcome // one per plan that started
	// Repaired is how many bytes of a torn last line (a run killed
	// mid-write) were dropped from the results file before appending.
	Repaired int64
}

// RunPlans sends the plans in order, one after another, through s into sink,
// under one run id and one time budget. It stops at the first plan that is
// interrupted or cannot be recorded, and returns dispatch.ErrInterrupted
// (or the sink's error) after every sent request has been recorded. With
// o.Start, plan k starts at Start + Offset + the Slots of the plans before
// it, also when the one before is still being answered (it then goes late).
func RunPlans(ctx context.Context, plans []Plan, s dispatch.Sender, sink dispatch.Sink, o Options) (Outcome, error) {
	var total Outcome
	started := time.Now()
	var at time.Time // on a common timeline: when the next plan starts
	if !o.Start.IsZero() {
		at = o.Start.Add(o.Offset)
		started = at
	}
	var waves *waveAdmissions // the last burst plan's, for a sized plan after it
	for k, p := range plans {
		p, err := waves.size(p, at.IsZero() && o.Shard.Whole())
		if err != nil {
			return total, err
		}
		var budget time.Duration
		if o.Budget > 0 {
			// On a timeline the budget left is the same on every worker.
			elapsed := time.Since(started)
			if !at.IsZero() {
				elapsed = at.Sub(started)
			}
			if budget = o.Budget - elapsed; budget <= 0 {
				total.CappedBy = dispatch.CapMaxDuration
				break
			}
		}
		p.Start = at
		group := o.Group
		if group == "" {
			group = p.Group
		}
		sender, err := planSender(s, p)
		if err != nil {
			return total, err
		}
		sender, p = probeSender(p, sender, waves)
		var observe func(*results.Record)
		var done func(dispatch.Outcome)
		if o.Watch != nil {
			observe, done = o.Watch(p)
		}
		if a, ok := p.Pacer.(answerPacer); ok {
			observe = alsoObserve(observe, a.seeAnswer)
		}
		if w := countWaves(p, plans[k+1:]); w != nil {
			waves, observe = w, alsoObserve(observe, w.observe)
		}
		if o.Metrics != nil {
			var count func(*results.Record)
			sender, count = o.Metrics.Meter(group, o.Shard.Share(p.Planned), sender) // this worker's share
			observe = alsoObserve(observe, count)
		}
		out, err := dispatch.Run(ctx, p.Pacer, sender, sink, dispatch.Options{
			RunID: o.RunID, Shape: p.Shape, Group: group,
			MaxInFlight: o.MaxInFlight, MaxRequests: o.MaxRequests, MaxDuration: budget,
			WaitWave: p.WaitWave, WaveGap: p.Gap, Grace: o.Grace, Wait: o.Wait, PaceWindow: o.PaceWindow, PaceFixed: o.PaceFixed, Observe: observe,
			Start: at, Shard: o.Shard,
		})
		if !at.IsZero() {
			at = at.Add(p.Slot)
		}
		if done != nil {
			done(out)
		}
		total.add(out)
		if err != nil {
			return total, err
		}
	}
	if total.Interrupted {
		return total, dispatch.ErrInterrupted
	}
	return total, nil
}

// planSender is s, or for a plan that sizes its own requests (Shapes)
// the client's sender sized by them.
func planSender(s dispatch.Sender, p Plan) (dispatch.Sender, error) {
	if p.Shapes == nil {
		return s, nil
	}
	sh, ok := s.(interface {
		shaped(client.Shaper) (dispatch.Sender, error)
	})
	if !ok {
		return nil, errors.New("campaign: a plan's sizes need the client's sender")
	}
	return sh.shaped(p.Shapes)
}

// add counts one plan's outcome into the run's.
func (total *Outcome) add(out dispatch.Outcome) {
	total.Plans = append(total.Plans, out)
	total.Sent += out.Sent
	total.Retries += out.Retries
	total.Written += out.Written
	total.Interrupted = total.Interrupted || out.Interrupted
	if out.CappedBy != dispatch.NoCap {
		total.CappedBy = out.CappedBy
	}
}

// alsoObserve is observe followed by more; more alone when observe is nil.
func alsoObserve(observe, more func(*results.Record)) func(*results.Record) {
	if observe == nil {
		return more
	}
	return func(r *results.Record) {
		observe(r)
		more(r)
	}
}

// Interrupted reports whether err says the run was cut by a cancel.
func Interrupted(err error) bool { return errors.Is(err, dispatch.ErrInterrupted) }
