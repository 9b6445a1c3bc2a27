package admission

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/memnet"
	"github.com/ptuprobe/ptuprobe/results"
)

func TestNewValidates(t *testing.T) {
	t.Parallel()
	fb := toPath("/fallback")
	bad := []struct {
		field string
		p     Policy
	}{
		{"MaxAttempts", Policy{MaxAttempts: -1}},
		{"Budget", Policy{Budget: -1}},
		{"Jitter", Policy{Jitter: -0.1}},
		{"Jitter", Policy{Jitter: math.Inf(-1)}},
		{"Jitter", Policy{Jitter: 1.5}},
		{"Jitter", Policy{Jitter: math.NaN()}},
		{"Jitter", Policy{Jitter: math.Inf(1)}},
		{"MaxWait", Policy{MaxWait: -time.Second}},
		{"OverMaxWait", Policy{OverMaxWait: 7}},
		{"Advice", Policy{Advice: -1}},
		{"RedirectFirst", Policy{RedirectFirst: true}},
		{"SharedCooldown", Policy{SharedCooldown: true, Advice: IgnoreAdvice}},
		{"MaxReplayBody", Policy{MaxReplayBody: -1}},
		{"Statuses", Policy{Statuses: []int{429, 200}}},
		{"Statuses", Policy{Statuses: []int{600}}},
	}
	for _, b := range bad {
		_, err := New(nil, b.p)
		var f interface{ Field() string }
		if !errors.As(err, &f) || f.Field() != b.field {
			t.Errorf("%+v: error %v, want one naming %s", b.p, err, b.field)
		}
	}
	good := []Policy{
		{},
		DefaultPolicy(),
		{MaxAttempts: 1, MaxWait: time.Minute, OverMaxWait: BackoffOverMaxWait},
		{Jitter: 1, Advice: IgnoreAdvice, Backoff: Constant(time.Second)},
		{Fallback: fb, RedirectFirst: true, Statuses: []int{429, 503, 529}, SharedCooldown: true},
	}
	for _, p := range good {
		if _, err := New(nil, p); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
	// The zero numbers mean none; only the settings unusable at zero take
	// a default.
	tr, _ := New(nil, Policy{})
	if tr.next != http.DefaultTransport || tr.p.MaxAttempts != 1 || tr.p.Budget != 0 || tr.p.Jitter != 0 ||
		tr.p.Backoff == nil || tr.p.MaxReplayBody != defaultMaxReplayBody || !slices.Equal(tr.p.Statuses, []int{429, 503}) {
		t.Errorf("zero Policy: %+v", tr.p)
	}
	tr, _ = New(nil, DefaultPolicy())
	if tr.p.MaxAttempts != DefaultMaxAttempts || tr.p.Budget != DefaultBudget || tr.p.Jitter != DefaultJitter ||
		tr.p.Advice != HonourAdvice || tr.p.Fallback != nil || tr.p.MaxReplayBody != defaultMaxReplayBody {
		t.Errorf("DefaultPolicy: %+v", tr.p)
	}
	statuses := []int{429}
	tr, _ = New(nil, Policy{Statuses: statuses})
	statuses[0] = 503
	if tr.p.Statuses[0] != 429 {
		t.Error("the Transport shares the caller's Statuses slice")
	}
}

func TestActionsAreResultsDecisions(t *testing.T) {
	t.Parallel()
	for a, want := range map[Action]string{
		ActionDone: results.DecisionDone, ActionSleep: results.DecisionSleep,
		ActionRedirect: results.DecisionRedirect, ActionGiveUp: results.DecisionGiveUp,
	} {
		if string(a) != want {
			t.Errorf("%q != results %q", a, want)
		}
	}
	if ClassCanceled != results.ClassCanceled || ClassTimeout != results.ClassTimeout {
		t.Error("error classes differ from results'")
	}
}

// TestCancelDuringWait: a cancel during a 10 s wait returns at once with
// the context's error, and the attempt that was not sent is observed.
func TestCancelDuringWait(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var seen []Attempt
		l := newLab(t, Policy{MaxAttempts: DefaultMaxAttempts, Budget: DefaultBudget, Jitter: DefaultJitter, Rand: fixed(0)}, map[string][]reply{"/": {refuse(429, "Retry-After", "10"), ok200}})
		ctx, cancel := context.WithCancel(t.Context())
		ctx = WithAttemptObserver(ctx, func(a Attempt) { seen = append(seen, a) })
		time.AfterFunc(time.Second, cancel)
		start := time.Now()
		_, _, err := l.do(ctx, "GET", "/", "")
		if !errors.Is(err, context.Canceled) || time.Since(start) != time.Second {
			t.Fatalf("error %v after %v, want context.Canceled after 1s", err, time.Since(start))
		}
		ds := l.recorded()
		if len(ds) != 2 || ds[0].Action != ActionSleep || ds[1].Action != ActionDone || ds[1].Err != ClassCanceled ||
			ds[1].Attempt != 2 || ds[1].Status != 0 {
			t.Fatalf("decisions %+v", ds)
		}
		if len(seen) != 2 || !seen[1].Sent.IsZero() || !seen[1].Planned.Equal(start.Add(10*time.Second)) || !errors.Is(seen[1].Err, context.Canceled) {
			t.Fatalf("attempts %+v", seen)
		}
		if n := len(l.srv.seen("/")); n != 1 {
			t.Fatalf("server saw %d requests", n)
		}
	})
}

