package policylab

import (
	"slices"
	"sync"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/results"
)

// Measure is what one policy did with the plan: counted from the rows its
// client wrote (every attempt), and from the simulator that witnessed it.
type Measure struct {
	Policy       string
	Requests     int // requests the plan sent (first attempts)
	Succeeded    int // requests whose last attempt was answered 2xx
	GaveUp       int // requests whose last attempt was refused (429 or 503)
	Redirected   int // requests with an attempt sent to the fallback
	Attempts     int // every attempt, retries and redirects included
	HTTP429      int // attempts answered 429
	OverBudget   int // requests whose end-to-end latency exceeded the reference budget
	EarlyRetries int // retries the client sent before the wait advised to its previous attempt had passed
	// E2E are the requests' end-to-end latencies in ms, sorted: from the
	// first attempt's send to the last attempt's answer, waits included.
	E2E []float64
	// RetrySends are the send times (ms since the run started) of every
	// attempt after the first, sorted: how retries cluster.
	RetrySends []float64
	// SimEarlyReturns and SimSDKRetries are the simulator's own counts:
	// requests that came back before their advised wait, and requests
	// that declared themselves SDK retries. -1 when no simulator counted.
	SimEarlyReturns int
	SimSDKRetries   int
}

// SuccessShare is Succeeded / Requests (0 without requests).
func (m Measure) SuccessShare() float64 {
	if m.Requests == 0 {
		return 0
	}
	return float64(m.Succeeded) / float64(m.Requests)
}

// AttemptsPerRequest is Attempts / Requests (0 without requests).
func (m Measure) AttemptsPerRequest() float64 {
	if m.Requests == 0 {
		return 0
	}
	return float64(m.Attempts) / float64(m.Requests)
}

// E2E returns the p-th percentile of the end-to-end latencies (type 7),
// or -1 without requests.
func (m Measure) E2EPercentile(p float64) float64 {
	if len(m.E2E) == 0 {
		return -1
	}
	return analyze.Percentile(m.E2E, p)
}

// MaxRetriesWithin is the most retry sends inside any window of ms
// milliseconds: how tightly retries cluster (clients told the same wait
// and not jittered come back together).
func (m Measure) MaxRetriesWithin(ms float64) int {
	most, lo := 0, 0
	for hi, t := range m.RetrySends {
		for t-m.RetrySends[lo] > ms {
			lo++
		}
		most = max(most, hi-lo+1)
	}
	return most
}

// request is one request's attempts as they complete.
type request struct {
	firstSent  float64
	lastEnd    float64
	lastStatus int
	redirected bool
	// prevReady is when the previous attempt's advised wait ended
	// (completion + advised wait), or -1 when it advised none.
	prevReady float64
}

// recorder builds a Measure from the rows of one policy's runs; Observe is
// safe for concurrent use (one call per attempt, in order per request).
type recorder struct {
	mu       sync.Mutex
	budgetMS float64
	m        Measure
	reqs     map[requestKey]*request
}

type requestKey struct {
	run, shape string
	seq        int
}

func newRecorder(policy string, budgetMS float64) *recorder {
	return &recorder{budgetMS: budgetMS, m: Measure{Policy: policy, SimEarlyReturns: -1, SimSDKRetries: -1}, reqs: map[requestKey]*request{}}
}

// Observe counts one attempt.
func (r *recorder) Observe(rec *results.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := requestKey{rec.RunID, rec.Shape, rec.Seq}
	q := r.reqs[k]
	if q == nil {
		q = &request{firstSent: rec.SentMS, prevReady: -1}
		r.reqs[k] = q
		r.m.Requests++
	} else {
		r.m.RetrySends = append(r.m.RetrySends, rec.SentMS)
		// A redirect goes to another deployment at once: not a retry of
		// the refused one.
		if q.prevReady >= 0 && rec.SentMS < q.prevReady && !(rec.Fallback && !q.redirected) {
			r.m.EarlyRetries++
		}
	}
	r.m.Attempts++
	if rec.Status == 429 {
		r.m.HTTP429++
	}
	end := rec.SentMS + max(rec.LatencyMS, 0)
	q.lastEnd, q.lastStatus = end, rec.Status
	q.redirected = q.redirected || rec.Fallback
	q.prevReady = -1
	if rec.HasWait() {
		q.prevReady = end + rec.WaitMS
	}
}

// measure finishes the Measure: per-request outcomes and latencies.
func (r *recorder) measure() Measure {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.m
	m.E2E = make([]float64, 0, len(r.reqs))
	for _, q := range r.reqs {
		e2e := q.lastEnd - q.firstSent
		m.E2E = append(m.E2E, e2e)
		switch {
		case q.lastStatus >= 200 && q.lastStatus < 300:
			m.Succeeded++
		case q.lastStatus == 429 || q.lastStatus == 503:
			m.GaveUp++
		}
		if q.redirected {
			m.Redirected++
		}
		if r.budgetMS > 0 && e2e > r.budgetMS {
			m.OverBudget++
		}
	}
	slices.Sort(m.E2E)
	m.RetrySends = slices.Clone(m.RetrySends)
	slices.Sort(m.RetrySends)
	return m
}
