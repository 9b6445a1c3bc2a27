package admission

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/retryafter"
)

// Transport is an http.RoundTripper that owns the retries of the requests
// it carries, by its Policy. It is safe for concurrent use; its only shared
// state is the shared cooldown and the SDKRetries count.
type Transport struct {
	next       http.RoundTripper
	p          Policy // validated, defaults applied
	clock      Clock
	cool       cooldown
	gates      gates
	sdkRetries atomic.Int64
}

// New returns a Transport that sends through next (http.DefaultTransport
// when nil) by policy p. A setting out of range is an error that names the
// Policy field: errors.As it against interface{ Field() string }.
func New(next http.RoundTripper, p Policy) (*Transport, error) {
	p, err := p.validate()
	if err != nil {
		return nil, err
	}
	if next == nil {
		next = http.DefaultTransport
	}
	t := &Transport{next: next, p: p, clock: p.Clock, gates: newGates(&p)}
	if t.clock == nil {
		t.clock = runtimeClock{}
	}
	return t, nil
}

// SDKRetries is the number of requests let through although an SDK marked
// them as its own retries (Policy.AllowSDKRetries): each is a sign of a
// second retry owner above this one.
func (t *Transport) SDKRetries() int64 { return t.sdkRetries.Load() }

// CloseIdleConnections closes the idle connections of the next
// RoundTripper if it has such a method, so http.Client.CloseIdleConnections
// reaches through this Transport.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// RoundTrip sends req, and again after each refusal while the Policy
// allows, and returns the outcome: the first response that is no refusal,
// a transport error (not retried: this owner retries admission refusals,
// not network failures), a *GiveUpError (or the last refusal, with
// ReturnLastResponse), or the context's error when it ends during a wait.
// A *DoubleOwnerError or *ReplayError is returned before anything is sent.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := t.clock.Now()
	marked, sdkRetry := sdkRetryCount(req.Header)
	if sdkRetry != 0 {
		if !t.p.AllowSDKRetries {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, &DoubleOwnerError{RetryCount: sdkRetry}
		}
		t.sdkRetries.Add(1)
	}
	body, err := newReplay(req, t.p.MaxAttempts == 1, t.p.MaxReplayBody)
	if err != nil {
		return nil, err
	}
	defer body.close()
	ctx := req.Context()
	r := &request{t: t, orig: req, ctx: ctx, body: body, watch: attemptObserver(ctx),
		marked: marked, markRetries: t.p.MarkRetries, sdkRetry: sdkRetry, lastWait: -1}
	if t.p.Budget > 0 {
		r.deadline = start.Add(t.p.Budget)
	}
	if d, ok := ctx.Deadline(); ok && (r.deadline.IsZero() || d.Before(r.deadline)) {
		r.deadline, r.byContext = d, true
	}
	return r.run(start)
}

// sdkRetryCount reads SDKRetryHeader: whether it is present, and the retry
// number it gives: 0 for a first attempt, -1 for a retry of unknown number.
// Only plain decimal digits are a number; anything else (a sign, a
// fraction, a value past int64, junk) is no proof of a first attempt, so
// it counts as a retry. Of several values, the highest counts.
func sdkRetryCount(h http.Header) (marked bool, n int) {
	vs := h.Values(SDKRetryHeader)
	for _, v := range vs {
		c := plainCount(strings.TrimSpace(v))
		if c < 0 {
			return true, -1
		}
		n = max(n, c)
	}
	return len(vs) > 0, n
}

// plainCount is v as a non-negative number of plain decimal digits, or -1.
func plainCount(v string) int {
	if v == "" || strings.TrimLeft(v, "0123456789") != "" {
		return -1
	}
	n, err := strconv.Atoi(v)
	if err != nil { // past the int range
		return -1
	}
	return n
}

