package metrics

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/results"
)

// MaxGroups bounds the group label's values: a run has a handful of groups
// (a plan's default, --group, a policy's name); past this many, a group's
// series are labelled OtherGroup.
const MaxGroups = 100

// OtherGroup labels the groups past MaxGroups, and a status outside
// 0–599.
const OtherGroup = "other"

// Buckets of the two histograms, in seconds.
var (
	// WaitBuckets suit advised waits: Azure's run from milliseconds to
	// about a minute.
	WaitBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60}
	// LatenessBuckets suit send lateness: a few microseconds on an idle
	// machine, a pace window's 500 µs, seconds when --max-in-flight holds
	// arrivals back.
	LatenessBuckets = []float64{5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	// TTFTBuckets suit a time to first token: tens of milliseconds on a
	// small prompt, seconds on a long one or a loaded deployment.
	TTFTBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 20, 60}
	// TokenGapBuckets suit a time per output token and the gaps between
	// tokens: a few milliseconds to a stall of seconds.
	TokenGapBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5}
)

// errorClasses are the error label's values; any other error string is
// counted as results.ClassOther.
var errorClasses = []string{
	results.ClassTimeout, results.ClassRefused, results.ClassReset, results.ClassCanceled, results.ClassTLS,
	results.ClassBody, results.ClassHeaders, results.ClassLocal, results.ClassOther,
}

// maxStatus is the largest status code labelled as itself.
const maxStatus = 599

// Traffic is the live metrics of traffic runs: one per process, shared by
// every plan (and every policy of the policy lab).
type Traffic struct {
	attempts *prometheus.CounterVec
	http429  *prometheus.CounterVec
	retries  *prometheus.CounterVec
	planned  *prometheus.CounterVec
	sent     *prometheus.CounterVec
	notSent  *prometheus.CounterVec
	hists    [len(histograms)]*prometheus.HistogramVec
	inFlight prometheus.Gauge

	mu     sync.Mutex
	groups map[string]*Group
}

