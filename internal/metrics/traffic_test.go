package metrics

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/results"
)

func newTraffic(t testing.TB) (*Traffic, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	tr, err := NewTraffic(reg)
	if err != nil {
		t.Fatal(err)
	}
	return tr, reg
}

func record(group string, attempt, status int, class string, waitMS, intended, sent float64) *results.Record {
	r := results.Blank()
	r.Group, r.Attempt, r.Status, r.Error, r.IntendedMS, r.SentMS = group, attempt, status, class, intended, sent
	if waitMS >= 0 {
		r.WaitMS, r.WaitSource = waitMS, results.WaitRetryAfterMS
	}
	return &r
}

// TestTrafficCounts: every Record sent is one attempt under its status
// and error class; 429s, retries, waits and lateness as the Records say;
// a Record not sent is counted by its decision alone (it was once an
// attempt of status 0 and error "other", sent on time).
func TestTrafficCounts(t *testing.T) {
	t.Parallel()
	tr, reg := newTraffic(t)
	g := tr.Plan("night-run", 5)
	for _, r := range []*results.Record{
		record("night-run", 1, 200, "", -1, 0, 0.05),
		record("night-run", 1, 429, "", 1500, 10, 10.2),
		record("night-run", 2, 429, "", 20, 1520, 1521),
		record("night-run", 3, 200, "", -1, 1550, 1550),
		record("night-run", 1, 0, results.ClassTimeout, -1, 20, 30),
		record("night-run", 1, 0, "dial tcp canary.example: refused", -1, 30, 29), // not a class; sent "early"
		record("night-run", 1, 200, results.ClassBody, -1, 40, 40),
		record("night-run", 1, 1000, "", -1, 50, 50),
		notSent("night-run", 1, results.DecisionGiveUpLocal, results.ClassPaced),
		notSent("night-run", 2, results.DecisionGiveUpLocal, results.ClassCooldown),
		notSent("night-run", 1, results.DecisionInterrupted, results.ClassCanceled),
	} {
		g.Observe(r)
	}
	want := `
# HELP ptuprobe_attempts_not_sent_total Attempts that ended their request unsent (rows of decision give-up-local or interrupted), by group and decision; not counted as attempts.
# TYPE ptuprobe_attempts_not_sent_total counter
ptuprobe_attempts_not_sent_total{decision="give-up-local",group="night-run"} 2
ptuprobe_attempts_not_sent_total{decision="interrupted",group="night-run"} 1
# HELP ptuprobe_attempts_total Attempts recorded (one per results row sent), by group, HTTP status (0: no response) and error class.
# TYPE ptuprobe_attempts_total counter
ptuprobe_attempts_total{error="",group="night-run",status="200"} 2
ptuprobe_attempts_total{error="",group="night-run",status="429"} 2
ptuprobe_attempts_total{error="",group="night-run",status="other"} 1
ptuprobe_attempts_total{error="body",group="night-run",status="200"} 1
ptuprobe_attempts_total{error="other",group="night-run",status="0"} 1
ptuprobe_attempts_total{error="timeout",group="night-run",status="0"} 1
# HELP ptuprobe_http_429_total Attempts answered 429.
# TYPE ptuprobe_http_429_total counter
ptuprobe_http_429_total{group="night-run"} 2
# HELP ptuprobe_retries_total Attempts after a request's first (attempt > 1), made by the retry owner.
# TYPE ptuprobe_retries_total counter
ptuprobe_retries_total{group="night-run"} 2
# HELP ptuprobe_requests_planned_total Requests (first attempts) the plans started so far will send.
# TYPE ptuprobe_requests_planned_total counter
ptuprobe_requests_planned_total{group="night-run"} 5
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"ptuprobe_attempts_total", "ptuprobe_http_429_total", "ptuprobe_retries_total", "ptuprobe_requests_planned_total",
		"ptuprobe_attempts_not_sent_total"); err != nil {
		t.Error(err)
	}
	waits := tr.hists[histWaits].WithLabelValues("night-run").(prometheus.Histogram)
	late := tr.hists[histLateness].WithLabelValues("night-run").(prometheus.Histogram)
	if n, sum := histogram(t, waits); n != 2 || sum != 1.52 {
		t.Errorf("waits: %d, sum %v", n, sum)
	}
	if n, sum := histogram(t, late); n != 8 || sum < 0.01124 || sum > 0.01126 { // 0.05+0.2+1+10 ms; the early one counts 0
		t.Errorf("lateness: %d, sum %v", n, sum)
	}
}

// TestTokenHistograms: a Record with token timing is observed in the
// TTFT, TPOT and ITL histograms, in seconds; one without (not streamed,
// or one token) leaves them alone.
func TestTokenHistograms(t *testing.T) {
	t.Parallel()
	tr, _ := newTraffic(t)
	g := tr.Plan("chat", 3)
	streamed := record("chat", 1, 200, "", -1, 0, 0)
	streamed.TTFTMS, streamed.TPOTMS, streamed.ITLP50MS, streamed.ITLMaxMS = 120, 8, 6, 40
	oneToken := record("chat", 1, 200, "", -1, 0, 0)
	oneToken.TTFTMS = 250
	for _, r := range []*results.Record{streamed, oneToken, record("chat", 1, 200, "", -1, 0, 0), record("chat", 1, 429, "", 100, 0, 0)} {
		g.Observe(r)
	}
	for _, c := range []struct {
		name string
		h    *prometheus.HistogramVec
		n    uint64
		sum  float64
	}{{"ttft", tr.hists[histTTFT], 2, 0.37}, {"tpot", tr.hists[histTPOT], 1, 0.008}, {"itl", tr.hists[histITL], 1, 0.006}} {
		if n, sum := histogram(t, c.h.WithLabelValues("chat").(prometheus.Histogram)); n != c.n || math.Abs(sum-c.sum) > 1e-12 {
			t.Errorf("%s: %d observations, sum %v; want %d, %v", c.name, n, sum, c.n, c.sum)
		}
	}
}

// notSent is a Record of an attempt never sent, ended by decision.
func notSent(group string, attempt int, decision, class string) *results.Record {
	r := record(group, attempt, 0, class, -1, 60, results.None)
	r.Decision, r.LatencyMS = decision, results.None
	return r
}

func histogram(t *testing.T, h prometheus.Histogram) (uint64, float64) {
	t.Helper()
	var m dto.Metric
	if err := h.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}

// TestGroupLabelsAreBounded: past MaxGroups groups, the rest share one
// label.
func TestGroupLabelsAreBounded(t *testing.T) {
	t.Parallel()
	tr, reg := newTraffic(t)
	for i := range MaxGroups + 5 {
		name := "g" + strconv.Itoa(i)
		tr.Plan(name, 1).Observe(record(name, 1, 200, "", -1, 0, 0))
	}
	if n := testutil.CollectAndCount(tr.attempts); n != MaxGroups+1 {
		t.Errorf("%d attempts series, want %d", n, MaxGroups+1)
	}
	if v := testutil.ToFloat64(tr.attempts.WithLabelValues(OtherGroup, "200", "")); v != 5 {
		t.Errorf("other: %v", v)
	}
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
}

// instant is a Sender that records one 200 at once, or, with channels,
// says it has been entered and waits for release.
type instant struct{ entered, release chan struct{} }

func (s instant) Send(_ context.Context, req dispatch.Request, record func(*results.Record)) {
	if s.release != nil {
		s.entered <- struct{}{}
		<-s.release
	}
	r := req.First()
	r.Status = 200
	record(&r)
}

// TestSenderCountsSentAndInFlight: a request is in flight from Send to its
// return, and counted as sent once.
func TestSenderCountsSentAndInFlight(t *testing.T) {
	t.Parallel()
	tr, _ := newTraffic(t)
	g := tr.Plan("burst-shaped", 3)
	entered, release := make(chan struct{}), make(chan struct{})
	s := g.Sender(instant{entered, release})
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			first := results.Blank()
			first.Group, first.Attempt = "burst-shaped", 1
			s.Send(context.Background(), dispatch.Request{Shared: &dispatch.Shared{Row: first}, Wave: first.Wave}, g.Observe)
		})
	}
	for range 3 {
		<-entered
	}
	if v := testutil.ToFloat64(tr.inFlight); v != 3 {
		t.Errorf("in flight %v, want 3", v)
	}
	if v := testutil.ToFloat64(tr.sent.WithLabelValues("burst-shaped")); v != 3 {
		t.Errorf("sent %v", v)
	}
	close(release)
	wg.Wait()
	if v := testutil.ToFloat64(tr.inFlight); v != 0 {
		t.Errorf("in flight after every answer: %v", v)
	}
	if v := testutil.ToFloat64(tr.attempts.WithLabelValues("burst-shaped", "200", "")); v != 3 {
		t.Errorf("attempts %v", v)
	}
}

// TestObserveAllocatesNothing: once a status has been seen, observing a
// Record allocates nothing (the hot path at thousands a second).
func TestObserveAllocatesNothing(t *testing.T) {
	tr, _ := newTraffic(t)
	g := tr.Plan("scheduled-shaped", 1)
	recs := []*results.Record{
		record("scheduled-shaped", 1, 200, "", -1, 10, 10.1),
		record("scheduled-shaped", 2, 429, "", 250, 10, 10.1),
		record("scheduled-shaped", 1, 0, results.ClassReset, -1, 10, 10.1),
	}
	for _, r := range recs {
		g.Observe(r)
	}
	if n := testing.AllocsPerRun(1000, func() {
		for _, r := range recs {
			g.Observe(r)
		}
	}); n != 0 {
		t.Errorf("%v allocations per round", n)
	}
}