// bodyTracker wraps a RoundTripper and counts closes of response bodies.
type bodyTracker struct {
	next   http.RoundTripper
	opened atomic.Int64
	closed atomic.Int64
}

func (b *bodyTracker) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(r)
	if err == nil {
		b.opened.Add(1)
		resp.Body = &trackedBody{ReadCloser: resp.Body, closed: &b.closed}
	}
	return resp, err
}

type trackedBody struct {
	io.ReadCloser
	closed *atomic.Int64
}

func (t *trackedBody) Close() error {
	t.closed.Add(1)
	return t.ReadCloser.Close()
}

// TestGiveUpAndReturnLastResponse: a give-up closes every refusal's body
// and returns a *GiveUpError (errors.As through http.Client); with
// ReturnLastResponse the last refusal comes back unread, as the SDKs do.
func TestGiveUpAndReturnLastResponse(t *testing.T) {
	t.Parallel()
	for _, returnLast := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			srv := newScript(map[string][]reply{"/": {{status: 429, header: map[string]string{"Retry-After-Ms": "1000"}, body: "refused"}}})
			tracker := &bodyTracker{next: serveMem(t, srv)}
			var ds []Attempt
			tr, err := New(tracker, Policy{Budget: DefaultBudget, Jitter: DefaultJitter, MaxAttempts: 2, ReturnLastResponse: returnLast})
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequestWithContext(WithAttemptObserver(t.Context(), func(a Attempt) { ds = append(ds, a) }), "GET", "http://primary.invalid/", nil)
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if len(ds) != 2 || ds[1].Action != ActionGiveUp || ds[0].Done.IsZero() {
				t.Fatalf("attempts %+v", ds)
			}
			if !returnLast {
				var g *GiveUpError
				if !errors.As(err, &g) || g.Attempts != 2 || g.LastStatus != 429 || g.LastWait != time.Second {
					t.Fatalf("error %v", err)
				}
				if tracker.closed.Load() != 2 || ds[1].Done.IsZero() {
					t.Fatalf("%d of 2 refusal bodies closed; last done %v", tracker.closed.Load(), ds[1].Done)
				}
				return
			}
			if err != nil || resp.StatusCode != 429 || !ds[1].Done.IsZero() || tracker.closed.Load() != 1 {
				t.Fatalf("response %v, error %v, %d bodies closed, last done %v", resp, err, tracker.closed.Load(), ds[1].Done)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "refused" || resp.Header.Get("Retry-After-Ms") != "1000" {
				t.Fatalf("body %q, header %v", b, resp.Header)
			}
		})
	}
}