// NewTraffic registers the traffic metrics with reg.
func NewTraffic(reg prometheus.Registerer) (*Traffic, error) {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	t := &Traffic{
		attempts: counter("ptuprobe_attempts_total",
			"Attempts recorded (one per results row sent), by group, HTTP status (0: no response) and error class.", "group", "status", "error"),
		http429: counter("ptuprobe_http_429_total",
			"Attempts answered 429.", "group"),
		retries: counter("ptuprobe_retries_total",
			"Attempts after a request's first (attempt > 1), made by the retry owner.", "group"),
		planned: counter("ptuprobe_requests_planned_total",
			"Requests (first attempts) the plans started so far will send.", "group"),
		sent: counter("ptuprobe_requests_sent_total",
			"Requests (first attempts) sent.", "group"),
		notSent: counter("ptuprobe_attempts_not_sent_total",
			"Attempts that ended their request unsent (rows of decision give-up-local or interrupted), by group and decision; not counted as attempts.", "group", "decision"),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ptuprobe_requests_in_flight",
			Help: "Requests in progress, from first send to last answer (retry waits included).",
		}),
		groups: map[string]*Group{},
	}
	cs := []prometheus.Collector{t.attempts, t.http429, t.retries, t.planned, t.sent, t.notSent}
	for i, h := range histograms {
		t.hists[i] = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: h.name, Help: h.help, Buckets: h.buckets}, []string{"group"})
		cs = append(cs, t.hists[i])
	}
	for _, c := range append(cs, t.inFlight) {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// attemptHistogram is one of the histograms every attempt may feed: its series,
// and what it reads of a Record in seconds (ok false: the Record has
// nothing for it).
type attemptHistogram struct {
	name, help string
	buckets    []float64
	seconds    func(r *results.Record) (s float64, ok bool)
}

// histograms are the per-attempt histograms, at their hist… indexes.
var histograms = [...]attemptHistogram{
	histWaits: {"ptuprobe_advised_wait_seconds", "Advised waits read from responses (rows with a wait_ms), in seconds.", WaitBuckets,
		func(r *results.Record) (float64, bool) { return r.WaitMS / 1000, r.HasWait() }},
	histLateness: {"ptuprobe_send_lateness_seconds", "How late each attempt was sent (sent_ms - intended_ms), in seconds.", LatenessBuckets,
		func(r *results.Record) (float64, bool) { return max(r.SentMS-r.IntendedMS, 0) / 1000, true }},
	histTTFT: {"ptuprobe_ttft_seconds", "Time to first token of streamed answers (rows with a ttft_ms: 2xx, the first content token from the attempt's send), in seconds.", TTFTBuckets,
		func(r *results.Record) (float64, bool) { return r.TTFTMS / 1000, r.TTFTMS >= 0 }},
	histTPOT: {"ptuprobe_tpot_seconds", "Time per output token after the first of streamed answers (rows with a tpot_ms), in seconds.", TokenGapBuckets,
		func(r *results.Record) (float64, bool) { return r.TPOTMS / 1000, r.TPOTMS >= 0 }},
	histITL: {"ptuprobe_itl_seconds", "Median gap between the content events of each streamed answer (rows with an itl_p50_ms), in seconds: one observation an answer.", TokenGapBuckets,
		func(r *results.Record) (float64, bool) { return r.ITLP50MS / 1000, r.ITLP50MS >= 0 }},
}

// Indexes of histograms.
const (
	histWaits = iota
	histLateness
	histTTFT
	histTPOT
	histITL
)

// Plan is told that a plan of planned requests starts under group, and
// returns the group's series, resolved once for the plan's Records.
func (t *Traffic) Plan(group string, planned int) *Group {
	g := t.group(group)
	g.planned.Add(float64(planned))
	return g
}

// Meter is Plan, its Group's Sender wrapping s and its Observe: what
// internal/campaign counts a plan with (campaign.Meter).
func (t *Traffic) Meter(group string, planned int, s dispatch.Sender) (dispatch.Sender, func(*results.Record)) {
	g := t.Plan(group, planned)
	return g.Sender(s), g.Observe
}

// group returns the series of a group label, creating them on first use.
func (t *Traffic) group(name string) *Group {
	t.mu.Lock()
	defer t.mu.Unlock()
	if g, ok := t.groups[name]; ok {
		return g
	}
	label := name
	if len(t.groups) >= MaxGroups {
		label = OtherGroup
	}
	g := &Group{
		t: t, name: name, label: label,
		http429: t.http429.WithLabelValues(label), retries: t.retries.WithLabelValues(label),
		planned: t.planned.WithLabelValues(label), sent: t.sent.WithLabelValues(label),
		givenUp:     t.notSent.WithLabelValues(label, results.DecisionGiveUpLocal),
		interrupted: t.notSent.WithLabelValues(label, results.DecisionInterrupted),
		failed:      map[attemptKey]prometheus.Counter{},
	}
	for i, h := range t.hists {
		g.hists[i] = h.WithLabelValues(label)
	}
	t.groups[name] = g
	return g
}

// Group is one group's series. Observe and the Sender it wraps are safe
// for concurrent use.
type Group struct {
	t                               *Traffic
	name, label                     string
	http429, retries, planned, sent prometheus.Counter
	givenUp, interrupted            prometheus.Counter // attempts not sent, by decision
	hists                           [len(histograms)]prometheus.Observer

	// answered holds the attempts counter of each status without an
	// error, made on first sight: index maxStatus+1 is a status out of
	// range.
	answered [maxStatus + 2]atomic.Pointer[statusCounter]
	mu       sync.Mutex
	failed   map[attemptKey]prometheus.Counter // attempts with an error class
}

type statusCounter struct{ prometheus.Counter }

type attemptKey struct {
	status int
	class  string
}

// Observe counts one completed attempt. It is dispatch.Options.Observe's
// hot path: no lock and no allocation once the status has been seen.
func (g *Group) Observe(r *results.Record) {
	if r.Group != g.name {
		g = g.t.group(r.Group) // not a Record of this plan: never expected
	}
	if r.NotSent() { // no HTTP attempt: no status, no send time
		if r.Decision == results.DecisionInterrupted {
			g.interrupted.Inc()
		} else {
			g.givenUp.Inc()
		}
		return
	}
	g.attempt(r).Inc()
	if r.Status == 429 {
		g.http429.Inc()
	}
	if r.Attempt > 1 {
		g.retries.Inc()
	}
	for i, h := range &histograms {
		if s, ok := h.seconds(r); ok {
			g.hists[i].Observe(s)
		}
	}
}

// attempt returns the attempts counter of r's status and error class.
func (g *Group) attempt(r *results.Record) prometheus.Counter {
	i := r.Status
	if i < 0 || i > maxStatus {
		i = maxStatus + 1
	}
	if r.Error == "" {
		if c := g.answered[i].Load(); c != nil {
			return c.Counter
		}
		c := &statusCounter{g.t.attempts.WithLabelValues(g.label, statusLabel(i), "")}
		g.answered[i].CompareAndSwap(nil, c)
		return g.answered[i].Load().Counter
	}
	k := attemptKey{i, results.ClassOther}
	for _, c := range errorClasses {
		if r.Error == c {
			k.class = c
			break
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := g.failed[k]
	if !ok {
		c = g.t.attempts.WithLabelValues(g.label, statusLabel(i), k.class)
		g.failed[k] = c
	}
	return c
}

func statusLabel(i int) string {
	if i > maxStatus {
		return OtherGroup
	}
	return strconv.Itoa(i)
}

// Sender wraps next so that the requests it sends are counted as sent and
// in flight.
func (g *Group) Sender(next dispatch.Sender) dispatch.Sender { return sender{next, g} }

type sender struct {
	next dispatch.Sender
	g    *Group
}

func (s sender) Send(ctx context.Context, req dispatch.Request, record func(*results.Record)) {
	s.g.sent.Inc()
	s.g.t.inFlight.Inc()
	defer s.g.t.inFlight.Dec()
	s.next.Send(ctx, req, record)
}
