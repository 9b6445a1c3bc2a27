package admission

import (
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestThrottleArithmetic: the rejection probability is the book's
// max(0, (requests − K·accepts)/(requests + 1)) over the window's counts
// before the attempt; the attempt counts as a request, rejected or not;
// the counts age out with the window.
func TestThrottleArithmetic(t *testing.T) {
	t.Parallel()
	th, err := NewThrottle(DefaultThrottleConfig())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	never := func() float64 { t.Fatal("drew with p = 0"); return 0 }
	for i := range 10 {
		if v := th.offer(t0.Add(time.Duration(i)*time.Second), never); v.rejected || v.p != 0 {
			t.Fatalf("offer %d with every answer accepted: %+v", i, v)
		}
		th.accepted(t0.Add(time.Duration(i) * time.Second))
	}
	// 10 accepted of 10; 10 more that the backend refuses: p stays 0
	// until requests pass K × accepts = 20.
	for i := range 10 {
		if v := th.offer(t0.Add(10*time.Second), never); v.p != 0 {
			t.Fatalf("refused offer %d: p %v before requests pass 2 × accepts", i, v.p)
		}
	}
	// 20 requests, 10 accepts: p = max(0, (20 − 20)/21) = 0; one more
	// each time: 21 → 1/22, …
	for i := range 20 {
		want := max(0, float64(20+i-20)/float64(20+i+1))
		v := th.offer(t0.Add(11*time.Second), func() float64 { return want - 1e-9 })
		if math.Abs(v.p-want) > 1e-12 || v.requests != int64(20+i) || v.accepts != 10 || v.rejected != (want > 0) {
			t.Fatalf("offer with %d requests: %+v, want p %v", 20+i, v, want)
		}
	}
	// 40 requests, 10 accepts: p = 20/41; a draw at or above it goes.
	if v := th.offer(t0.Add(12*time.Second), fixed(20.0/41)); v.rejected || math.Abs(v.p-20.0/41) > 1e-12 {
		t.Fatalf("a draw at p is rejected: %+v", v)
	}
	if req, acc := th.Counts(t0.Add(12 * time.Second)); req != 41 || acc != 10 {
		t.Fatalf("counts %d, %d; want 41 requests (the rejected ones too), 10 accepts", req, acc)
	}
	// The window is 2 min in buckets of 2 s: the first second's counts
	// are gone 2 min later, all of them 2 min after the last.
	if req, acc := th.Counts(t0.Add(2 * time.Minute)); req != 39 || acc != 8 {
		t.Fatalf("counts 2 min on: %d, %d; want the first bucket (2 s: 2 requests, 2 accepts) aged out", req, acc)
	}
	if req, acc := th.Counts(t0.Add(12*time.Second + 2*time.Minute)); req != 0 || acc != 0 {
		t.Fatalf("counts after the window: %d, %d", req, acc)
	}
	for _, bad := range []ThrottleConfig{{K: 0.5, Window: time.Minute}, {K: math.Inf(1), Window: time.Minute}, {K: 2, Window: time.Millisecond}} {
		if _, err := NewThrottle(bad); err == nil {
			t.Errorf("NewThrottle(%+v) accepted", bad)
		}
	}
}

// answerAll answers every request with status, advising 10 ms, and
// counts them in hits.
func answerAll(hits *atomic.Int64, status int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Retry-After-Ms", "10")
		w.WriteHeader(status)
	})
}

// TestThrottleRejectsLocally: a client whose backend refuses everything
// stops sending most of its attempts — they are rejected locally, not
// sent, each observed as ClassThrottled with the numbers behind it — and a
// client whose backend accepts everything is never throttled.
func TestThrottleRejectsLocally(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, throttled bool, status int) (sent int64, ds []Decision) {
		var hits atomic.Int64
		srv := answerAll(&hits, status)
		p := Policy{MaxAttempts: 3, Budget: 5 * time.Second, Rand: rand.New(rand.NewPCG(1, 2)).Float64,
			Observe: func(d Decision) { ds = append(ds, d) }}
		if throttled {
			p.Throttle, _ = NewThrottle(DefaultThrottleConfig())
		}
		tr, err := New(serveMem(t, srv), p)
		if err != nil {
			t.Fatal(err)
		}
		for range 100 {
			req, _ := http.NewRequest(http.MethodGet, "http://primary.invalid/", nil)
			resp, err := tr.RoundTrip(req)
			var give *GiveUpError
			switch {
			case err == nil:
				resp.Body.Close()
			case !errors.As(err, &give):
				t.Fatal(err)
			}
		}
		return hits.Load(), ds
	}
	var plain, throttled int64
	var ds []Decision
	synctest.Test(t, func(t *testing.T) { plain, _ = run(t, false, 429) })
	synctest.Test(t, func(t *testing.T) { throttled, ds = run(t, true, 429) })
	local := 0
	for _, d := range ds {
		if d.Err == ClassThrottled {
			local++
			if d.Status != 0 || !strings.Contains(d.Reason.String(), "client-side throttling rejected it locally (p 0.") || !strings.Contains(d.Reason.String(), "K 2)") {
				t.Fatalf("a throttled attempt: %+v", d)
			}
		}
	}
	t.Logf("attempts sent to a backend refusing all: %d without the throttle, %d with (%d rejected locally)", plain, throttled, local)
	// A rejected attempt ends its request (no fallback): the 100 requests
	// send 3 attempts each without the throttle, and with it the few sent
	// before the rejections begin, and a trickle (p = n/(n+1) < 1).
	if plain != 300 || throttled > plain/10 || local < 90 || len(ds) != int(throttled)+local {
		t.Errorf("sent %d without, %d with the throttle and %d rejected locally: want most requests rejected locally", plain, throttled, local)
	}
	synctest.Test(t, func(t *testing.T) {
		if sent, ds := run(t, true, 200); sent != 100 || len(ds) != 100 {
			t.Errorf("a backend accepting all: %d sent, %d decisions; want no throttling", sent, len(ds))
		}
	})
}