// TestReplay: every attempt, the fallback's included, carries the same
// body, from GetBody or from the bounded buffer; a body that cannot be
// replayed is refused before anything is sent.
func TestReplay(t *testing.T) {
	t.Parallel()
	const payload = `{"messages":[{"role":"user","content":"hi"}]}`
	type bodyKind int
	const (
		withGetBody bodyKind = iota
		withoutGetBody
	)
	tests := []struct {
		name        string
		kind        bodyKind
		policy      Policy
		wantErr     *ReplayError
		wantBodies  int // requests the server saw, all with payload
		wantGetBody int
	}{
		{name: "GetBody", kind: withGetBody, wantBodies: 3, wantGetBody: 2},
		{name: "buffered", kind: withoutGetBody, wantBodies: 3},
		{name: "buffered at the limit", kind: withoutGetBody, policy: Policy{MaxReplayBody: int64(len(payload))}, wantBodies: 3},
		{name: "over the limit", kind: withoutGetBody, policy: Policy{MaxReplayBody: int64(len(payload) - 1)}, wantErr: &ReplayError{Limit: int64(len(payload) - 1)}},
		{name: "one attempt: nothing buffered", kind: withoutGetBody, policy: Policy{MaxAttempts: 1, MaxReplayBody: 1, ReturnLastResponse: true}, wantBodies: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				p := tt.policy
				if p.MaxAttempts == 0 {
					p.MaxAttempts = DefaultMaxAttempts
				}
				p.Fallback, p.Budget = toPath("/fallback"), DefaultBudget
				l := newLab(t, p, map[string][]reply{
					"/":         {refuse(429, "Retry-After-Ms", "100"), refuse(429, "Retry-After", "3600")},
					"/fallback": {ok200},
				})
				var closed atomic.Bool
				body := &closeFlag{Reader: strings.NewReader(payload), closed: &closed}
				req, _ := http.NewRequestWithContext(t.Context(), "POST", "http://primary.invalid/", body)
				req.ContentLength = int64(len(payload))
				getBody := 0
				if tt.kind == withGetBody {
					req.GetBody = func() (io.ReadCloser, error) {
						getBody++
						return io.NopCloser(strings.NewReader(payload)), nil
					}
				}
				resp, err := l.tr.RoundTrip(req)
				if resp != nil {
					resp.Body.Close()
				}
				if tt.wantErr != nil {
					var re *ReplayError
					if !errors.As(err, &re) || *re != *tt.wantErr {
						t.Fatalf("error %v, want %v", err, tt.wantErr)
					}
				} else if err != nil {
					t.Fatal(err)
				}
				hits := append(l.srv.seen("/"), l.srv.seen("/fallback")...)
				if len(hits) != tt.wantBodies {
					t.Fatalf("server saw %d requests, want %d", len(hits), tt.wantBodies)
				}
				for _, h := range hits {
					if h.body != payload {
						t.Fatalf("%s got body %q", h.path, h.body)
					}
				}
				synctest.Wait() // the HTTP transport closes a body it sent on its own goroutine
				if !closed.Load() {
					t.Error("the original body was not closed")
				}
				if getBody != tt.wantGetBody {
					t.Errorf("GetBody called %d times, want %d", getBody, tt.wantGetBody)
				}
			})
		})
	}
}

// closeFlag is a request body that records its Close, which the HTTP
// transport may call from its own goroutine.
type closeFlag struct {
	io.Reader
	closed *atomic.Bool
}

func (c *closeFlag) Close() error { c.closed.Store(true); return nil }

