package analyze

import (
	"math"
	"strings"

	"github.com/ptuprobe/ptuprobe/results"
)

// Success and failure of the requests themselves, beside the advised
// waits of their 429s.
//
// Every ptuprobe attempt sent (a row of a results file, or a record
// Observed live) is one request, put in exactly one outcome class:
//
//   - transport error: no response (status 0) or an error class (a
//     timeout, a refused or reset connection, a body cut short: a 200
//     whose body failed counts here, not as a success);
//   - succeeded: a status from 200 to 299;
//   - 429: refused by admission (the advised waits of the rest of the
//     package);
//   - 4xx: any other status from 400 to 499;
//   - 5xx: a status from 500 to 599;
//   - other: anything else (1xx, 3xx), counted as a failure too.
//
// A row that was never sent (results.Record.NotSent: its retry owner gave
// up before sending it, or the run was stopped while it waited) is no
// HTTP attempt and no transport error: it is the end of a planned request,
// counted apart. Planned requests are the rows of a first attempt, sent
// or not: every request a traffic command handed to its sender has one,
// so the share of them that succeeded is the run's success per request.
//
// Latency (latency_ms: the send to the end of the body) and time to first
// byte (ttfb_ms: the send to the response headers, or for a streamed
// answer to its first event, its time to first token: docs/results.md)
// are described over the successful
// requests only, by the package's percentile (Hyndman–Fan type 7). Rates
// are over the group's span. sent_ms counts from the start of each plan,
// and a results file holds no clock time, so the span is built from what
// the rows tell: the rows of one shape (burst, scheduled, any other) are
// laid over one another from their starts — the workers of a fleet share
// one start, and so do several files of one shape — and span from the
// earliest sent_ms to the latest sent_ms + latency_ms; the spans of the
// shapes are added, as characterize sends its burst plan, then its
// scheduled plan. So a fleet's rate is the fleet's and characterize's the
// whole run's, while runs of one shape made one after another count as if
// side by side (their rate is the sum of theirs). Foreign CSVs hold 429
// events only and add no request.
//
// Unlike the waits of 429s, the two latencies of every successful request
// are kept (16 bytes a request) until the Analysis. It does not sort them:
// the percentiles published of them (requestPercentiles) need a few order
// statistics each, which selection finds in place, exactly, in a few
// linear passes (selectRanks).

// Requests describes the requests of a group (or of Overall): how many
// succeeded and how the others failed, and the latency of the successful.
type Requests struct {
	Requests        int // ptuprobe attempts sent: HTTP attempts
	Succeeded       int // status 2xx, no error
	HTTP429         int // refused by admission
	HTTP4xx         int // 4xx other than 429
	HTTP5xx         int
	TransportErrors int // status 0 or an error class
	OtherStatus     int // 1xx, 3xx

	// Planned is every request planned and handed to a sender: the rows
	// of a first attempt (attempt 1), sent or not.
	Planned int
	// GivenUpUnsent and InterruptedUnsent are the planned requests never
	// sent at all: their first attempt was given up locally by the retry
	// owner (results.DecisionGiveUpLocal), or cut by a stop while it
	// waited (results.DecisionInterrupted). A request that was sent and
	// ended on a later attempt not sent is a failure of the request, not
	// counted here.
	GivenUpUnsent     int
	InterruptedUnsent int

	// OutputTokens sums the completion_tokens of the WithUsage successful
	// requests that carry one.
	OutputTokens int64
	WithUsage    int
	// Streamed counts the successful requests whose answer carries a
	// ttft_ms: the n behind the token-level figures.
	Streamed int
	// ITLMaxMS is the largest itl_max_ms of the successful requests (the
	// longest stall any reader saw); 0 when none carries one (ITLs).
	ITLMaxMS float64
	// SLOMet counts the successful requests that met the Tally's SLO
	// (WithSLO); 0 without one.
	SLOMet int
	// spans are the spans of the requests of each shape (shapeIndex).
	spans [3]sendSpan
	// latency and ttfb are the latency_ms and ttfb_ms of the successful
	// requests (a request without a ttfb_ms is left out of ttfb); ttft,
	// tpot and itl their ttft_ms, tpot_ms and itl_p50_ms, each of the
	// requests that carry one.
	latency, ttfb, ttft, tpot, itl selected
	// rateSum and rated sum each successful request's own output rate,
	// completion_tokens × 1000 / latency_ms, over those with a usage and a
	// latency (a mean: no value is kept per request). The sum is in
	// thousandths of a token per second, an integer, so that it does not
	// depend on the order rows are counted in (blocks.go); each rate is
	// capped at maxRate.
	rateSum uint64
	rated   int
}