// request is one RoundTrip: its attempts, budget and observers.
type request struct {
	t         *Transport
	orig      *http.Request
	ctx       context.Context
	body      *replay
	watch     func(Attempt)
	deadline  time.Time // the budget's end; zero when there is none
	byContext bool      // the deadline is the context's

	marked bool // the request carries SDKRetryHeader
	// markRetries: Policy.MarkRetries
	markRetries bool
	sdkRetry    int // its value: -1 when it is no plain number

	redirected bool
	lastStatus int           // the last refusal's status
	lastWait   time.Duration // the last refusal's advised wait, -1 if none

	prevBackoff time.Duration // the ChainedBackoff's last wait for this request
	retried     bool          // the Gates allowed a retry of this request (Answer.Retried)
	paceGen     uint64        // the count of cuts the last paced attempt's slot was taken under

	// arena holds the parts of the attempts' Reasons (words, seal), at
	// first in room.
	arena []part
	room  [roomParts]part
}

func (r *request) run(start time.Time) (*http.Response, error) {
	planned, toFallback := start, false
	for n := 1; ; n++ {
		a := &Attempt{Planned: planned}
		a.Attempt, a.Fallback, a.Wait, a.WaitSource = n, toFallback, -1, results.WaitNone

		// The cooldown and the pace are the primary target's: the
		// fallback is not held.
		if !toFallback {
			refused, err := r.gates(a)
			switch {
			case err != nil:
				return nil, err
			case refused && a.Action == ActionGiveUp:
				return nil, r.gaveUp(a)
			case refused:
				planned, toFallback = a.Done, true
				continue
			}
		}

		// Nothing goes on a context already ended: a redirect follows
		// its refusal at once, with no wait to cut.
		if r.ctx.Err() != nil {
			return nil, r.canceled(a, reasonEndedBefore)
		}
		resp, err := r.send(a)
		if err != nil || a.Action == ActionDone {
			return resp, err
		}
		switch a.Action {
		case ActionGiveUp:
			if r.t.p.ReturnLastResponse {
				return resp, nil
			}
			return nil, r.gaveUp(a)
		case ActionRedirect:
			planned, toFallback = a.Done, true
		case ActionSleep:
			planned = a.Done.Add(a.Slept)
			if !sleepUntil(r.ctx, r.t.clock, planned) {
				next := &Attempt{Planned: planned}
				next.Attempt, next.Fallback, next.Wait, next.WaitSource = n+1, toFallback, -1, results.WaitNone
				return nil, r.canceled(next, reasonEndedInWait)
			}
		}
	}
}

// gates holds attempt a for the shared cooldown, then asks the Gates
// (Policy.Throttle, Pace, Adaptive, Gates: see newGates) in turn, waiting
// as each says; refused is true when one refused it locally (a.Action
// says what follows, already observed).
func (r *request) gates(a *Attempt) (refused bool, err error) {
	if r.t.p.SharedCooldown {
		if refused, err := r.hold(a); refused || err != nil {
			return refused, err
		}
	}
	g := r.t.gates
	if refused, err := r.admit(a, g.all[:g.early]); refused || err != nil {
		return refused, err
	}
	if r.t.p.Pace != nil {
		if refused, err := r.paced(a); refused || err != nil {
			return refused, err
		}
	}
	return r.admit(a, g.all[g.early:])
}

