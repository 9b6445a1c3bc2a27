package admission

import (
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// The client-side throttling of Google's SRE book, DefaultThrottleConfig's.
const (
	// defaultThrottleK is the book's multiplier: a client sends up to K
	// requests for each one the backend accepts before it rejects any
	// locally ("Handling Overload": K = 2).
	defaultThrottleK = 2
	// defaultThrottleWindow is the history the counts cover: the book's
	// two minutes.
	defaultThrottleWindow = 2 * time.Minute
)

// ThrottleConfig tunes a Throttle. Every field must be set
// (DefaultThrottleConfig gives the book's values).
type ThrottleConfig struct {
	// K is how many requests a client offers per accepted one before it
	// rejects locally, at least 1: lower rejects sooner.
	K float64
	// Window is the trailing history the counts cover, at least a second.
	Window time.Duration
}

// DefaultThrottleConfig is the SRE book's throttling: K 2 over the last
// two minutes.
func DefaultThrottleConfig() ThrottleConfig {
	return ThrottleConfig{K: defaultThrottleK, Window: defaultThrottleWindow}
}

// throttleBuckets is how many buckets the window is counted in: the
// counts age out a sixtieth of the window at a time (2 s of the book's
// two minutes).
const throttleBuckets = 60

// Throttle is client-side adaptive throttling, after the chapter
// "Handling Overload" of Google's Site Reliability Engineering book: a
// client counts, over a trailing window, its requests (attempts offered to
// the backend, those it rejected itself included) and the backend's
// accepts (answers that are not refusals), and before each attempt
// rejects it locally with probability
//
//	max(0, (requests − K × accepts) / (requests + 1))
//
// So a client whose backend accepts everything never rejects; one whose
// backend refuses most rejects most of what it would have sent, at no
// cost to the backend, and still sends enough to see the backend recover.
// Every attempt to the primary target goes through it, retries included,
// as the book's throttling sits below the code that retries; a rejected
// attempt is not sent (Decision.Err ClassThrottled) and the request is
// redirected or given up as a cooldown refusal is.
//
// A Throttle belongs to one client (one Transport: Policy.Throttle); it
// is safe for concurrent use.
type Throttle struct {
	cfg   ThrottleConfig
	width time.Duration // of a bucket

	mu      sync.Mutex
	buckets [throttleBuckets]throttleBucket
}

// throttleBucket counts one width of time, the index-th since the epoch.
type throttleBucket struct {
	index             int64
	requests, accepts int64
}

// NewThrottle returns a Throttle with cfg, or an error naming the field
// out of range.
func NewThrottle(cfg ThrottleConfig) (*Throttle, error) {
	switch {
	case !(cfg.K >= 1) || math.IsInf(cfg.K, 0):
		return nil, valid.Errorf("K", "must be a number of at least 1 (%d is the book's)", defaultThrottleK)
	case cfg.Window < time.Second:
		return nil, valid.Errorf("Window", "must be at least 1s (%s is the book's)", defaultThrottleWindow)
	}
	return &Throttle{cfg: cfg, width: cfg.Window / throttleBuckets}, nil
}

// Counts returns the requests and accepts of the window up to now.
func (t *Throttle) Counts(now time.Time) (requests, accepts int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.counts(now)
}

// throttleVerdict is what the Throttle made of one attempt: the counts
// and the probability it was rejected with.
type throttleVerdict struct {
	requests, accepts int64
	p                 float64
	rejected          bool
}

// offer counts an attempt ready at now as a request and draws whether it
// is rejected, from the counts before it: draw is called only when the
// probability is above 0.
func (t *Throttle) offer(now time.Time, draw func() float64) throttleVerdict {
	t.mu.Lock()
	defer t.mu.Unlock()
	v := throttleVerdict{}
	v.requests, v.accepts = t.counts(now)
	v.p = max(0, (float64(v.requests)-t.cfg.K*float64(v.accepts))/float64(v.requests+1))
	t.bucket(now).requests++
	v.rejected = v.p > 0 && draw() < v.p
	return v
}

// accepted counts an answer at now that was no refusal.
func (t *Throttle) accepted(now time.Time) {
	t.mu.Lock()
	t.bucket(now).accepts++
	t.mu.Unlock()
}

// index is the bucket now falls in, floored for times before the epoch.
func (t *Throttle) index(now time.Time) int64 {
	ns := now.UnixNano()
	w := int64(t.width)
	i := ns / w
	if ns%w < 0 {
		i--
	}
	return i
}

// bucket is now's bucket, emptied when it last held an older one.
func (t *Throttle) bucket(now time.Time) *throttleBucket {
	i := t.index(now)
	b := &t.buckets[((i%throttleBuckets)+throttleBuckets)%throttleBuckets]
	if b.index != i {
		*b = throttleBucket{index: i}
	}
	return b
}

// counts sums the buckets of the window that ends in now's bucket.
func (t *Throttle) counts(now time.Time) (requests, accepts int64) {
	i := t.index(now)
	for _, b := range t.buckets {
		if b.index > i-throttleBuckets && b.index <= i {
			requests += b.requests
			accepts += b.accepts
		}
	}
	return requests, accepts
}

// Admit offers the attempt to the throttling, counted as a request: it
// is refused locally (ClassThrottled) with the probability the counts
// before it give. Throttle is a Gate.
func (t *Throttle) Admit(ask Ask) Admission {
	v := t.offer(ask.Now, ask.Rand)
	if !v.rejected {
		return Admission{}
	}
	why := fmt.Sprintf("client-side throttling rejected it locally (p %.3f from %d requests and %d accepts in the last %s, K %s)",
		v.p, v.requests, v.accepts, show(t.cfg.Window), strconv.FormatFloat(t.cfg.K, 'f', -1, 64))
	return Admission{Refused: true, Class: ClassThrottled, Why: why, By: "client-side throttling"}
}

// Retry allows every retry: the throttling counts attempts, not retries.
func (t *Throttle) Retry(Ask) (bool, string) { return true, "" }

// Learn counts an answer that is no refusal as an accept.
func (t *Throttle) Learn(a Answer) string {
	if !a.Refused {
		t.accepted(a.Now)
	}
	return ""
}
