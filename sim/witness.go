package sim

import (
	"hash/maphash"
	"math"
	"net/http"
	"strconv"
	"time"
)

// MaxAdvisedWaits bounds the witness's memory: the advised waits of the
// last MaxAdvisedWaits refusals are remembered, older ones are forgotten
// (and counted in Stats.AdvisedWaitsEvicted), so a retry that comes back
// after that many newer refusals counts as neither early nor on time.
// Full, the table holds about 9 MB (a refusal keeps every field's wait).
const MaxAdvisedWaits = 1 << 16

// witnessSlack is how far before its deadline a retry may arrive and
// still be on time. The scaled clock converts wall time to model time in
// floating point, so after days at a high TimeScale a client that waits
// exactly the advised wall time can land tens of nanoseconds short of its
// deadline in model time (TestWitnessSlackCoversTheScaledClock); a
// microsecond covers that and is far below the header's millisecond.
const witnessSlack = time.Microsecond

// sdkRetryHeader is what the OpenAI and Anthropic SDKs set on their own
// retries: the number of the retry, 0 (or absent) on a first attempt.
const sdkRetryHeader = "X-Stainless-Retry-Count"

// retryMarkers are the headers a client sets once per call and repeats
// on every retry of that call, so two calls with the same body are told
// apart: Idempotency-Key (the IETF draft's header, which the Stainless
// SDKs send when their generator enables it) and x-ms-client-request-id
// (set once per operation by the Azure SDKs' request-id policy, before
// their retry policy). The first one present is the request's marker.
var retryMarkers = [...]string{"Idempotency-Key", "X-Ms-Client-Request-Id"}

// markerSalt keeps a marker's hash apart from a body's with the same bytes.
const markerSalt = 0x6d61726b65722121

// retryID is what makes two requests "the same request": the same key and,
// when the client marks its calls (retryMarkers), the same marker, else
// the same body; sent to the same deployment; hashed. Clients and SDKs
// resend the body they were refused, and ptuprobe's prompts are unique
// per request; a marker tells apart identical bodies that several callers
// send. The deployment is part of it because an advised wait is about the
// deployment that gave it: the same body redirected to a fallback
// deployment is not a retry of it.
type retryID struct {
	key  uint64 // keyHash of the key
	body uint64 // the marker's or the body's hash, mixed with the deployment (to)
}

// to is the id of the same body sent to deployment t: its hash mixed with
// a constant per deployment (none for the PTU deployment and the gateway),
// which keeps it as uniform as the body's own hash.
func (id retryID) to(t target) retryID {
	id.body ^= uint64(t) * 0x9e3779b97f4a7c15
	return id
}

// visit is one request as the witness sees it.
type visit struct {
	id       retryID
	sdkRetry bool      // X-Stainless-Retry-Count > 0
	marked   bool      // identified by a marker, not by its body
	at       time.Time // model time of arrival, before any injected delay
}

// newVisit identifies a request by its key and its marker or its body
// (bodySum, the body's hash on bodySeed); the deployment and the arrival
// time are filled in later.
func (s *Server) newVisit(key string, bodySum uint64, h http.Header) visit {
	v := visit{id: retryID{key: keyHash(key)}, sdkRetry: declaresSDKRetry(h)}
	if m := retryMarker(h); m != "" {
		v.marked = true
		v.id.body = maphash.String(s.bodySeed, m) ^ markerSalt
	} else {
		v.id.body = bodySum
	}
	return v
}

// retryMarker is the request's marker, "" when it has none.
func retryMarker(h http.Header) string {
	for _, name := range retryMarkers {
		if v := field(h, name); v != "" {
			return v
		}
	}
	return ""
}

// declaresSDKRetry reports whether the request says it is an SDK's own
// retry: X-Stainless-Retry-Count holds a decimal integer > 0.
func declaresSDKRetry(h http.Header) bool {
	v := field(h, sdkRetryHeader)
	if v == "" {
		return false
	}
	n, err := strconv.ParseUint(v, 10, 64)
	return err == nil && n > 0
}

// comeback is how a request relates to an earlier refusal of the same
// request.
type comeback int

const (
	firstVisit     comeback = iota // no advised wait remembered for it
	cameBackEarly                  // before the wait it was advised had passed
	cameBackOnTime                 // at or after it
)

func (c comeback) String() string {
	return [...]string{"a first visit", "early", "on time"}[c]
}

