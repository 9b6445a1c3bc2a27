package admission

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// holdGate holds every attempt until a fixed time, refuses retries when
// told to, and records what it learns.
type holdGate struct {
	until   time.Time
	noRetry bool
	asks    int
	learned []Answer
}

func (g *holdGate) Admit(a Ask) Admission {
	g.asks++
	if a.Now.Before(g.until) {
		return Admission{At: g.until, Why: "the hold, until " + show(g.until.Sub(a.Now)) + ",", By: "the hold"}
	}
	return Admission{}
}

func (g *holdGate) Retry(Ask) (bool, string) {
	if g.noRetry {
		return false, "; the hold allows no retry"
	}
	return true, "; the hold allows it"
}

func (g *holdGate) Learn(a Answer) string {
	g.learned = append(g.learned, a)
	return "; the hold learned " + http.StatusText(a.Status)
}

// roundTrip sends one GET through a Transport of p over srv in memory.
func roundTrip(t *testing.T, srv http.Handler, p Policy) (*http.Response, error) {
	t.Helper()
	tr, err := New(serveMem(t, srv), p)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://primary.invalid/", nil)
	return tr.RoundTrip(req)
}

// TestGateHoldsWithinTheBudget: a Gate's At holds the attempt (Held) and
// the Transport asks again; an At past the budget refuses it locally,
// ClassGated, not sent.
func TestGateHoldsWithinTheBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		hold   time.Duration
		sent   int64
		class  string
		reason string
	}{
		{2 * time.Second, 1, "", "done"},
		{20 * time.Second, 0, ClassGated, "the hold, until 20s, does not come within the 10s left of the budget; give up"},
	} {
		synctest.Test(t, func(t *testing.T) {
			var hits atomic.Int64
			g := &holdGate{until: time.Now().Add(tc.hold)}
			var ds []Decision
			resp, err := roundTrip(t, answerAll(&hits, http.StatusOK), Policy{MaxAttempts: 1, Budget: 10 * time.Second,
				Gates: []Gate{g}, Observe: func(d Decision) { ds = append(ds, d) }})
			if err == nil {
				resp.Body.Close()
			}
			if hits.Load() != tc.sent || len(ds) != 1 || ds[0].Err != tc.class || !strings.Contains(ds[0].Reason.String(), tc.reason) {
				t.Fatalf("hold %v: %d sent, decisions %+v", tc.hold, hits.Load(), ds)
			}
			if tc.sent == 1 && (ds[0].Held != tc.hold || g.asks != 2 || len(g.learned) != 1 || g.learned[0].Status != 200 || g.learned[0].Refused) {
				t.Fatalf("held %v (want %v), asked %d times, learned %+v", ds[0].Held, tc.hold, g.asks, g.learned)
			}
		})
	}
}

// TestGateRetryAndLearn: a Gate that refuses retries ends a refused
// request after one attempt, its note in the Reason; one that allows
// them is told Retried on the answer after the retry.
func TestGateRetryAndLearn(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var hits atomic.Int64
		g := &holdGate{noRetry: true}
		var ds []Decision
		_, err := roundTrip(t, answerAll(&hits, http.StatusTooManyRequests), Policy{MaxAttempts: 3, Budget: 10 * time.Second,
			Gates: []Gate{g}, Observe: func(d Decision) { ds = append(ds, d) }})
		var give *GiveUpError
		if !errors.As(err, &give) || hits.Load() != 1 || len(ds) != 1 ||
			!strings.HasSuffix(ds[0].Reason.String(), "; the hold allows no retry; no fallback; give up; the hold learned Too Many Requests") {
			t.Fatalf("err %v, %d sent, %+v", err, hits.Load(), ds)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int64
		srv := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) == 1 {
				w.Header().Set("Retry-After-Ms", "10")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		g := &holdGate{}
		resp, err := roundTrip(t, srv, Policy{MaxAttempts: 3, Gates: []Gate{g}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(g.learned) != 2 || g.learned[0].Retried || !g.learned[0].Refused || g.learned[0].Wait != 10*time.Millisecond ||
			!g.learned[1].Retried || g.learned[1].Status != 200 || g.learned[1].Header == nil {
			t.Fatalf("learned %+v", g.learned)
		}
	})
}

// TestRuleIsHeldToTheBudget: a Rule's wait that does not fit the budget
// goes to the fallback; a Rule that declines ends the request; a Rule
// sees the Policy's own wait and the response.
func TestRuleIsHeldToTheBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		rule   Rule
		action Action
		reason string
	}{
		{"too long", func(r Refusal) (time.Duration, bool) { return time.Minute, true }, ActionRedirect,
			"advised 10ms; the Rule chose 1m0s, does not fit the 10s left of the budget; redirect to the fallback"},
		{"declines", func(r Refusal) (time.Duration, bool) { return 0, false }, ActionRedirect,
			"advised 10ms; the Rule declines the retry; redirect to the fallback"},
		{"as is", func(r Refusal) (time.Duration, bool) {
			if r.Wait != 10*time.Millisecond || r.Advised != 10*time.Millisecond || r.Status != 429 || r.Header.Get("Retry-After-Ms") != "10" || r.Left != 10*time.Second || r.Attempt != 1 {
				return 0, false
			}
			return r.Wait, true
		}, ActionSleep, "advised 10ms, fits the 10s left of the budget; sleep"},
	} {
		synctest.Test(t, func(t *testing.T) {
			var hits atomic.Int64
			var ds []Decision
			p := Policy{MaxAttempts: 2, Budget: 10 * time.Second, Rule: tc.rule, Observe: func(d Decision) { ds = append(ds, d) },
				Fallback: func(r *http.Request) (*http.Request, error) { return r, nil }}
			resp, err := roundTrip(t, answerAll(&hits, http.StatusTooManyRequests), p)
			if err == nil {
				resp.Body.Close()
			}
			if len(ds) == 0 || ds[0].Action != tc.action || ds[0].Reason.String() != tc.reason {
				t.Fatalf("%s: %+v", tc.name, ds)
			}
		})
	}
}

// TestNilGateIsRefused: a nil Gate is a validation error naming Gates.
func TestNilGateIsRefused(t *testing.T) {
	t.Parallel()
	_, err := New(nil, Policy{Gates: []Gate{nil}})
	var f interface{ Field() string }
	if !errors.As(err, &f) || f.Field() != "Gates" {
		t.Fatalf("New with a nil Gate: %v", err)
	}
}
