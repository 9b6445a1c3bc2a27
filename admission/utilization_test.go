package admission

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/retryafter"
)

// TestUtilizationSignal: a Pace with a utilization target reads each
// answer's utilization (or the used share of its remaining limits): over
// the target is congestion, held until the decline between the two latest
// readings, extrapolated no further than they are apart, brings it back
// under; a limit with nothing remaining holds until its reset.
func TestUtilizationSignal(t *testing.T) {
	t.Parallel()
	cfg := DefaultPaceConfig()
	cfg.Utilization = 90
	p, err := NewPace(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	util := func(pct float64) retryafter.Advice {
		return retryafter.Advice{UtilizationPct: pct, RemainingRequests: results.None, RemainingTokens: results.None,
			LimitRequests: results.None, LimitTokens: results.None, ResetRequestsMS: results.None, ResetTokensMS: results.None}
	}
	for _, c := range []struct {
		sent, now float64
		adv       retryafter.Advice
		want      paceSignal
	}{
		{0, 0.2, util(50), paceSignal{pct: 50, wait: -1, from: "utilization"}},
		{1, 1.2, util(95), paceSignal{pct: 95, wait: -1, over: true, from: "utilization"}}, // rising: no estimate
		// 95 → 93 in 0.5 s: 4%/s, 0.75 s to 90, at most the 0.5 s span:
		// until 2.0, 0.3 s after now.
		{1.5, 1.7, util(93), paceSignal{pct: 93, wait: 300 * time.Millisecond, over: true, from: "utilization"}},
		{1.2, 1.8, util(99), paceSignal{pct: 99, wait: -1, over: true, from: "utilization"}}, // older than the latest
		// 93 → 91 in 2 s: 1%/s, 1 s to 90.
		{3.5, 3.5, util(91), paceSignal{pct: 91, wait: time.Second, over: true, from: "utilization"}},
		{4, 4, util(90), paceSignal{pct: 90, wait: -1, from: "utilization"}}, // at the target is under it
	} {
		got, ok := p.signal(at(c.sent), at(c.now), c.adv)
		if !ok || got != c.want {
			t.Errorf("sent %vs: %+v %v, want %+v", c.sent, got, ok, c.want)
		}
	}
	limits := func(remReq, limReq int, resetReq float64, remTok, limTok int) retryafter.Advice {
		a := util(results.None)
		a.RemainingRequests, a.LimitRequests, a.ResetRequestsMS = remReq, limReq, resetReq
		a.RemainingTokens, a.LimitTokens = remTok, limTok
		return a
	}
	for _, c := range []struct {
		adv  retryafter.Advice
		want paceSignal
		ok   bool
	}{
		{limits(0, 60, 1500, 5000, 10000), paceSignal{pct: 100, wait: 1500 * time.Millisecond, over: true, from: "remaining"}, true},
		{limits(0, results.None, results.None, results.None, results.None), paceSignal{pct: 100, wait: -1, over: true, from: "remaining"}, true},
		{limits(6, 60, 1500, 5000, 10000), paceSignal{pct: 90, wait: -1, from: "remaining"}, true},
		{limits(30, 60, 1500, 500, 10000), paceSignal{pct: 95, wait: -1, over: true, from: "remaining"}, true},
		{limits(30, results.None, results.None, results.None, results.None), paceSignal{pct: -1, wait: -1, from: "remaining"}, false},
	} {
		if got, ok := p.signal(at(9), at(9), c.adv); ok != c.ok || got != c.want {
			t.Errorf("%+v: %+v %v, want %+v %v", c.adv, got, ok, c.want, c.ok)
		}
	}
	plain, _ := NewPace(DefaultPaceConfig())
	if _, ok := plain.signal(at(9), at(9), util(99)); ok {
		t.Error("a Pace without a target read the utilization")
	}
}

// bucketServer is a PTU in miniature: a leaky bucket depth seconds deep
// that drains rate requests a second; a request that finds it at or under
// 100% is admitted and adds one, one that finds it over is refused,
// advised the time until it is back at 100%. Every answer reports the
// utilization the request found, as azure-openai-deployment-utilization.
type bucketServer struct {
	rate, depth float64

	mu                sync.Mutex
	level             float64
	last              time.Time
	admitted, refused int
}

func (b *bucketServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if !b.last.IsZero() {
		b.level = max(0, b.level-b.rate*now.Sub(b.last).Seconds())
	}
	b.last = now
	capacity := b.rate * b.depth
	pct := 100 * b.level / capacity
	w.Header().Set("Azure-Openai-Deployment-Utilization", fmt.Sprintf("%.1f%%", pct))
	if pct > 100 {
		b.refused++
		w.Header().Set("Retry-After-Ms", strconv.Itoa(int(math.Ceil((b.level-capacity)/b.rate*1000))))
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	b.admitted++
	b.level++
	w.WriteHeader(http.StatusOK)
}

// TestPaceOnUtilization: one client offers 20 requests/s for 30 s to a
// deployment that drains 5/s from a bucket 4 s deep. Paced on refusals,
// it learns only from them; paced on the reported utilization (target
// 90%), it is cut before its first refusal and meets fewer.
func TestPaceOnUtilization(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, target float64) (b *bucketServer, firstCut, first429 int) {
		b = &bucketServer{rate: 5, depth: 4}
		cfg := DefaultPaceConfig()
		cfg.Utilization = target
		pace, err := NewPace(cfg)
		if err != nil {
			t.Fatal(err)
		}
		p := DefaultPolicy()
		p.MaxAttempts, p.Budget, p.Pace = 20, 5*time.Second, pace
		var mu sync.Mutex
		n := 0
		firstCut, first429 = -1, -1
		p.Observe = func(d Decision) {
			mu.Lock()
			defer mu.Unlock()
			n++
			if firstCut < 0 && strings.Contains(d.Reason.String(), "% is over the pace's target 90%: a congestion signal") {
				firstCut = n
			}
			if first429 < 0 && d.Status == http.StatusTooManyRequests {
				first429 = n
			}
		}
		steady(t, b, p, 600, 50*time.Millisecond)
		return b, firstCut, first429
	}
	var refusals, utilization *bucketServer
	var cut, first429 int
	synctest.Test(t, func(t *testing.T) { refusals, _, _ = run(t, 0) })
	synctest.Test(t, func(t *testing.T) { utilization, cut, first429 = run(t, 90) })
	t.Logf("paced on refusals: %d admitted, %d refused; on utilization: %d admitted, %d refused (first cut at decision %d, first 429 at %d)",
		refusals.admitted, refusals.refused, utilization.admitted, utilization.refused, cut, first429)
	if cut < 0 || (first429 >= 0 && cut > first429) {
		t.Errorf("the first utilization cut at decision %d, the first refusal at %d: want the cut first", cut, first429)
	}
	// Measured: 7 refusals and 192 admitted on refusals alone; 3 and 168
	// on utilization, which keeps a tenth of the bucket free and is cut
	// a little by each reading over the target.
	if !(utilization.refused < refusals.refused) {
		t.Errorf("refusals: %d on utilization, %d on refusals alone: want fewer", utilization.refused, refusals.refused)
	}
	if utilization.admitted < refusals.admitted*8/10 {
		t.Errorf("admitted: %d on utilization, %d on refusals alone", utilization.admitted, refusals.admitted)
	}
}
