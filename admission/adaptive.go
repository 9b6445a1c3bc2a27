package admission

import (
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// AdaptiveConfig tunes an Adaptive rate limiter. Every field must be set
// (DefaultAdaptiveConfig gives the AWS SDKs' values).
type AdaptiveConfig struct {
	// Beta is what a throttle multiplies the rate by, in (0, 1).
	Beta float64
	// Scale is CUBIC's scale constant C, > 0: the larger, the faster the
	// rate returns to where it was throttled and grows past it.
	Scale float64
	// MinRate is the lowest fill rate, requests per second (> 0).
	MinRate float64
	// Smoothing is the weight of the latest measure in the smoothed
	// answer rate, in (0, 1].
	Smoothing float64
	// Bucket is the span the answer rate is measured over, at least 1 ms.
	Bucket time.Duration
}

// DefaultAdaptiveConfig is the AWS SDKs' adaptive retry mode: β 0.7,
// C 0.4, a floor of 0.5 requests per second, the rate measured over half
// seconds and smoothed 0.8 (botocore's retries/adaptive.py, throttling.py
// and bucket.py).
func DefaultAdaptiveConfig() AdaptiveConfig {
	return AdaptiveConfig{Beta: 0.7, Scale: 0.4, MinRate: 0.5, Smoothing: 0.8, Bucket: 500 * time.Millisecond}
}

// Adaptive is the AWS SDKs' adaptive retry mode's client-side rate
// limiter: a token bucket in front of every attempt to the primary
// target, whose fill rate follows CUBIC (RFC 9438's window growth, applied
// to a rate):
//
//   - it does nothing until the first throttle (a refusal): the client
//     has learned nothing yet;
//   - a throttle remembers the rate it came at, Wmax (the smoothed rate
//     of answers, or the fill rate if that is lower), and cuts the fill
//     rate to Beta × Wmax;
//   - every other answer sets the fill rate on the cubic curve
//     Scale × (t − K)³ + Wmax, t the seconds since the last throttle and
//     K = ∛(Wmax × (1 − Beta) / Scale), so the rate climbs quickly back
//     towards Wmax, lingers near it, and then probes past it;
//   - the fill rate is never more than twice the measured rate nor less
//     than MinRate, and the bucket holds at most one second of it (at
//     least one token).
//
// An attempt takes a token, waiting for it on the Policy's Clock when
// the bucket is empty; one whose next token would not come before the
// request's budget ends is not sent (Decision.Err ClassAdaptive), and the
// request is redirected or given up as a cooldown refusal is.
//
// An Adaptive belongs to one client (one Transport: Policy.Adaptive); it
// is safe for concurrent use.
type Adaptive struct {
	cfg AdaptiveConfig

	mu      sync.Mutex
	started bool
	enabled bool // a throttle came: the bucket limits
	// The token bucket.
	fill, capacity, tokens float64
	refilled               time.Time
	// CUBIC.
	wMax, k  float64
	throttle time.Time
	// The measured answer rate.
	measured float64
	count    float64
	bucket   int64
}

// NewAdaptive returns an Adaptive with cfg, or an error naming the field
// out of range.
func NewAdaptive(cfg AdaptiveConfig) (*Adaptive, error) {
	switch {
	case !(cfg.Beta > 0 && cfg.Beta < 1):
		return nil, valid.Errorf("Beta", "must be between 0 and 1 (0.7 is the AWS SDKs')")
	case !(cfg.Scale > 0) || math.IsInf(cfg.Scale, 0):
		return nil, valid.Errorf("Scale", "must be a positive number (0.4 is the AWS SDKs')")
	case !(cfg.MinRate > 0) || math.IsInf(cfg.MinRate, 0):
		return nil, valid.Errorf("MinRate", "must be a positive number of requests per second")
	case !(cfg.Smoothing > 0 && cfg.Smoothing <= 1):
		return nil, valid.Errorf("Smoothing", "must be above 0 and at most 1")
	case cfg.Bucket < time.Millisecond:
		return nil, valid.Errorf("Bucket", "must be at least 1ms")
	}
	return &Adaptive{cfg: cfg}, nil
}

// Rate is the fill rate, requests per second; 0 until the first throttle
// (it does not limit yet).
func (a *Adaptive) Rate() float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.enabled {
		return 0
	}
	return a.fill
}

// start sets the clocks at the first use: the curve and the rate measure
// start there.
func (a *Adaptive) start(now time.Time) {
	if a.started {
		return
	}
	a.started, a.throttle, a.refilled = true, now, now
	a.bucket = a.bucketOf(now)
	a.setRate(now, 1)
}

