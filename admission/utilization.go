package admission

import (
	"time"

	"github.com/ptuprobe/ptuprobe/retryafter"
)

// utilizationReading is one utilization reported, as of a send.
type utilizationReading struct {
	at  time.Time // the send of the attempt it answered; zero: none yet
	pct float64
}

// paceSignal is what an answer reported of the target's capacity, for a
// Pace with a utilization target.
type paceSignal struct {
	pct  float64       // the utilization read, percent
	wait time.Duration // until it is expected back under the target; negative: no estimate
	over bool          // over the target, or a limit with nothing remaining
	from string        // "utilization" or "remaining"
}

// signal reads the answer at now to an attempt sent at sent: ok is false
// when the Pace has no utilization target or the answer reported nothing.
func (p *Pace) signal(sent, now time.Time, adv retryafter.Advice) (sig paceSignal, ok bool) {
	target := p.cfg.Utilization
	if target <= 0 {
		return sig, false
	}
	if adv.UtilizationPct >= 0 {
		return p.utilization(sent, now, adv.UtilizationPct, target), true
	}
	return remaining(adv, target)
}

// utilization reads a reported utilization pct and estimates, from the
// decline since the latest earlier reading, when it is back under target.
func (p *Pace) utilization(sent, now time.Time, pct, target float64) paceSignal {
	sig := paceSignal{pct: pct, wait: -1, over: pct > target, from: "utilization"}
	p.mu.Lock()
	defer p.mu.Unlock()
	prev := p.last
	if !sent.After(prev.at) {
		return sig // no later than the latest reading: it says nothing newer
	}
	p.last = utilizationReading{at: sent, pct: pct}
	if !sig.over || prev.at.IsZero() || prev.pct <= pct {
		return sig
	}
	span := sent.Sub(prev.at)
	perSecond := (prev.pct - pct) / span.Seconds()
	ahead := min(time.Duration((pct-target)/perSecond*float64(time.Second)), span)
	if until := sent.Add(ahead).Sub(now); until > 0 {
		sig.wait = until
	}
	return sig
}

// remaining reads the used share of the request and token limits an
// answer stated, and the reset of one with nothing remaining.
func remaining(adv retryafter.Advice, target float64) (paceSignal, bool) {
	sig := paceSignal{pct: -1, wait: -1, from: "remaining"}
	for _, l := range [...]struct {
		remaining, limit int
		reset            float64
	}{{adv.RemainingRequests, adv.LimitRequests, adv.ResetRequestsMS}, {adv.RemainingTokens, adv.LimitTokens, adv.ResetTokensMS}} {
		used := -1.0
		switch {
		case l.remaining == 0:
			used, sig.over = 100, true
			if l.reset >= 0 {
				sig.wait = max(sig.wait, time.Duration(l.reset*float64(time.Millisecond)))
			}
		case l.remaining > 0 && l.limit > 0:
			used = max(0, 100*(1-float64(l.remaining)/float64(l.limit)))
		}
		sig.pct = max(sig.pct, used)
	}
	sig.over = sig.over || sig.pct > target
	return sig, sig.pct >= 0
}

// learned learns the latency of an admitted answer without growing the
// rate: an answer whose reading cuts it.
func (p *Pace) learned(now, sent time.Time) {
	p.mu.Lock()
	p.learn(now, sent)
	p.mu.Unlock()
}

// paceAnswer is the Pace's step for the answer at now to attempt a, sent
// to the primary target: a refusal cuts and holds; an admitted answer
// whose reported utilization is over the target does too (the note says
// so, on w, for the Decision); any other grows the rate.
func (r *request) paceAnswer(a *Attempt, now time.Time, adv retryafter.Advice, refused bool, w words) words {
	pace := r.t.p.Pace
	sig, read := pace.signal(a.Sent, now, adv)
	switch {
	case refused:
		r.pace(PaceStep{Op: PaceRefused, Now: now, Sent: a.Sent, Wait: a.Wait, Gen: r.paceGen})
		return w
	case read && sig.over:
		pace.learned(now, a.Sent)
		// The cut is in proportion to the overshoot, target/reading, and
		// never deeper than a refusal's: readings come on every answer,
		// and a small overshoot is no refusal.
		cfg := pace.cfg
		cut := cfg.Decrease
		if sig.pct > 0 {
			cut = min(max(cfg.Decrease, cfg.Utilization/sig.pct), 1)
		}
		cfg.Decrease = cut
		r.pace(PaceStep{Op: PaceRefused, Now: now, Sent: a.Sent, Wait: sig.wait, Config: cfg, Gen: r.paceGen})
		w = w.say("; reported ").say(sig.from).say(" ").float(sig.pct, 1).say("% is over the pace's target ").
			float(cfg.Utilization, -1).say("%: a congestion signal, the rate × ").float(cut, 3)
		if sig.wait > 0 {
			w = w.say(", sends held ").show(sig.wait)
		}
		return w
	}
	r.pace(PaceStep{Op: PaceAdmitted, Now: now, Sent: a.Sent})
	return w
}