// send sends attempt a and decides what follows. For a refusal it returns
// the response, its body drained and closed unless it is to be returned
// (give-up with ReturnLastResponse); a.Action says what follows.
func (r *request) send(a *Attempt) (*http.Response, error) {
	req, class, err := r.build(a.Attempt, a.Fallback)
	if err != nil {
		a.Decision.Err, a.Err, a.Action, a.Done = class, err, ActionDone, r.t.clock.Now()
		a.Reason = reasonNotBuilt
		r.emit(a)
		return nil, err
	}
	a.Sent = r.t.clock.Now()
	resp, err := r.t.next.RoundTrip(req)
	now := r.t.clock.Now()
	if err == nil && resp == nil {
		// As http.Client does: a RoundTripper must return one or the other.
		err = fmt.Errorf("admission: RoundTripper implementation (%T) returned a nil *Response with a nil error", r.t.next)
	}
	if err != nil {
		a.Decision.Err, a.Err, a.Action, a.Done = errClass(err), err, ActionDone, now
		a.Reason = reasonNoResponse
		r.emit(a)
		return nil, err
	}
	a.Status, a.Header, a.Headers = resp.StatusCode, resp.Header, now
	// A refusal's body may hold advice (Gemini's RetryInfo): it is read
	// before the decision, bounded in size and by what is left of the
	// budget, and kept for the caller. The decision is on the time the
	// read ended: a slow body spends the budget as a slow header does.
	// Any other response's body is the caller's alone, unread.
	if slices.Contains(r.t.p.Statuses, resp.StatusCode) {
		within, bounded := r.left(now)
		switch {
		case !bounded:
			within = -1 // bounded by drainLimit only
		case within < 0:
			within = 0
		}
		if _, runtime := r.t.clock.(runtimeClock); !runtime {
			// The read's timer is on the runtime clock: with another
			// Clock the decision is still on the Clock's time after it.
			within = -1
		}
		a.Body = peekBody(resp, within)
		now = r.t.clock.Now()
	}
	read := retryafter.FromResponse(resp.StatusCode, resp.Header, a.Body, now)
	advice := read.Wait
	advised, usable := advice.Duration()
	a.WaitSource = advice.Source
	if usable {
		a.Wait = advised
	}
	if notOne, refused := r.t.refusal(resp.StatusCode, usable); !refused {
		note := r.answered(a, now, read, false)
		a.Action, a.Reason = ActionDone, r.seal(r.words().say("status ").num(resp.StatusCode).say(notOne).then(note))
		r.emit(a)
		return resp, nil
	}
	if usable && !a.Fallback && r.t.p.SharedCooldown {
		r.extendCooldown(now.Add(advised), advice.Source)
	}
	note := r.answered(a, now, read, true)
	r.lastStatus, r.lastWait = resp.StatusCode, a.Wait
	action, slept, why := r.decide(a, r.words(), advised, usable, now)
	a.Action, a.Slept, a.Reason = action, slept, r.seal(why.then(note))
	if a.Action == ActionRedirect {
		r.redirected = true
	}
	if a.Action != ActionGiveUp || !r.t.p.ReturnLastResponse {
		drain(resp.Body)
		a.Done = r.t.clock.Now()
	}
	r.emit(a)
	return resp, nil
}

// build makes the request for attempt n: the original for a first attempt
// whose body is the original's, else a copy with a fresh body; through
// Policy.Fallback for the fallback. On error, class is the Decision's Err.
func (r *request) build(n int, toFallback bool) (req *http.Request, class string, err error) {
	body, err := r.body.next()
	if err != nil {
		return nil, ClassTransport, fmt.Errorf("admission: replay the request body: %w", err)
	}
	if body == nil && r.orig.Body == http.NoBody {
		body = http.NoBody
	}
	req = r.orig
	renumber := r.marked && r.markRetries && n > 1 && r.sdkRetry >= 0
	switch {
	case toFallback || renumber:
		// Policy.Fallback may change anything, and a renumbered retry
		// changes its header: each gets a copy of its own.
		req = r.orig.Clone(r.ctx)
	case n > 1 || body != r.orig.Body:
		// The same request with a fresh body: a RoundTripper does not
		// change the request it is given, so the copy shares the
		// original's header and URL (net/http's WithContext does too).
		req = r.orig.WithContext(r.ctx)
	}
	if req != r.orig {
		req.Body = body
		if r.body.get != nil {
			req.GetBody = r.body.get
		}
		// With MarkRetries a retry says which retry it is, as the SDKs'
		// own do, so that an owner below this one (or the server) sees it.
		// A count of unknown number goes on unchanged; a known one is
		// added in uint64, which holds any int64 plus MaxAttempts.
		if renumber {
			req.Header.Set(SDKRetryHeader, strconv.FormatUint(uint64(r.sdkRetry)+uint64(n-1), 10))
		}
	}
	if !toFallback {
		return req, "", nil
	}
	fb, err := r.t.p.Fallback(req)
	if err == nil && fb == nil {
		err = errors.New("it returned no request")
	}
	if err != nil || fb.Body != body {
		if body != nil {
			body.Close()
		}
	}
	if err != nil {
		return nil, ClassFallback, fmt.Errorf("admission: Fallback: %w", err)
	}
	if fb.Context() != r.ctx {
		fb = fb.WithContext(r.ctx)
	}
	return fb, "", nil
}