// take takes a token for an attempt ready at now, if the bucket holds
// one: took is true. If not, at is when it will, at the current rate;
// the attempt waits until then and asks again, so attempts that wait
// together go 1/rate apart, at the rate as it is when each goes (a rate
// that changes while they wait changes their spacing, as the SDKs'
// blocking bucket does).
func (a *Adaptive) take(now time.Time) (at time.Time, took bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.start(now)
	if !a.enabled {
		return now, true
	}
	a.refill(now)
	if a.tokens >= 1 {
		a.tokens--
		return now, true
	}
	return now.Add(time.Duration(math.Ceil((1 - a.tokens) / a.fill * 1e9))), false
}

// adaptiveStep is what one answer did to the rate, for a Decision.
type adaptiveStep struct {
	throttled        bool
	measured, wMax   float64
	rate             float64
	enabled, changed bool
}

// answered updates the rate for an answer at now, throttled when it was a
// refusal.
func (a *Adaptive) answered(now time.Time, throttled bool) adaptiveStep {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.start(now)
	measured := a.record(now)
	var rate float64
	if throttled {
		use := measured
		if a.enabled {
			use = min(measured, a.fill)
		}
		a.wMax, a.throttle, a.enabled = use, now, true
		a.k = math.Cbrt(a.wMax * (1 - a.cfg.Beta) / a.cfg.Scale)
		rate = use * a.cfg.Beta
	} else {
		t := now.Sub(a.throttle).Seconds() - a.k
		rate = a.cfg.Scale*t*t*t + a.wMax
	}
	before := a.fill
	a.setRate(now, min(rate, 2*measured))
	return adaptiveStep{throttled: throttled, measured: measured, wMax: a.wMax, rate: a.fill,
		enabled: a.enabled, changed: a.fill != before}
}

// setRate refills at the old rate up to now, then fills at rate (at least
// MinRate) into a bucket of one second of it (at least one token).
func (a *Adaptive) setRate(now time.Time, rate float64) {
	a.refill(now)
	a.fill = max(rate, a.cfg.MinRate)
	a.capacity = max(rate, 1)
	a.tokens = min(a.tokens, a.capacity)
}

func (a *Adaptive) refill(now time.Time) {
	if dt := now.Sub(a.refilled).Seconds(); dt > 0 {
		a.tokens = min(a.capacity, a.tokens+dt*a.fill)
		a.refilled = now
	}
}

// record counts an answer at now and returns the smoothed answer rate: a
// bucket's count over the time since the last bucket that counted, each
// time a bucket ends.
func (a *Adaptive) record(now time.Time) float64 {
	a.count++
	if b := a.bucketOf(now); b > a.bucket {
		span := float64(b-a.bucket) * a.cfg.Bucket.Seconds()
		a.measured = a.count/span*a.cfg.Smoothing + a.measured*(1-a.cfg.Smoothing)
		a.count, a.bucket = 0, b
	}
	return a.measured
}

func (a *Adaptive) bucketOf(now time.Time) int64 {
	ns, w := now.UnixNano(), int64(a.cfg.Bucket)
	i := ns / w
	if ns%w < 0 {
		i--
	}
	return i
}

// Admit takes a token for the attempt; when the bucket holds none, the
// attempt waits for the next (and is refused locally, ClassAdaptive, when
// it does not come within the budget). Adaptive is a Gate.
func (a *Adaptive) Admit(ask Ask) Admission {
	at, took := a.take(ask.Now)
	if took {
		return Admission{}
	}
	return Admission{At: at, Class: ClassAdaptive, Why: "the adaptive rate's next token, in " + show(at.Sub(ask.Now)) + ",", By: "the adaptive rate"}
}

// Retry allows every retry: the bucket holds every attempt (Admit).
func (a *Adaptive) Retry(Ask) (bool, string) { return true, "" }

// Learn updates the rate for an answer, cut on a refusal (a throttle);
// the note says what it did.
func (a *Adaptive) Learn(ans Answer) string { return a.answered(ans.Now, ans.Refused).note() }

// note says what an answer did to the rate, for a Decision's Reason.
func (s adaptiveStep) note() string {
	rate := strconv.FormatFloat(s.rate, 'f', 2, 64)
	switch {
	case s.throttled:
		return "; the adaptive rate is cut to " + rate + "/s (" + strconv.FormatFloat(s.wMax, 'f', 2, 64) + "/s measured × β)"
	case s.enabled && s.changed:
		return "; the adaptive rate is " + rate + "/s"
	}
	return ""
}