// sendSpan is the span of the requests of one shape: the earliest sent_ms,
// the latest sent_ms + latency_ms, over the timed requests that carry a
// send time (both 0 when none does).
type sendSpan struct {
	firstSentMS, lastDoneMS float64
	timed                   int
}

// shapeIndex is the span a row of shape goes to.
func shapeIndex(shape string) int {
	switch shape {
	case results.ShapeBurst:
		return 0
	case results.ShapeScheduled:
		return 1
	}
	return 2
}

// Failed is every request that did not succeed, admission's 429s included.
func (r *Requests) Failed() int { return r.Requests - r.Succeeded }

// FailedNotAdmission is every failure other than a 429: what a run whose
// requests never reach the model shows.
func (r *Requests) FailedNotAdmission() int { return r.Failed() - r.HTTP429 }

// SuccessPct is the share of HTTP attempts that succeeded, in percent; ok
// is false without attempts.
func (r *Requests) SuccessPct() (pct float64, ok bool) {
	if r.Requests == 0 {
		return 0, false
	}
	return 100 * float64(r.Succeeded) / float64(r.Requests), true
}

// PlannedSuccessPct is the share of planned requests that succeeded, in
// percent, whatever ended the others (refused, given up locally,
// interrupted); ok is false without planned requests.
func (r *Requests) PlannedSuccessPct() (pct float64, ok bool) {
	if r.Planned == 0 {
		return 0, false
	}
	return 100 * float64(r.Succeeded) / float64(r.Planned), true
}

// NotSent is the planned requests that were never sent at all.
func (r *Requests) NotSent() int { return r.GivenUpUnsent + r.InterruptedUnsent }

// LatencyPercentile is the percent-th percentile of the successful
// requests' latency_ms; NaN when none succeeded.
func (r *Requests) LatencyPercentile(percent float64) float64 {
	return percentileOf(r.latency, percent)
}

// TTFBPercentile is the percent-th percentile of the successful requests'
// ttfb_ms; NaN when none carries one.
func (r *Requests) TTFBPercentile(percent float64) float64 {
	return percentileOf(r.ttfb, percent)
}

// Latencies is how many successful requests carry a latency_ms, and TTFBs
// how many a ttfb_ms: the n behind each percentile.
func (r *Requests) Latencies() int { return r.latency.len() }

// TTFBs is how many successful requests carry a ttfb_ms.
func (r *Requests) TTFBs() int { return r.ttfb.len() }

// TTFTPercentile is the percent-th percentile of the successful requests'
// ttft_ms (their first content token); NaN when none was streamed.
func (r *Requests) TTFTPercentile(percent float64) float64 { return percentileOf(r.ttft, percent) }

// TPOTPercentile is the percent-th percentile of the successful requests'
// tpot_ms; NaN when none carries one.
func (r *Requests) TPOTPercentile(percent float64) float64 { return percentileOf(r.tpot, percent) }

// ITLPercentile is the percent-th percentile, over the successful
// requests that carry one, of each answer's median gap between content
// events (itl_p50_ms): how the typical pace of an answer varies across
// answers. It is not the percentile of every gap pooled (vLLM's ITL): a
// results row keeps each answer's median and largest gap, not every gap,
// so the stalls are published as the largest itl_max_ms (ITLMaxMS). NaN
// when none carries one.
func (r *Requests) ITLPercentile(percent float64) float64 { return percentileOf(r.itl, percent) }

// TTFTs, TPOTs and ITLs are the n behind each of those percentiles.
func (r *Requests) TTFTs() int { return r.ttft.len() }

// TPOTs is how many successful requests carry a tpot_ms.
func (r *Requests) TPOTs() int { return r.tpot.len() }

// ITLs is how many successful requests carry an itl_p50_ms.
func (r *Requests) ITLs() int { return r.itl.len() }

// RequestOutputTokensPerS is the mean of the successful requests' own
// output rate, completion_tokens × 1000 / latency_ms (the tokens a reader
// of one answer got per second, on average); ok is false when none
// carries a usage. A mean, not a percentile: it keeps nothing per
// request.
func (r *Requests) RequestOutputTokensPerS() (float64, bool) {
	if r.rated == 0 {
		return 0, false
	}
	return float64(r.rateSum) / 1000 / float64(r.rated), true
}

// maxRate caps one request's output rate in the mean, tokens per second:
// beyond any deployment, and small enough that a sum of 10^7 of them
// stays exact.
const maxRate = 1e9

// addRate adds a rate to the sum, saturating (never wrapping).
func (r *Requests) addRate(sum uint64, n int) {
	if r.rateSum+sum < r.rateSum {
		r.rateSum = math.MaxUint64
	} else {
		r.rateSum += sum
	}
	r.rated += n
}