// TestSDKRetryMarker: a request an SDK marked as its retry is refused
// before sending, or let through and counted; a request marked 0 is sent
// with the header as it is, and with MarkRetries this owner's retries
// carry their retry number.
func TestSDKRetryMarker(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		value      string
		allow      bool
		mark       bool
		refused    bool
		wantErr    int      // DoubleOwnerError.RetryCount, when refused
		wantSent   []string // the header values the server saw
		wantCounts int64
	}{
		{name: "an SDK retry is refused", value: "1", refused: true, wantErr: 1},
		{name: "an SDK retry, let through and counted", value: "2", allow: true, wantSent: []string{"2", "2"}, wantCounts: 1},
		{name: "an SDK retry, let through, counted, marked", value: "2", allow: true, mark: true, wantSent: []string{"2", "3"}, wantCounts: 1},
		{name: "an SDK's first attempt", value: "0", wantSent: []string{"0", "0"}},
		{name: "an SDK's first attempt, marked", value: "0", mark: true, wantSent: []string{"0", "1"}},
		// Only a plain 0 proves a first attempt: anything else is a retry
		// of unknown number (it once slipped past as 0).
		{name: "past int64 is a retry", value: "99999999999999999999", refused: true, wantErr: -1},
		{name: "a fraction is a retry", value: "1.0", refused: true, wantErr: -1},
		{name: "a sign is a retry", value: "+1", refused: true, wantErr: -1},
		{name: "a negative count is a retry", value: "-1", refused: true, wantErr: -1},
		{name: "no number is a retry", value: "x", refused: true, wantErr: -1},
		{name: "no number, let through and marked: unchanged", value: "x", allow: true, mark: true, wantSent: []string{"x", "x"}, wantCounts: 1},
		// It once wrapped negative.
		{name: "MaxInt64, marked, does not wrap", value: "9223372036854775807", allow: true, mark: true,
			wantSent: []string{"9223372036854775807", "9223372036854775808"}, wantCounts: 1},
		{name: "no header", mark: true, wantSent: []string{"", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				l := newLab(t, Policy{MaxAttempts: DefaultMaxAttempts, Budget: DefaultBudget, Jitter: DefaultJitter, AllowSDKRetries: tt.allow, MarkRetries: tt.mark}, map[string][]reply{"/": {refuse(429, "Retry-After-Ms", "10"), ok200}})
				var closed atomic.Bool
				req, _ := http.NewRequestWithContext(t.Context(), "POST", "http://primary.invalid/", &closeFlag{Reader: strings.NewReader("{}"), closed: &closed})
				if tt.value != "" {
					req.Header.Set(SDKRetryHeader, tt.value)
				}
				resp, err := l.tr.RoundTrip(req)
				if tt.refused {
					var d *DoubleOwnerError
					if !errors.As(err, &d) || d.RetryCount != tt.wantErr || !closed.Load() || len(l.srv.seen("/")) != 0 || len(l.recorded()) != 0 {
						t.Fatalf("error %v, body closed %v, %d sent", err, closed.Load(), len(l.srv.seen("/")))
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				var sent []string
				for _, h := range l.srv.seen("/") {
					sent = append(sent, h.header.Get(SDKRetryHeader))
				}
				if !slices.Equal(sent, tt.wantSent) || l.tr.SDKRetries() != tt.wantCounts {
					t.Fatalf("server saw %q, counted %d", sent, l.tr.SDKRetries())
				}
				if req.Header.Get(SDKRetryHeader) != tt.value {
					t.Fatal("the caller's request was modified")
				}
			})
		})
	}
}