// advisedWait is one remembered refusal: the model time until which the
// client was told to wait and the refusal's own time, as offsets from the
// table's epoch (8 bytes each where a time.Time takes 24; Sub keeps the
// monotonic reading), the ring slot that holds it, and the waits its
// fields wrote.
type advisedWait struct {
	until, at time.Duration
	slot      int32
	chain     chain
	fields    fieldWaits
}

// fieldWaits are the waits one refusal wrote, field by field, as the
// client read them: each field's source and its wall milliseconds (at
// most 24 days; longer waits are kept as that). The herd is measured
// against each (latenessLog): a client honours one field, and
// another field's rounding (retry-after's whole seconds beside a
// millisecond reset) is not its jitter.
type fieldWaits struct {
	ms  [len(answer{}.advice)]int32
	src [len(answer{}.advice)]adviceSource
	n   uint8
}

// fieldsOf are the waits answer a wrote.
func fieldsOf(a *answer) fieldWaits {
	var f fieldWaits
	for i, ad := range a.advice[:a.nAdvice] {
		f.ms[i], f.src[i] = int32(min(ad.wallMS, math.MaxInt32)), ad.source
	}
	f.n = uint8(a.nAdvice)
	return f
}

// chain is what the witness knows of one call's refusals in a row: how
// many of its retries waited (came back more than QuickRetryWindow after
// their refusal), the longest wait of those that came back early (a
// backoff of the client's own, which did not read the advice), and
// whether it has shown two retry owners (stacked).
type chain struct {
	waited    uint16
	stacked   bool
	ownWaitMS int32 // the longest early waited retry's wait, in wall ms
}

// advisedWaits is the witness's memory: retryID → the end of the wait its
// last refusal advised. It is bounded by max through a ring of the last
// max refusals in the order they were remembered: remembering one more
// overwrites the oldest slot, and forgets that slot's entry if the entry
// still lives there (its request has not come back, nor been refused
// again since). An entry is forgotten too when its request comes back.
// Full, at MaxAdvisedWaits, it holds about 9 MB.
type advisedWaits struct {
	max     int
	epoch   time.Time // the first refusal's time; until is measured from it
	byID    map[retryID]advisedWait
	ring    []retryID
	next    int    // the oldest slot, overwritten next once the ring is full
	evicted uint64 // entries forgotten unanswered to keep the bound
}

// remember records that the request id, refused at at, was told to wait
// until until, and the chain of refusals it continues. (The witness
// recalls a request before it remembers its refusal, so an id is never
// remembered twice.)
func (t *advisedWaits) remember(id retryID, at, until time.Time, c chain, f fieldWaits) {
	if t.byID == nil {
		t.byID = make(map[retryID]advisedWait)
		t.epoch = at
	}
	slot := len(t.ring)
	if slot < t.max {
		if slot == cap(t.ring) { // grow by doubling, never past max
			t.ring = append(make([]retryID, 0, min(t.max, 2*slot+16)), t.ring...)
		}
		t.ring = append(t.ring, id)
	} else {
		slot = t.next
		old := t.ring[slot]
		if w, ok := t.byID[old]; ok && int(w.slot) == slot {
			delete(t.byID, old)
			t.evicted++
		}
		t.ring[slot] = id
		t.next = (slot + 1) % t.max
	}
	t.byID[id] = advisedWait{until: until.Sub(t.epoch), at: at.Sub(t.epoch), slot: int32(slot), chain: c, fields: f}
}

// recalled is how a request relates to its last remembered refusal:
// whether it came back early or on time, how long after its deadline
// (late) and after the refusal (since), in model time, the chain of
// refusals it answers and the waits that refusal wrote.
type recalled struct {
	comeback
	late, since time.Duration
	chain       chain
	fields      fieldWaits
}

// recall says how the request id arriving at at relates to its last
// remembered refusal, and forgets that refusal: one refusal is answered
// by one comeback.
func (t *advisedWaits) recall(id retryID, at time.Time) recalled {
	w, ok := t.byID[id]
	if !ok {
		return recalled{}
	}
	delete(t.byID, id)
	r := recalled{comeback: cameBackOnTime, late: at.Sub(t.epoch) - w.until, since: at.Sub(t.epoch) - w.at, chain: w.chain, fields: w.fields}
	if r.late+witnessSlack < 0 {
		r.comeback = cameBackEarly
	}
	return r
}

// QuickRetryWindow is how soon after its refusal, in wall time, a retry
// that came back early counts as back at once (a loop or a gateway that
// repeats the request without waiting); a retry later than it waited.
// Loopback round trips of a busy machine stay well within it, and the
// SDKs' shortest backoff (0.375 s) well beyond.
const QuickRetryWindow = 50 * time.Millisecond