// hold waits out the shared cooldown before an attempt to the primary
// target. When the cooldown does not fit the budget (or MaxWait), the
// attempt is refused locally, not sent: refused is true and a.Action says
// redirect or give-up, already observed.
func (r *request) hold(a *Attempt) (refused bool, err error) {
	now := r.t.clock.Now()
	left, source := r.cooldownLeft(now)
	if left <= 0 {
		return false, nil
	}
	h := r.t.jitter(left)
	budget, bounded := r.left(now)
	overMax := r.t.p.MaxWait > 0 && left > r.t.p.MaxWait
	if !overMax && (!bounded || h < budget) {
		ok := sleepUntil(r.ctx, r.t.clock, now.Add(h))
		a.Held = r.t.clock.Now().Sub(now)
		if !ok {
			return false, r.canceled(a, reasonEndedInCool)
		}
		return false, nil
	}
	a.Decision.Err, a.Wait, a.WaitSource = ClassCooldown, left, source
	r.lastWait = left
	why := r.words().say("the shared cooldown's ").show(left)
	switch {
	case a.Attempt >= r.t.p.MaxAttempts:
		a.Action, why = ActionGiveUp, why.say(" held attempt ").num(a.Attempt).say(" of ").num(r.t.p.MaxAttempts).say(" (MaxAttempts); give up")
	case overMax:
		a.Action, a.Slept, why = r.elsewhere(why.say(" is over MaxWait ").show(r.t.p.MaxWait), budget, bounded)
	case h != left:
		a.Action, a.Slept, why = r.elsewhere(r.leftPhrase(why.say(", jittered to ").show(h).say(", does not fit"), budget), budget, bounded)
	default:
		a.Action, a.Slept, why = r.elsewhere(r.leftPhrase(why.say(", does not fit"), budget), budget, bounded)
	}
	a.Reason = r.seal(why)
	if a.Action == ActionRedirect {
		r.redirected = true
	}
	a.Done = now
	r.emit(a)
	return true, nil
}

// paced waits for the Pace's send slot before an attempt to the primary
// target. When the slot does not come within the budget, the attempt is
// not sent: refused is true and a.Action says redirect or give-up, already
// observed.
func (r *request) paced(a *Attempt) (refused bool, err error) {
	start := r.t.clock.Now()
	for retake := 1; ; retake++ {
		now := r.t.clock.Now()
		res := r.pace(PaceStep{Op: PaceReserve, Now: now, Deadline: r.deadline})
		at := res.At
		if !res.OK {
			return true, r.paceRefused(a, now, at)
		}
		if at.After(now) {
			slept := sleepUntil(r.ctx, r.t.clock, at)
			a.Held = r.t.clock.Now().Sub(start)
			if !slept {
				return false, r.canceled(a, reasonEndedInPace)
			}
		}
		// A cut while this attempt waited: its slot was spaced at the old
		// rate, so it takes one at the new. A shared state that voids
		// every slot does not hold it for ever: past paceRetakes it goes
		// in the slot it waited for.
		if r.pace(PaceStep{Op: PaceConfirm, Gen: res.Gen, At: at}).OK || retake == paceRetakes {
			r.paceGen = res.Gen
			return false, nil
		}
	}
}

// paceRetakes bounds the slots one attempt takes: a cut while it waits
// voids its slot, and one cut per congestion event makes more than a few
// in a row rare.
const paceRetakes = 16

// paceRefused refuses attempt a locally at now: its next send slot, at,
// does not come within the budget.
func (r *request) paceRefused(a *Attempt, now, at time.Time) error {
	left, _ := r.left(now)
	r.refuseLocally(a, now, ClassPaced, r.leftPhrase(r.words().say("the pace's next send slot, in ").show(at.Sub(now)).say(", and the answer after it do not fit"), left))
	return nil
}