// TestObserversSeeEveryAttempt: Observe and WithAttemptObserver see one
// record per attempt the server saw, numbered, with consistent times.
func TestObserversSeeEveryAttempt(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := newLab(t, Policy{Jitter: DefaultJitter, MaxAttempts: 4, Rand: fixed(0.5), Backoff: Constant(300 * time.Millisecond), Fallback: toPath("/fallback"), Budget: 5 * time.Second},
			map[string][]reply{
				"/":         {refuse(429, "Retry-After-Ms", "1000"), {status: 429, delay: 200 * time.Millisecond}, refuse(429, "Retry-After", "60")},
				"/fallback": {{status: 200, body: "ok", delay: 50 * time.Millisecond}},
			})
		var seen []Attempt
		ctx := WithAttemptObserver(t.Context(), func(a Attempt) { seen = append(seen, a) })
		start := time.Now()
		status, _, err := l.do(ctx, "GET", "/", "")
		if err != nil || status != 200 {
			t.Fatal(status, err)
		}
		ds := l.recorded()
		hits := len(l.srv.seen("/")) + len(l.srv.seen("/fallback"))
		if len(ds) != hits || len(seen) != hits || hits != 4 {
			t.Fatalf("%d decisions, %d attempts, %d requests", len(ds), len(seen), hits)
		}
		wantActions := []Action{ActionSleep, ActionSleep, ActionRedirect, ActionDone}
		if !slices.Equal(actions(ds), wantActions) {
			t.Fatalf("actions %v", actions(ds))
		}
		at := append(l.srv.offsets("/", start), l.srv.offsets("/fallback", start)...)
		for i, a := range seen {
			if !reflect.DeepEqual(a.Decision, ds[i]) || a.Attempt != i+1 {
				t.Fatalf("attempt %d: %+v differs from decision %+v", i+1, a.Decision, ds[i])
			}
			if a.Sent.Sub(start) != at[i] || a.Sent.Before(a.Planned) || a.Headers.Before(a.Sent) || a.Header == nil || a.Status == 0 {
				t.Fatalf("attempt %d: planned %v sent %v headers %v, server saw it at %v", i+1, a.Planned.Sub(start), a.Sent.Sub(start), a.Headers.Sub(start), at[i])
			}
			if i == 0 && !a.Planned.Equal(start) {
				t.Fatalf("first attempt planned at %v, want when RoundTrip was called", a.Planned.Sub(start))
			}
			if i > 0 && !a.Planned.Equal(seen[i-1].Done.Add(seen[i-1].Slept)) {
				t.Fatalf("attempt %d planned at %v, want the previous done %v + slept %v", i+1, a.Planned.Sub(start), seen[i-1].Done.Sub(start), seen[i-1].Slept)
			}
			if last := i == len(seen)-1; last != a.Done.IsZero() {
				t.Fatalf("attempt %d done at %v", i+1, a.Done)
			}
			if a.Fallback != (i == 3) {
				t.Fatalf("attempt %d fallback %v", i+1, a.Fallback)
			}
		}
		if seen[0].Header.Get("Retry-After-Ms") != "1000" || seen[0].Wait != time.Second || seen[0].WaitSource != results.WaitRetryAfterMS {
			t.Fatalf("first attempt %+v", seen[0])
		}
		if seen[1].Wait != -1 || seen[1].Slept != 300*time.Millisecond || seen[1].Headers.Sub(seen[1].Sent) != 200*time.Millisecond {
			t.Fatalf("second attempt %+v", seen[1])
		}
		want := []time.Duration{0, 1100 * time.Millisecond, 1600 * time.Millisecond, 1600 * time.Millisecond}
		if !slices.Equal(at, want) {
			t.Fatalf("arrivals %v, want %v", at, want)
		}
	})
}

// TestTransportErrorIsNotRetried: no response means ActionDone with the
// error: this owner retries admission refusals, not network failures.
func TestTransportErrorIsNotRetried(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ln := memnet.Listen()
		ln.Close()
		var ds []Decision
		tr, _ := New(&http.Transport{DialContext: ln.DialContext}, Policy{MaxAttempts: DefaultMaxAttempts, Budget: DefaultBudget, Jitter: DefaultJitter, Observe: func(d Decision) { ds = append(ds, d) }})
		var seen []Attempt
		req, _ := http.NewRequestWithContext(WithAttemptObserver(t.Context(), func(a Attempt) { seen = append(seen, a) }), "GET", "http://primary.invalid/", nil)
		resp, err := tr.RoundTrip(req)
		if err == nil || resp != nil {
			t.Fatalf("response %v, error %v", resp, err)
		}
		if len(ds) != 1 || ds[0].Action != ActionDone || ds[0].Err != ClassTransport || ds[0].Status != 0 || ds[0].Wait != -1 {
			t.Fatalf("decisions %+v", ds)
		}
		if len(seen) != 1 || seen[0].Err != err || seen[0].Header != nil || seen[0].Done.IsZero() {
			t.Fatalf("attempts %+v", seen)
		}
	})
}

