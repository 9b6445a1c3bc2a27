package admission

import (
	"net/http"
	"time"
)

// A Gate is an algorithm a retry owner consults before it sends and
// teaches with what comes back: a client-side throttle, a retry quota, a
// token bucket. The Transport asks it before each attempt to the primary
// target (Admit) and before it sleeps towards a retry there (Retry), and
// tells it every answer of the primary target (Learn); the Gate keeps its
// own state, and the Transport does all the waiting, the budget's
// arithmetic, the redirect and the Decisions. Its shape follows
// go-concurrency-limits' core.Limit: the owner asks the algorithm and
// feeds it samples, so an algorithm is one type.
//
// Throttle, RetryQuota and Adaptive are Gates; a Gate of your own goes in
// Policy.Gates. The fallback target passes no Gate and teaches none. A
// Gate is one client's (one Transport's), called on its requests'
// goroutines at once: it must be safe for concurrent use. A method with
// nothing to do returns its zero value (Admission{}, true and "", "").
type Gate interface {
	// Admit is asked before each attempt to the primary target: the zero
	// Admission sends it now; one with At after Ask.Now holds it until
	// then (or refuses it locally when At is not before Ask.Deadline) and
	// asks again; one with Refused refuses it locally.
	Admit(Ask) Admission
	// Retry is asked when a refusal of the primary target is to be
	// retried after a wait that fits the budget (never after a redirect:
	// the fallback's retries are not the Gates'): false refuses the retry
	// (the request redirects or gives up by the usual rule), and the
	// Gates after it are not asked. note, with its own leading "; ", is
	// added to the Decision's Reason either way.
	Retry(Ask) (ok bool, note string)
	// Learn is told each answer of the primary target; note, with its own
	// leading "; ", is added to the answer's Decision's Reason.
	Learn(Answer) (note string)
}

// Ask is what a Gate is asked with.
type Ask struct {
	// Attempt numbers the attempt asked about: 1 for the first; for Retry,
	// the refused one.
	Attempt int
	// Now is the Policy's Clock's time; Deadline is when the request's
	// budget (or its context) ends, zero when nothing bounds it.
	Now, Deadline time.Time
	// Rand returns a number in [0, 1): Policy.Rand's, kept in range.
	Rand func() float64
}

// Admission is a Gate's answer to Admit.
type Admission struct {
	// At, when after Ask.Now, is when the attempt may go: the Transport
	// waits until then and asks again.
	At time.Time
	// Refused refuses the attempt locally: it is not sent (Decision.Err
	// Class), and the request redirects or gives up as a cooldown refusal
	// does.
	Refused bool
	// Class is Decision.Err for an attempt refused (or not admitted
	// within the budget); "" means ClassGated.
	Class string
	// Why says in plain words (numbers and fixed words: a Decision is safe
	// to log) why the attempt was refused, or what it waits for until At
	// ("the adaptive rate's next token, in 250ms,"); By names the Gate
	// that holds it ("the adaptive rate").
	Why, By string
}

// ClassGated is Decision.Err of an attempt a Gate of Policy.Gates
// refused locally without naming a class of its own.
const ClassGated = "gated"

// Answer is an answer of the primary target, as a Gate learns it.
type Answer struct {
	Attempt int
	// Sent is when the attempt went; Now is when its answer was read.
	Sent, Now time.Time
	Status    int
	// Refused: an admission refusal (a status of Policy.Statuses that is
	// one), which the Transport may retry.
	Refused bool
	// Wait is the advised wait, -1 when none was usable.
	Wait time.Duration
	// Header is the response's own header: read it, do not change it.
	Header http.Header
	// Retried: a Retry of this request's was allowed, on this target.
	Retried bool
}

// gates are the Transport's Gates in the order it asks them: the
// Policy's Throttle before its Pace, the Adaptive rate, the RetryQuota
// and Policy.Gates after it.
type gates struct {
	all   []Gate
	early int // all[:early] are asked before the Pace
}

func newGates(p *Policy) gates {
	var g gates
	if p.Throttle != nil {
		g.all, g.early = append(g.all, p.Throttle), 1
	}
	if p.Adaptive != nil {
		g.all = append(g.all, p.Adaptive)
	}
	if p.RetryQuota != nil {
		g.all = append(g.all, p.RetryQuota)
	}
	g.all = append(g.all, p.Gates...)
	return g
}

// ask is an Ask for attempt n at the Clock's now.
func (r *request) ask(n int) Ask {
	return Ask{Attempt: n, Now: r.t.clock.Now(), Deadline: r.deadline, Rand: r.t.unit}
}

// admit asks gs to admit attempt a, waiting as each says; refused is true
// when one refused it locally (a.Action says what follows, observed).
func (r *request) admit(a *Attempt, gs []Gate) (refused bool, err error) {
	for _, g := range gs {
		if refused, err := r.admitOne(a, g); refused || err != nil {
			return refused, err
		}
	}
	return false, nil
}

func (r *request) admitOne(a *Attempt, g Gate) (refused bool, err error) {
	start, waited := r.t.clock.Now(), false
	for {
		ask := r.ask(a.Attempt)
		v := g.Admit(ask)
		class := v.Class
		if class == "" {
			class = ClassGated
		}
		switch {
		case v.Refused:
			r.refuseLocally(a, ask.Now, class, r.words().say(v.Why))
			return true, nil
		case !v.At.After(ask.Now):
			if waited {
				a.Held += ask.Now.Sub(start)
			}
			return false, nil
		case !ask.Deadline.IsZero() && !v.At.Before(ask.Deadline):
			left, _ := r.left(ask.Now)
			r.refuseLocally(a, ask.Now, class, r.leftPhrase(r.words().say(v.Why).say(" does not come within"), left))
			return true, nil
		}
		waited = true
		if !sleepUntil(r.ctx, r.t.clock, v.At) {
			a.Held += r.t.clock.Now().Sub(start)
			return false, r.canceled(a, r.seal(r.words().say("the context ended while ").say(v.By).say(" held this attempt; not sent")))
		}
	}
}

// retryAllowed asks every Gate whether a refusal of attempt n may be
// retried: none are asked after a redirect (the fallback's retries are
// not theirs). What they said goes on w.
func (r *request) retryAllowed(n int, w words) (words, bool) {
	if r.redirected {
		return w, true
	}
	for _, g := range r.t.gates.all {
		allowed, why := g.Retry(r.ask(n))
		w = w.say(why)
		if !allowed {
			return w, false
		}
	}
	r.retried = true
	return w, true
}

// learn tells every Gate an answer of the primary target; what they said
// goes on w.
func (r *request) learn(a *Attempt, now time.Time, refused bool, w words) words {
	ans := Answer{Attempt: a.Attempt, Sent: a.Sent, Now: now, Status: a.Status, Refused: refused,
		Wait: a.Wait, Header: a.Header, Retried: r.retried}
	for _, g := range r.t.gates.all {
		w = w.say(g.Learn(ans))
	}
	return w
}
