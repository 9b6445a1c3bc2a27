package sim

import (
	"hash/maphash"
	"net/http"
	"strconv"
	"time"
)

// MaxAdvisedWaits bounds the witness's memory: the advised waits of the
// last MaxAdvisedWaits refusals are remembered, older ones are forgotten
// (and counted in Stats.AdvisedWaitsEvicted), so a retry that comes back
// after that many newer refusals counts as neither early nor on time.
// Full, the table holds about 6 MB.
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

// retryID is what makes two requests "the same request": the same key
// and the same body sent to the same deployment, hashed. Clients and SDKs
// resend the body they were refused; ptuprobe's prompts are unique per
// request. The deployment is part of it because an advised wait is about
// the deployment that gave it: the same body redirected to a fallback
// deployment is not a retry of it.
type retryID struct {
	key  uint64 // keyHash of the key
	body uint64 // the body's hash, mixed with the deployment (to)
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
	sdkRetry bool
	at       time.Time // model time of arrival, before any injected delay
}

// newVisit identifies a request by its key and body; the deployment and
// the arrival time are filled in later.
func (s *Server) newVisit(key string, body []byte, h http.Header) visit {
	return visit{
		id:       retryID{key: keyHash(key), body: maphash.Bytes(s.bodySeed, body)},
		sdkRetry: declaresSDKRetry(h),
	}
}

// declaresSDKRetry reports whether the request says it is an SDK's own
// retry: X-Stainless-Retry-Count holds a decimal integer > 0.
func declaresSDKRetry(h http.Header) bool {
	v := h.Get(sdkRetryHeader)
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
// client was told to wait, as an offset from the table's epoch (8 bytes
// where a time.Time takes 24; Sub keeps the monotonic reading), and the
// ring slot that holds it.
type advisedWait struct {
	until time.Duration
	slot  int32
}

// advisedWaits is the witness's memory: retryID → the end of the wait its
// last refusal advised. It is bounded by max through a ring of the last
// max refusals in the order they were remembered: remembering one more
// overwrites the oldest slot, and forgets that slot's entry if the entry
// still lives there (its request has not come back, nor been refused
// again since). An entry is forgotten too when its request comes back.
// Full, at MaxAdvisedWaits, it holds about 6 MB.
type advisedWaits struct {
	max     int
	epoch   time.Time // the first refusal's time; until is measured from it
	byID    map[retryID]advisedWait
	ring    []retryID
	next    int    // the oldest slot, overwritten next once the ring is full
	evicted uint64 // entries forgotten unanswered to keep the bound
}

// remember records that the request id was told, at a refusal, to wait
// until until.
func (t *advisedWaits) remember(id retryID, until time.Time) {
	if t.byID == nil {
		t.byID = make(map[retryID]advisedWait)
		t.epoch = until
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
	t.byID[id] = advisedWait{until: until.Sub(t.epoch), slot: int32(slot)}
}

// recall says how the request id arriving at at relates to its last
// remembered refusal, and forgets that refusal: one refusal is answered
// by one comeback.
func (t *advisedWaits) recall(id retryID, at time.Time) comeback {
	w, ok := t.byID[id]
	if !ok {
		return firstVisit
	}
	delete(t.byID, id)
	if at.Sub(t.epoch)+witnessSlack < w.until {
		return cameBackEarly
	}
	return cameBackOnTime
}

// witness counts what one request the model decided on says about its
// client: whether it is a retry that came back early or on time, and
// whether it declares itself an SDK retry. When it was refused with an
// advised wait of advisedMS wall milliseconds (0: none), that wait is
// remembered from now, in model time. ks is nil for a key the table has
// no room for: totals only. Called with s.mu held.
func (s *Server) witness(ks *keyState, v visit, now time.Time, advisedMS int64) {
	switch s.advised.recall(v.id, v.at) {
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
	}
	if v.sdkRetry {
		s.n.sdkRetries++
		if ks != nil {
			ks.sdkRetries++
		}
	}
	if advisedMS > 0 {
		s.advised.remember(v.id, now.Add(s.modelTime(advisedMS)))
	}
}

// modelTime converts whole wall-clock milliseconds, as a header carries
// them, to model time: the inverse of wallMS, without its rounding.
func (s *Server) modelTime(ms int64) time.Duration {
	return time.Duration(float64(ms) * float64(time.Millisecond) * s.cfg.TimeScale)
}
