package policylab

import (
	"math"
	"slices"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
)

// The lab's measure is what a policy's users live with, per request
// offered in the steady state: the share answered 2xx within the latency
// SLO; then the load the policy places on the deployment per offered
// request (attempts, 429s); then the latency of its successes. A request
// given up locally — held by its owner past its budget, never sent — is a
// failure like any other, counted in its own column.
//
// The steady state: a run's arrivals go on for Warmup before the window
// measured and for Tail after it, so that every measured request meets,
// all its life, the load of a plan that neither starts nor ends (a queue
// that a policy builds has had Warmup to fill, and the requests measured
// last still compete with later arrivals, where a plan that just ended
// would let them drain into an idle deployment).

// requestOutcome is how one offered request ended, as the lab counts it.
type requestOutcome struct {
	at  time.Duration // its arrival, from the plan's start
	e2e time.Duration // arrival to its last answer (to its give-up when it had none)
	// attempts are those sent (a local refusal sends nothing), http429
	// those answered 429; reach is the highest attempt number its owner
	// reached, local refusals included: how far the cap was used.
	attempts, http429, reach int32
	ok                       bool // answered 2xx within the budget
	local                    bool // ended by its owner's local refusal
	redirected               bool
	// late: it ended after the lab's budget, answered (any status) or
	// given up; rule (e) counts these.
	late bool
}

// window is the arrivals measured: from its start to its end, from the
// plan's start.
type window struct{ from, to time.Duration }

// half is the middle of the window: the drift compares the halves.
func (w window) half() time.Duration { return w.from + (w.to-w.from)/2 }

// repeatMeasure is one repeat's measure of a row, over its window.
type repeatMeasure struct {
	// Offered are the requests that arrived in the window; InSLO those
	// answered 2xx within the SLO (and the budget); Succeeded those
	// answered 2xx within the budget, whenever.
	Offered, InSLO, Succeeded int
	// OfferedFirst and InSLOFirst are the window's first half's: the
	// drift of the measure within the window is the second half's share
	// against the first's.
	OfferedFirst, InSLOFirst int
	// Attempts and HTTP429 are the attempts the window's requests sent
	// and those refused with 429; GaveUpLocal the requests their owner
	// gave up without an answer (a local refusal: a hold, a pace or a
	// throttle that does not fit the budget).
	Attempts, HTTP429, GaveUpLocal int
	// Reach is the highest attempt number any request reached, local
	// refusals included.
	Reach int
	// Redirected are the requests with an attempt sent to the fallback
	// (rule (d) prices them); Late those that ended after the lab's
	// budget, answered or given up (rule (e)).
	Redirected, Late int
	// SuccessP50MS and SuccessP99MS are the type 7 percentiles of the
	// successes' end-to-end latency, arrival to answer (-1 with none).
	SuccessP50MS, SuccessP99MS float64
}

// InSLOPct is the repeat's measure: InSLO per offered request, in percent
// (-1 when nothing arrived in the window).
func (m repeatMeasure) InSLOPct() float64 { return pctOf(m.InSLO, m.Offered) }

// AttemptsPerRequest is the load per offered request (-1 with none).
func (m repeatMeasure) AttemptsPerRequest() float64 { return ratioOf(m.Attempts, m.Offered) }

// DriftPts is the second half's measure minus the first half's, in
// points (0 when a half is empty).
func (m repeatMeasure) DriftPts() float64 {
	first := pctOf(m.InSLOFirst, m.OfferedFirst)
	second := pctOf(m.InSLO-m.InSLOFirst, m.Offered-m.OfferedFirst)
	if first < 0 || second < 0 {
		return 0
	}
	return second - first
}

// measureOf is the measure of one run's requests over w under slo, with
// the latencies of its successes (ms, sorted) for the row's pooled
// percentiles.
func measureOf(reqs []requestOutcome, w window, slo time.Duration) (repeatMeasure, []float64) {
	var m repeatMeasure
	var lat []float64
	mid := w.half()
	for i := range reqs {
		q := &reqs[i]
		if q.at < w.from || q.at >= w.to {
			continue
		}
		first := q.at < mid
		m.Offered++
		if first {
			m.OfferedFirst++
		}
		m.Attempts += int(q.attempts)
		m.HTTP429 += int(q.http429)
		m.Reach = max(m.Reach, int(q.reach))
		if q.redirected {
			m.Redirected++
		}
		if q.late {
			m.Late++
		}
		if q.local && !q.ok {
			m.GaveUpLocal++
		}
		if !q.ok {
			continue
		}
		m.Succeeded++
		lat = append(lat, ms(q.e2e))
		if q.e2e <= slo {
			m.InSLO++
			if first {
				m.InSLOFirst++
			}
		}
	}
	slices.Sort(lat)
	m.SuccessP50MS, m.SuccessP99MS = percentiles(lat)
	return m, lat
}

// percentiles are the type 7 p50 and p99 of sorted, -1 when empty.
func percentiles(sorted []float64) (p50, p99 float64) {
	if len(sorted) == 0 {
		return -1, -1
	}
	return analyze.Percentile(sorted, 50), analyze.Percentile(sorted, 99)
}

func pctOf(n, of int) float64 {
	if of <= 0 {
		return -1
	}
	return 100 * float64(n) / float64(of)
}

func ratioOf(n, of int) float64 {
	if of <= 0 {
		return -1
	}
	return float64(n) / float64(of)
}

// tQuantile975 is Student's t distribution's 97.5% quantile for 1 to 30
// degrees of freedom (index df-1): the half-width of a two-sided 95%
// interval is it × the standard error. Past 30 the normal's 1.96 is
// within 4%.
var tQuantile975 = [30]float64{
	12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
}

// interval is a mean and its Student-t 95% confidence interval.
type interval struct {
	mean, lo, hi float64
	n            int // the values it is made of
}

// meanInterval is the mean of xs and its 95% interval (a single value,
// or none, has no spread to estimate: lo and hi are the mean itself, and
// n says why).
func meanInterval(xs []float64) interval {
	n := len(xs)
	if n == 0 {
		return interval{mean: -1, lo: -1, hi: -1}
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	if n < 2 {
		return interval{mean: mean, lo: mean, hi: mean, n: n}
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	t := 1.96
	if n-1 <= len(tQuantile975) {
		t = tQuantile975[n-2]
	}
	h := t * math.Sqrt(ss/float64(n-1)/float64(n))
	return interval{mean: mean, lo: mean - h, hi: mean + h, n: n}
}

// excludesZero reports whether the interval lies wholly on one side of 0.
func (iv interval) excludesZero() bool { return iv.n >= 2 && (iv.lo > 0 || iv.hi < 0) }

// paired is the interval of the differences a[k] − b[k], repeat by
// repeat: both rows met the same arrivals and seeds in repeat k, so the
// difference's spread is the policies', not the arrivals'. Repeats where
// either value is unknown (-1) are left out.
func paired(a, b []float64) interval {
	var d []float64
	for k := range min(len(a), len(b)) {
		if a[k] >= 0 && b[k] >= 0 {
			d = append(d, a[k]-b[k])
		}
	}
	return meanInterval(d)
}