// refuseLocally ends attempt a, not sent, at now, for why, with error
// class class: the request gives up when it was its last attempt, else it
// goes elsewhere by the usual rule.
func (r *request) refuseLocally(a *Attempt, now time.Time, class string, why words) {
	left, bounded := r.left(now)
	a.Decision.Err = class
	if a.Attempt >= r.t.p.MaxAttempts {
		a.Action, why = ActionGiveUp, why.say("; give up")
	} else {
		a.Action, a.Slept, why = r.elsewhere(why, left, bounded)
	}
	a.Reason = r.seal(why)
	if a.Action == ActionRedirect {
		r.redirected = true
	}
	a.Done = now
	r.emit(a)
}

// decide applies the rule to a refusal of attempt a that arrived at now:
// sleep when the wait fits what is left of the budget (and MaxWait), else
// redirect once to the fallback, else give up. Why it decided goes on w.
func (r *request) decide(a *Attempt, w words, advised time.Duration, usable bool, now time.Time) (Action, time.Duration, words) {
	p, n := &r.t.p, a.Attempt
	if n >= p.MaxAttempts {
		return ActionGiveUp, 0, w.say("attempt ").num(n).say(" of ").num(p.MaxAttempts).say(" (MaxAttempts) refused; give up")
	}
	left, bounded := r.left(now)
	// A spent budget sends nothing more, RedirectFirst's redirect neither.
	if p.RedirectFirst && !r.redirected && (!bounded || left > 0) {
		return ActionRedirect, 0, w.say("the first refusal redirects to the fallback at once (RedirectFirst)")
	}
	wait, why, sleepable := r.wait(w, n, advised, usable, now)
	if !sleepable {
		return r.elsewhere(why, left, bounded)
	}
	ruleLeft := time.Duration(-1)
	if bounded {
		ruleLeft = max(left, 0)
	}
	if wait, sleepable = r.ruled(a, wait, ruleLeft, &why); !sleepable {
		return r.elsewhere(why, left, bounded)
	}
	if bounded && wait >= left {
		return r.elsewhere(r.leftPhrase(why.say(", does not fit"), left), left, bounded)
	}
	if bounded {
		why = r.leftPhrase(why.say(", fits"), left)
	} else {
		why = why.say("; no budget")
	}
	why, ok := r.retryAllowed(n, why)
	if !ok {
		return r.elsewhere(why, left, bounded)
	}
	return ActionSleep, wait, why.say("; sleep")
}

// wait is the wait before retry n and how it came about, on w; sleepable
// is false for an advised wait over MaxWait under GiveUpOverMaxWait.
func (r *request) wait(w words, n int, advised time.Duration, usable bool, now time.Time) (wait time.Duration, why words, sleepable bool) {
	p := &r.t.p
	switch {
	case !usable:
		wait = r.backoff(n)
		return wait, w.say("no usable advice; backoff ").show(wait), true
	case p.Advice == IgnoreAdvice:
		wait = r.backoff(n)
		return wait, w.say("advised ").show(advised).say(", ignored (IgnoreAdvice); backoff ").show(wait), true
	case p.MaxWait > 0 && advised > p.MaxWait && p.OverMaxWait == BackoffOverMaxWait:
		wait = r.backoff(n)
		return wait, w.say("advised ").show(advised).say(" is over MaxWait ").show(p.MaxWait).say("; backoff ").show(wait), true
	case p.MaxWait > 0 && advised > p.MaxWait:
		return 0, w.say("advised ").show(advised).say(" is over MaxWait ").show(p.MaxWait), false
	}
	wait = r.t.jitter(advised)
	why = w.say("advised ").show(advised)
	if wait != advised {
		why = why.say(", jittered to ").show(wait)
	}
	if p.Advice == FloorAdvice {
		b := r.backoff(n)
		switch {
		case b > wait:
			wait = b
			why = why.say(", under the backoff ").show(b).say(" (FloorAdvice)")
		case p.MaxAboveBackoff > 0 && wait > b+p.MaxAboveBackoff:
			wait = b + p.MaxAboveBackoff
			why = why.say(", cut to the backoff ").show(b).say(" + ").show(p.MaxAboveBackoff).say(" (MaxAboveBackoff)")
		}
	}
	if p.Slots != nil {
		if slot := r.slot(now, wait); slot != wait {
			wait = slot
			why = why.say(", moved to the next free slot, ").show(slot)
		}
	}
	return wait, why, true
}