// SpanS is the span of the requests in seconds, the sum of the spans of
// their shapes (see above); ok is false when it is not positive.
func (r *Requests) SpanS() (s float64, ok bool) {
	ms := 0.0
	for _, sp := range r.spans {
		if sp.timed > 0 {
			ms += sp.lastDoneMS - sp.firstSentMS
		}
	}
	if ms <= 0 {
		return 0, false
	}
	return ms / 1000, true
}

// RequestsPerS is every request (any outcome) over the span.
func (r *Requests) RequestsPerS() (float64, bool) {
	s, ok := r.SpanS()
	if !ok {
		return 0, false
	}
	return float64(r.Requests) / s, true
}

// OutputTokensPerS is the successful requests' completion tokens over the
// span; ok is false when no successful request carried a usage.
func (r *Requests) OutputTokensPerS() (float64, bool) {
	s, ok := r.SpanS()
	if !ok || r.WithUsage == 0 {
		return 0, false
	}
	return float64(r.OutputTokens) / s, true
}

// requestTally counts the requests of one raw group while files stream in.
type requestTally struct {
	Requests
	latency, ttfb, ttft, tpot, itl series // in the order counted
}

// series returns r's series of each kind, in the order of kinds.
func (r *requestTally) series() [nKinds]*series {
	return [nKinds]*series{&r.latency, &r.ttfb, &r.ttft, &r.tpot, &r.itl}
}

// nKinds is how many kinds of per-request values Requests keeps.
const nKinds = 5

// kinds returns r's values of each kind, in the order of requestTally.series.
func (r *Requests) kinds() [nKinds]*selected {
	return [nKinds]*selected{&r.latency, &r.ttfb, &r.ttft, &r.tpot, &r.itl}
}

// add counts one ptuprobe row: a planned request's first attempt, an
// attempt sent, or an end not sent; slo, when named, decides whether a
// success counts in the goodput.
func (r *requestTally) add(rec *results.Record, slo *SLO) {
	if rec.Attempt == 1 {
		r.Planned++
	}
	if rec.NotSent() {
		switch {
		case rec.Attempt != 1:
		case rec.Decision == results.DecisionInterrupted:
			r.InterruptedUnsent++
		default:
			r.GivenUpUnsent++
		}
		return
	}
	r.Requests.Requests++
	if rec.SentMS >= 0 {
		r.spans[shapeIndex(rec.Shape)].widen(sendSpan{firstSentMS: rec.SentMS, lastDoneMS: rec.SentMS + max(rec.LatencyMS, 0), timed: 1})
	}
	switch s := rec.Status; {
	case rec.Error != "" || s == 0:
		r.TransportErrors++
	case s >= 200 && s <= 299:
		r.Succeeded++
		if rec.LatencyMS >= 0 {
			r.latency.add(rec.LatencyMS)
		}
		if rec.TTFBMS >= 0 {
			r.ttfb.add(rec.TTFBMS)
		}
		if rec.CompletionTokens >= 0 {
			r.OutputTokens += int64(rec.CompletionTokens)
			r.WithUsage++
			if rec.LatencyMS > 0 {
				r.addRate(uint64(math.Round(1000*min(1000*float64(rec.CompletionTokens)/rec.LatencyMS, maxRate))), 1)
			}
		}
		if rec.TTFTMS >= 0 {
			r.Streamed++
			r.ttft.add(rec.TTFTMS)
		}
		if rec.TPOTMS >= 0 {
			r.tpot.add(rec.TPOTMS)
		}
		if rec.ITLP50MS >= 0 {
			r.itl.add(rec.ITLP50MS)
		}
		if rec.ITLMaxMS >= 0 {
			r.ITLMaxMS = max(r.ITLMaxMS, rec.ITLMaxMS)
		}
		if !slo.IsZero() && slo.Met(rec) {
			r.SLOMet++
		}
	case s == 429:
		r.HTTP429++
	case s >= 400 && s <= 499:
		r.HTTP4xx++
	case s >= 500 && s <= 599:
		r.HTTP5xx++
	default:
		r.OtherStatus++
	}
}

// absorb adds o's requests to r's.
func (r *requestTally) absorb(o *requestTally) {
	r.Requests.add(&o.Requests)
	mine, theirs := r.series(), o.series()
	for i := range mine {
		mine[i].absorb(theirs[i])
	}
}

