package admission

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestSlowRefusalBodySpendsTheBudget: the budget bounds the whole request,
// a refusal's body included. The decision is on the time the body was
// read, and the read itself ends when the budget does, so no attempt is
// sent after the budget. (It was decided on the time the headers came: a
// retry then went out after the slow body, 3 s past a 1 s budget.)
func TestSlowRefusalBodySpendsTheBudget(t *testing.T) {
	t.Parallel()
	slow := func(advisedMs string, bodyDelay time.Duration) reply {
		r := refuse(429, "Retry-After-Ms", advisedMs)
		r.bodyDelay = bodyDelay
		return r
	}
	tests := []struct {
		name     string
		policy   Policy
		primary  reply
		wantEnd  time.Duration // when RoundTrip returned
		wantWhy  string        // a substring of the give-up's reason
		wantBody string        // what the caller reads, with ReturnLastResponse
		wantErr  error         // and the error after it
	}{
		{
			name:    "a body slower than the budget is cut at the budget",
			policy:  Policy{MaxAttempts: 3, Budget: time.Second},
			primary: slow("10", 3*time.Second),
			wantEnd: time.Second,
			wantWhy: "advised 10ms, does not fit the 0s left of the budget; no fallback; give up",
		},
		{
			name:    "a wait that fitted when the headers came does not fit once the body is read",
			policy:  Policy{MaxAttempts: 3, Budget: time.Second},
			primary: slow("300", 800*time.Millisecond),
			wantEnd: 800 * time.Millisecond,
			wantWhy: "advised 300ms, does not fit the 200ms left of the budget",
		},
		{
			name:    "no redirect after the budget, RedirectFirst neither",
			policy:  Policy{MaxAttempts: 3, Budget: time.Second, RedirectFirst: true, Fallback: toPath("/fallback")},
			primary: slow("10", 3*time.Second),
			wantEnd: time.Second,
			wantWhy: "the budget is spent; give up",
		},
		{
			name:     "the refusal returned on give-up says its body was cut",
			policy:   Policy{MaxAttempts: 3, Budget: time.Second, ReturnLastResponse: true},
			primary:  slow("10", 3*time.Second),
			wantEnd:  time.Second,
			wantBody: "",
			wantErr:  errBodyPastBudget,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				l := newLab(t, tt.policy, map[string][]reply{"/": {tt.primary, ok200}, "/fallback": {ok200}})
				req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://primary.invalid/", nil)
				resp, err := l.tr.RoundTrip(req)
				if end := time.Since(l.start); end != tt.wantEnd {
					t.Errorf("RoundTrip returned at %v, want %v", end, tt.wantEnd)
				}
				if n := len(l.srv.hits); n != 1 {
					t.Errorf("%d attempts sent, want 1 (none after the budget)", n)
				}
				if tt.policy.ReturnLastResponse {
					if err != nil {
						t.Fatal(err)
					}
					body, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 429 || string(body) != tt.wantBody || !errors.Is(err, tt.wantErr) {
						t.Fatalf("status %d, body %q, error %v", resp.StatusCode, body, err)
					}
					return
				}
				var g *GiveUpError
				if !errors.As(err, &g) || g.Attempts != 1 || !strings.Contains(g.Reason.String(), tt.wantWhy) {
					t.Fatalf("error %v, want a give-up after 1 attempt: %q", err, tt.wantWhy)
				}
			})
		})
	}
}

// TestSlowRefusalBodyWithinTheBudget: a body that comes within the budget
// is read whole and its time counted before the wait.
func TestSlowRefusalBodyWithinTheBudget(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := refuse(429, "Retry-After-Ms", "100")
		r.bodyDelay = 500 * time.Millisecond
		l := newLab(t, Policy{MaxAttempts: 3, Budget: time.Second}, map[string][]reply{"/": {r, ok200}})
		status, _, err := l.do(t.Context(), "GET", "/", "")
		if err != nil || status != 200 {
			t.Fatalf("status %d, error %v", status, err)
		}
		if got := l.srv.offsets("/", l.start); len(got) != 2 || got[1] != 600*time.Millisecond {
			t.Fatalf("attempts at %v, want [0s 600ms]", got)
		}
	})
}

// roundTripperFunc is an http.RoundTripper made of a function.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestNextReturnsNothing: a RoundTripper below that breaks its contract
// with (nil, nil) is an error, as http.Client makes it, not a panic.
func TestNextReturnsNothing(t *testing.T) {
	t.Parallel()
	var ds []Decision
	p := DefaultPolicy()
	p.Observe = func(d Decision) { ds = append(ds, d) }
	tr, err := New(roundTripperFunc(func(*http.Request) (*http.Response, error) { return nil, nil }), p)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", "http://127.0.0.1:1/", nil)
	resp, err := tr.RoundTrip(req)
	if resp != nil || err == nil || !strings.Contains(err.Error(), "nil *Response with a nil error") {
		t.Fatalf("response %v, error %v", resp, err)
	}
	if len(ds) != 1 || ds[0].Err != ClassTransport || ds[0].Action != ActionDone {
		t.Fatalf("decisions %+v", ds)
	}
}