// elsewhere is the rule once the wait is not slept: redirect to the
// fallback if there is one, this request has not been there yet and some
// budget is left; else give up.
func (r *request) elsewhere(why words, left time.Duration, bounded bool) (Action, time.Duration, words) {
	switch {
	case r.t.p.Fallback == nil:
		return ActionGiveUp, 0, why.say("; no fallback; give up")
	case r.redirected:
		return ActionGiveUp, 0, why.say("; the fallback was already tried; give up")
	case bounded && left <= 0:
		return ActionGiveUp, 0, why.say("; the budget is spent; give up")
	}
	return ActionRedirect, 0, why.say("; redirect to the fallback")
}

// left is what remains of the budget at now; bounded is false when there
// is no budget.
func (r *request) left(now time.Time) (left time.Duration, bounded bool) {
	if r.deadline.IsZero() {
		return 0, false
	}
	return r.deadline.Sub(now), true
}

// leftPhrase puts left, what is left of the budget, in words on w.
func (r *request) leftPhrase(w words, left time.Duration) words {
	w = w.say(" the ").show(max(left, 0))
	if r.byContext {
		return w.say(" left before the context's deadline")
	}
	return w.say(" left of the budget")
}

// canceled ends the request because its context ended before attempt a
// was sent.
func (r *request) canceled(a *Attempt, reason Reason) error {
	err := r.ctx.Err()
	a.Decision.Err, a.Err, a.Action, a.Reason, a.Done = errClass(err), err, ActionDone, reason, r.t.clock.Now()
	r.emit(a)
	return err
}

func (r *request) gaveUp(a *Attempt) error {
	return &GiveUpError{LastWait: r.lastWait, LastStatus: r.lastStatus, Attempts: a.Attempt, Reason: a.Reason}
}

// emit hands an attempt to the observers.
func (r *request) emit(a *Attempt) {
	if r.t.p.Observe != nil {
		r.t.p.Observe(a.Decision)
	}
	if r.watch != nil {
		r.watch(*a)
	}
}

// refusal reports whether a response is an admission refusal this owner
// retries, and if not, says why in a Decision's words after "status N".
func (t *Transport) refusal(status int, usableAdvice bool) (notOne string, refused bool) {
	switch {
	case !slices.Contains(t.p.Statuses, status):
		return " is not a refusal this owner retries; done", false
	case status != http.StatusTooManyRequests && !usableAdvice:
		return " without a usable advised wait is an outage, not an admission refusal; done", false
	}
	return "", true
}

// jitter stretches d by a factor drawn from [1, 1+Jitter]: never shorter.
func (t *Transport) jitter(d time.Duration) time.Duration {
	if t.p.Jitter == 0 || d <= 0 {
		return d
	}
	return d + time.Duration(float64(d)*t.p.Jitter*t.unit())
}

// backoff is the wait before the request's retry number retry: the
// ChainedBackoff, fed its last wait for this request, when there is one.
func (r *request) backoff(retry int) time.Duration {
	if c := r.t.p.ChainedBackoff; c != nil {
		r.prevBackoff = max(c(retry, r.prevBackoff, r.t.unit), 0)
		return r.prevBackoff
	}
	return max(r.t.p.Backoff(retry, r.t.unit), 0)
}

// unit draws from [0, 1) with Policy.Rand, kept in range whatever it returns.
func (t *Transport) unit() float64 {
	u := rand.Float64()
	if t.p.Rand != nil {
		u = t.p.Rand()
	}
	switch {
	case !(u >= 0): // negative or NaN
		return 0
	case u >= 1:
		return math.Nextafter(1, 0)
	}
	return u
}

// errClass is an error's class for Decision.Err: never its message.
func errClass(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return ClassCanceled
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return ClassTimeout
	}
	return ClassTransport
}

// show formats a duration for a Reason: to the millisecond from a second
// up, to the microsecond from a millisecond up.
func show(d time.Duration) string {
	switch {
	case d >= time.Second:
		d = d.Round(time.Millisecond)
	case d >= time.Millisecond:
		d = d.Round(time.Microsecond)
	}
	return d.String()
}
