package admission

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestRetryQuotaArithmetic: the AWS standard quota (500, a retry takes 5,
// a first-attempt success gives 1 back, one after retries its last
// retry's cost) and gRPC's throttling (maxTokens, −1 per refusal,
// +tokenRatio per success, retries only above maxTokens/2).
func TestRetryQuotaArithmetic(t *testing.T) {
	t.Parallel()
	q, err := NewRetryQuota(StandardRetryQuota())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		q.refused() // costs nothing in standard mode
		if ok, cost, left := q.take(); !ok || cost != 5 || left != float64(495-5*i) {
			t.Fatalf("retry %d: %v %v %v", i+1, ok, cost, left)
		}
	}
	if ok, _, left := q.take(); ok || left != 0 {
		t.Fatalf("the 101st retry: allowed %v with %v left", ok, left)
	}
	q.succeeded(false) // a first-attempt success: +1
	if ok, _, _ := q.take(); ok || q.Tokens() != 1 {
		t.Fatalf("1 token allows a retry, or is not 1: %v", q.Tokens())
	}
	q.succeeded(true) // a success after a retry that took 5
	if ok, _, left := q.take(); !ok || left != 1 {
		t.Fatalf("6 tokens: retry %v, %v left", ok, left)
	}
	full, _ := NewRetryQuota(StandardRetryQuota())
	full.succeeded(true)
	if full.Tokens() != 500 {
		t.Fatalf("a full bucket grew to %v", full.Tokens())
	}

	g, err := NewRetryQuota(ThrottlingRetryQuota(10, 0.5))
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		g.refused()
	}
	if ok, cost, left := g.take(); !ok || cost != 0 || left != 6 {
		t.Fatalf("6 of 10 tokens: retry %v (cost %v, %v left)", ok, cost, left)
	}
	g.refused()
	if ok, _, _ := g.take(); ok {
		t.Fatal("5 of 10 tokens (maxTokens/2) allows a retry")
	}
	g.succeeded(false)
	g.succeeded(true) // a success after retries gives back tokenRatio too
	if ok, _, left := g.take(); !ok || left != 6 {
		t.Fatalf("6 tokens after two successes: retry %v, %v left", ok, left)
	}
	for range 20 {
		g.refused()
	}
	if g.Tokens() != 0 {
		t.Fatalf("refusals took the bucket to %v, want 0", g.Tokens())
	}
	for _, bad := range []RetryQuotaConfig{{}, {Capacity: 10, RetryCost: -1}, {Capacity: 10, RefusalCost: -1}, {Capacity: 10, Refund: -1}, {Capacity: 10, Floor: 10}} {
		if _, err := NewRetryQuota(bad); err == nil {
			t.Errorf("NewRetryQuota(%+v) accepted", bad)
		}
	}
}

// TestRetryQuotaEndsRetries: against a deployment that refuses every
// request, a client with a small quota retries until its tokens are spent
// and then sends each request once, giving up with its refusal (returned
// as it is with ReturnLastResponse); without the quota every request takes
// MaxAttempts.
func TestRetryQuotaEndsRetries(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, quota *RetryQuota) (sent int64, ds []Decision) {
		var hits atomic.Int64
		srv := answerAll(&hits, http.StatusTooManyRequests)
		p := Policy{MaxAttempts: 5, Budget: 5 * time.Second, RetryQuota: quota, ReturnLastResponse: true,
			Observe: func(d Decision) { ds = append(ds, d) }}
		tr, err := New(serveMem(t, srv), p)
		if err != nil {
			t.Fatal(err)
		}
		for range 10 {
			req, _ := http.NewRequest(http.MethodGet, "http://primary.invalid/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil || resp.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("%v %v: want the last refusal", resp, err)
			}
			resp.Body.Close()
		}
		return hits.Load(), ds
	}
	var plain, limited int64
	var ds []Decision
	synctest.Test(t, func(t *testing.T) { plain, _ = run(t, nil) })
	synctest.Test(t, func(t *testing.T) {
		cfg := StandardRetryQuota()
		cfg.Capacity = 20 // four retries' worth
		q, err := NewRetryQuota(cfg)
		if err != nil {
			t.Fatal(err)
		}
		limited, ds = run(t, q)
	})
	if plain != 50 || limited != 5+9 {
		t.Fatalf("attempts: %d without a quota (want 50), %d with 20 tokens (want 5, then 1 per request)", plain, limited)
	}
	if !strings.HasSuffix(ds[0].Reason.String(), "; the retry quota takes 5, 15 left; sleep") || ds[0].Action != ActionSleep {
		t.Errorf("the first retry: %+v", ds[0])
	}
	last := ds[len(ds)-1]
	if last.Action != ActionGiveUp || !strings.Contains(last.Reason.String(), "the retry quota's 0 tokens allow no retry (one takes 5, above 0); no fallback; give up") {
		t.Errorf("a refusal without tokens: %+v", last)
	}
}

// TestRetryQuotaRefunds: a 2xx after a retry gives its cost back, a 2xx
// on the first attempt 1; the fallback's answers neither spend nor earn.
func TestRetryQuotaRefunds(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		q, _ := NewRetryQuota(StandardRetryQuota())
		l := newLab(t, Policy{MaxAttempts: 3, Budget: time.Minute, RetryQuota: q, Fallback: toPath("/fb")}, map[string][]reply{
			"/a":  {refuse(429, "Retry-After-Ms", "100"), ok200},
			"/b":  {refuse(429, "Retry-After-Ms", "100000"), ok200},
			"/fb": {refuse(429, "Retry-After-Ms", "100"), ok200},
		})
		if st, _, err := l.do(t.Context(), http.MethodGet, "/a", ""); err != nil || st != 200 {
			t.Fatalf("%d %v", st, err)
		}
		if q.Tokens() != 500 {
			t.Fatalf("after a retry and its success: %v tokens, want 500", q.Tokens())
		}
		// /b: a wait past the budget redirects; the fallback refuses once
		// and is retried: no token taken, none given back.
		if st, _, err := l.do(t.Context(), http.MethodGet, "/b", ""); err != nil || st != 200 {
			t.Fatalf("%d %v", st, err)
		}
		if q.Tokens() != 500 {
			t.Fatalf("after the fallback's retry: %v tokens, want 500", q.Tokens())
		}
	})
}