// TestFallbackError: a Fallback that fails ends the request with its
// error, the attempt observed as not sent.
func TestFallbackError(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("no fallback deployment configured")
		l := newLab(t, Policy{MaxAttempts: DefaultMaxAttempts, Budget: DefaultBudget, Jitter: DefaultJitter, RedirectFirst: true, Fallback: func(*http.Request) (*http.Request, error) { return nil, boom }},
			map[string][]reply{"/": {refuse(429, "Retry-After", "1")}})
		_, _, err := l.do(t.Context(), "POST", "/", "{}")
		ds := l.recorded()
		if !errors.Is(err, boom) || len(ds) != 2 || ds[1].Err != ClassFallback || ds[1].Action != ActionDone || !ds[1].Fallback {
			t.Fatalf("error %v, decisions %+v", err, ds)
		}
	})
}

// TestFallbackOwnRequest: a Fallback may build a request of its own (another
// body: OpenAI names the model in it), with its own context; it is sent
// with the original request's context, so a cancel still reaches it.
func TestFallbackOwnRequest(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fallback := func(r *http.Request) (*http.Request, error) {
			return http.NewRequestWithContext(context.Background(), "POST", "http://standard.invalid/fallback", strings.NewReader(`{"model":"standard"}`))
		}
		l := newLab(t, Policy{MaxAttempts: DefaultMaxAttempts, Budget: DefaultBudget, Jitter: DefaultJitter, RedirectFirst: true, Fallback: fallback}, map[string][]reply{
			"/":         {refuse(429, "Retry-After", "1")},
			"/fallback": {{status: 200, delay: 10 * time.Second}},
		})
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Second, cancel)
		start := time.Now()
		_, _, err := l.do(ctx, "POST", "/", `{"model":"ptu"}`)
		if !errors.Is(err, context.Canceled) || time.Since(start) != time.Second {
			t.Fatalf("error %v after %v, want canceled after 1s", err, time.Since(start))
		}
		if hits := l.srv.seen("/fallback"); len(hits) != 1 || hits[0].body != `{"model":"standard"}` {
			t.Fatalf("fallback saw %+v", hits)
		}
		if ds := l.recorded(); len(ds) != 2 || ds[1].Err != ClassCanceled || !ds[1].Fallback {
			t.Fatalf("decisions %+v", ds)
		}
	})
}

// TestNoRedirectAfterCancel: a redirect follows its refusal at once, with
// no wait for a cancel to cut; a context that ended as the refusal came
// (a caller's stop, seen by its attempt observer) sends nothing to the
// fallback: the redirected attempt is observed not sent. It was once
// sent on the ended context, and recorded as a failed attempt.
func TestNoRedirectAfterCancel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := newLab(t, Policy{MaxAttempts: DefaultMaxAttempts, Budget: DefaultBudget, Jitter: DefaultJitter, RedirectFirst: true, Fallback: toPath("/fallback")},
			map[string][]reply{"/": {refuse(429, "Retry-After", "1")}, "/fallback": {ok200}})
		ctx, cancel := context.WithCancel(t.Context())
		var seen []Attempt
		ctx = WithAttemptObserver(ctx, func(a Attempt) {
			seen = append(seen, a)
			if a.Action == ActionRedirect {
				cancel()
			}
		})
		if _, _, err := l.do(ctx, "POST", "/", "{}"); !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
		if n := len(l.srv.seen("/fallback")); n != 0 {
			t.Errorf("the fallback saw %d requests after the cancel", n)
		}
		if len(seen) != 2 || !seen[1].Sent.IsZero() || seen[1].Err == nil || seen[1].Decision.Err != ClassCanceled || !seen[1].Fallback {
			t.Fatalf("attempts %+v", seen)
		}
	})
}