// witness counts what one request the model decided on says about its
// client: whether it is a retry that came back early or on time (and how
// late, for the herd; past the budget), whether it declares itself an
// SDK retry or is an undeclared one. When its answer a advises
// a wait, the soonest of its fields (in wall milliseconds) is remembered
// from now, in model time, and every field's wait beside it. ks is nil
// for a key the table has no room for: totals only. Called with s.mu
// held.
func (s *Server) witness(ks *keyState, v visit, now time.Time, a *answer) {
	r := s.advised.recall(v.id, v.at)
	switch r.comeback {
	case cameBackEarly:
		s.n.earlyReturns++
		if ks != nil {
			ks.earlyReturns++
		}
	case cameBackOnTime:
		s.n.retriesOnTime++
		if ks != nil {
			ks.retriesOnTime++
		}
		s.late.note(ks, r, s.cfg.TimeScale)
	}
	// Past the budget counts early or on time: a retry back after its
	// budget and before its advice broke both rules.
	if b := s.cfg.WitnessBudget; b > 0 && r.comeback != firstVisit && r.since > s.modelTime(b.Milliseconds()) {
		s.n.overBudget++
	}
	if v.sdkRetry {
		s.n.sdkRetries++
		if ks != nil {
			ks.sdkRetries++
		}
	}
	if r.comeback != firstVisit || v.sdkRetry {
		s.n.retries++
	}
	switch {
	case r.comeback == firstVisit:
	case v.marked:
		s.n.markedRetries++
	case !v.sdkRetry:
		s.n.undeclaredRetries++
	}
	c := s.follow(r)
	if ms := a.soonest(); ms > 0 {
		s.advised.remember(v.id, now, now.Add(s.modelTime(ms)), c, fieldsOf(a))
	}
}

// follow is the chain of refusals a request continues: its recalled
// chain with this comeback added to it (an empty chain for a first
// visit). It counts the most waited retries of one call
// (Stats.MaxCallRetries) and the calls that show two retry owners
// interleaved on them (Stats.MixedCalls, stackedRetry). Called with s.mu
// held.
func (s *Server) follow(r recalled) chain {
	c := r.chain
	if r.comeback == firstVisit {
		return c
	}
	sinceMS := s.wallMS(r.since)
	if stackedRetry(c, r.comeback, sinceMS) && !c.stacked {
		c.stacked = true
		s.n.mixedCalls++
	}
	if sinceMS > QuickRetryWindow.Milliseconds() {
		c.waited = min(c.waited+1, math.MaxUint16)
		if r.comeback == cameBackEarly {
			c.ownWaitMS = max(c.ownWaitMS, int32(min(sinceMS, math.MaxInt32)))
		}
	}
	s.n.maxCallRetries = max(s.n.maxCallRetries, uint64(c.waited))
	return c
}

// stackedRetry reports whether a retry that came back sinceMS (wall)
// after its refusal shows a second retry owner on its call, whose
// refusals in a row so far are c. One owner's retries follow one
// schedule: the advice, or a backoff of its own that grows or stays
// (exponential with a jitter of ±25% or ×[1, 2], constant), perhaps
// starting at once (urllib3's first backoff is 0 s). Two owners nested
// interleave theirs:
//
//   - a retry back at once (early, within QuickRetryWindow) after a retry
//     of the call that waited: an inner owner (a gateway, an application
//     loop) repeating at once what the other waited out;
//   - an early retry that waited less than half the longest early retry
//     of the call before it: a backoff that starts over, bursts of an
//     inner owner's retries between the outer owner's waits.
//
// What neither sees: two owners whose waits keep growing together, and
// a single owner whose backoff is drawn from all of [0, cap] (full
// jitter) that falls under half an earlier wait reads as two.
func stackedRetry(c chain, came comeback, sinceMS int64) bool {
	if came != cameBackEarly {
		return false
	}
	if sinceMS <= QuickRetryWindow.Milliseconds() {
		return c.waited > 0
	}
	return c.ownWaitMS > 0 && 2*sinceMS < int64(c.ownWaitMS)
}

// modelTime converts whole wall-clock milliseconds, as a header carries
// them, to model time: the inverse of wallMS, without its rounding.
func (s *Server) modelTime(ms int64) time.Duration {
	return time.Duration(float64(ms) * float64(time.Millisecond) * s.cfg.TimeScale)
}