// add adds o's counts and span to r's (not the latencies).
func (r *Requests) add(o *Requests) {
	r.Requests += o.Requests
	r.Succeeded += o.Succeeded
	r.HTTP429 += o.HTTP429
	r.HTTP4xx += o.HTTP4xx
	r.HTTP5xx += o.HTTP5xx
	r.TransportErrors += o.TransportErrors
	r.OtherStatus += o.OtherStatus
	r.Planned += o.Planned
	r.GivenUpUnsent += o.GivenUpUnsent
	r.InterruptedUnsent += o.InterruptedUnsent
	r.OutputTokens += o.OutputTokens
	r.WithUsage += o.WithUsage
	r.Streamed += o.Streamed
	r.ITLMaxMS = max(r.ITLMaxMS, o.ITLMaxMS)
	r.SLOMet += o.SLOMet
	r.addRate(o.rateSum, o.rated)
	for i := range r.spans {
		r.spans[i].widen(o.spans[i])
	}
}

// widen makes s cover o too.
func (s *sendSpan) widen(o sendSpan) {
	switch {
	case o.timed == 0:
		return
	case s.timed == 0:
		s.firstSentMS, s.lastDoneMS = o.firstSentMS, o.lastDoneMS
	default:
		s.firstSentMS = min(s.firstSentMS, o.firstSentMS)
		s.lastDoneMS = max(s.lastDoneMS, o.lastDoneMS)
	}
	s.timed += o.timed
}

// mergeRequests adds the requests of a raw group to g's, their latencies
// appended (selected by selectRequests).
func (g *Group) mergeRequests(o *requestTally) {
	g.Requests.add(&o.Requests)
	mine, theirs := g.Requests.kinds(), o.series()
	for i := range mine {
		mine[i].v = theirs[i].appendTo(mine[i].v)
	}
}

// selectRequests finds the order statistics of the published percentiles
// of each group's latencies, on every core, and gives Overall the
// requests of them all: their latencies together, or the very latencies
// of the one group that has any (an Analysis is read only).
func selectRequests(overall *Group, groups []*Group) {
	overall.Requests = Requests{}
	for _, g := range groups {
		overall.Requests.add(&g.Requests)
	}
	var kinds []func(*Requests) *selected
	for i := range nKinds {
		kinds = append(kinds, func(r *Requests) *selected { return r.kinds()[i] })
	}
	var jobs []*selected
	for _, of := range kinds {
		for _, g := range groups {
			if s := of(&g.Requests); s.len() > 0 {
				jobs = append(jobs, s)
			}
		}
	}
	parallel(len(jobs), func(i int) { jobs[i].selectPublished() })
	jobs = jobs[:0]
	for _, of := range kinds {
		var with []*selected
		n := 0
		for _, g := range groups {
			if s := of(&g.Requests); s.len() > 0 {
				with, n = append(with, s), n+s.len()
			}
		}
		o := of(&overall.Requests)
		if len(with) == 1 {
			*o = *with[0]
			continue
		}
		o.v = make([]float64, 0, n)
		for _, s := range with {
			o.v = append(o.v, s.v...)
		}
		if n > 0 {
			jobs = append(jobs, o)
		}
	}
	parallel(len(jobs), func(i int) { jobs[i].selectPublished() })
}

// HasRequests reports whether the analysis counted any ptuprobe row (an
// attempt, or a planned request not sent): without one (foreign CSVs
// alone) nothing is known of the requests, and Overall.Requests holds
// zeros that mean "unknown", not "none failed".
func (a *Analysis) HasRequests() bool { return a.Overall.Requests.Has() }

// Has reports whether r counted any ptuprobe row.
func (r *Requests) Has() bool { return r.Requests > 0 || r.Planned > 0 || r.NotSent() > 0 }

// requestPercentiles are the percentiles of latency and ttfb published
// and gated on (latency_p50_ms …): the name's suffix and its percent (100
// for the maximum).
var requestPercentiles = []struct {
	Suffix  string
	Percent float64
}{{"p50_ms", 50}, {"p90_ms", 90}, {"p95_ms", 95}, {"p99_ms", 99}, {"max_ms", 100}}

// percentileByName is latency_p99_ms, ttfb_p50_ms, … of r; NaN when
// unknown or not measured.
func (r *Requests) percentileByName(name string) float64 {
	kind, suffix, _ := strings.Cut(name, "_")
	for _, p := range requestPercentiles {
		if p.Suffix != suffix {
			continue
		}
		switch kind {
		case "latency":
			return r.LatencyPercentile(p.Percent)
		case "ttfb":
			return r.TTFBPercentile(p.Percent)
		case "ttft":
			return r.TTFTPercentile(p.Percent)
		case "tpot":
			return r.TPOTPercentile(p.Percent)
		case "itl":
			if p.Percent == 100 {
				if r.ITLs() == 0 {
					return math.NaN()
				}
				return r.ITLMaxMS // the largest gap, not the largest median
			}
			return r.ITLPercentile(p.Percent)
		}
	}
	return math.NaN()
}
