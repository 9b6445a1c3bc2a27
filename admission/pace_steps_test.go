package admission

import "time"

// The Pace's steps one at a time, as the tests take them; production
// takes them through Pace.apply.

// reserve takes the send slot of an attempt ready at now: when it may go.
// An attempt whose answer would not come before deadline (when deadline is
// set) — its slot plus the time admitted attempts take to be answered,
// mean and four deviations —
// takes none: ok is false and at is the slot it would have had. Sending
// it would spend the deployment's capacity on an answer too late to use.
func (p *Pace) reserve(now, deadline time.Time) (at time.Time, ok bool) {
	at, _, ok = p.reserveGen(now, deadline)
	return at, ok
}

// reserveGen is reserve, and the cut count the slot was taken under: a
// slot taken before a cut is spaced at the old rate, so its holder takes
// another (a PaceConfirm step reports whether it must).
func (p *Pace) reserveGen(now, deadline time.Time) (at time.Time, gen uint64, ok bool) {
	r := p.apply(nil, PaceStep{Op: PaceReserve, Now: now, Deadline: deadline})
	return r.At, r.Gen, r.OK
}

// admitted grows the rate for an attempt sent at sent and answered at now
// that was not refused, and learns how long answers take.
func (p *Pace) admitted(now, sent time.Time) {
	p.apply(nil, PaceStep{Op: PaceAdmitted, Now: now, Sent: sent})
}

// refusedAt cuts the rate for an attempt sent at sent and refused at now
// with the advised wait (negative: none usable), and holds every send
// until the wait has passed. The attempt's slot is taken under the cuts
// there are: sent alone says whether it was sent before the last.
func (p *Pace) refusedAt(now, sent time.Time, wait time.Duration) {
	p.mu.Lock()
	gen := p.state.gen
	p.mu.Unlock()
	p.apply(nil, PaceStep{Op: PaceRefused, Now: now, Sent: sent, Wait: wait, Gen: gen})
}
