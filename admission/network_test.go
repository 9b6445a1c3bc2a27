package admission

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// These tests run on loopback sockets and the real clock, with advised
// waits of a few milliseconds.

// TestDecisionHoldsNoSecrets: whatever the server, the request or the
// error held, a Decision (and a GiveUpError) names no host, port, header
// value, key or body.
func TestDecisionHoldsNoSecrets(t *testing.T) {
	t.Parallel()
	const canary = "canary-7f3a"
	replies := map[string][]reply{
		"/a": {
			refuse(429, "Retry-After-Ms", "1.5", "Retry-After", canary, "X-Canary", canary, "Set-Cookie", "session="+canary),
			refuse(429, "Retry-After", canary+"-not-a-wait", "Date", canary),
			{status: 200, header: map[string]string{"X-Canary": canary}, body: canary},
		},
		"/b": {refuse(503, "Retry-After", canary)},
		"/c": {refuse(429, "Retry-After", "3600", "X-Canary", canary)},
	}
	srv := httptest.NewServer(newScript(replies))
	defer srv.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()

	var mu sync.Mutex
	var out strings.Builder
	p := DefaultPolicy()
	p.Backoff, p.Observe = Constant(0), func(d Decision) {
		mu.Lock()
		fmt.Fprintf(&out, "%+v\n%#v\n", d, d)
		mu.Unlock()
	}
	tr, err := New(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	send := func(base, path string) error {
		req, _ := http.NewRequest("POST", base+path+"?api-key="+canary, strings.NewReader(`{"content":"`+canary+`"}`))
		req.Header.Set("Api-Key", canary)
		req.Header.Set("Authorization", "Bearer "+canary)
		resp, err := client.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return err
	}
	for _, p := range []string{"/a", "/b", "/c"} {
		err := send(srv.URL, p)
		var g *GiveUpError
		if errors.As(err, &g) {
			fmt.Fprintf(&out, "%s\n%+v\n", g.Error(), *g)
		}
	}
	if err := send(deadURL, "/"); err == nil {
		t.Fatal("a closed server answered")
	}
	logged := out.String()
	if strings.Count(logged, "Attempt:") != 6*2 {
		t.Fatalf("want 6 decisions, got:\n%s", logged)
	}
	for _, u := range []string{srv.URL, deadURL} {
		pu, _ := url.Parse(u)
		host, port, _ := net.SplitHostPort(pu.Host)
		for _, secret := range []string{canary, pu.Host, host, ":" + port, "Bearer", "api-key"} {
			if strings.Contains(logged, secret) {
				t.Fatalf("decisions hold %q:\n%s", secret, logged)
			}
		}
	}
	if !strings.Contains(logged, "Err:transport") || !strings.Contains(logged, "WaitSource:invalid") {
		t.Fatalf("the cases did not all happen:\n%s", logged)
	}
}

// TestRefusalBodyIsDrainedForReuse: a refusal's body is read and closed
// before the retry, so the retry reuses the connection; a refusal body
// over the drain bound costs a new connection, not an endless read.
func TestRefusalBodyIsDrainedForReuse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		size      int
		wantConns int64
	}{{10 << 10, 1}, {1 << 20, 2}} {
		s := newScript(map[string][]reply{"/": {
			{status: 429, header: map[string]string{"Retry-After-Ms": "1"}, body: strings.Repeat("x", tc.size)},
			ok200,
		}})
		srv := httptest.NewUnstartedServer(s)
		var conns atomic.Int64
		srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				conns.Add(1)
			}
		}
		srv.Start()
		tr, _ := New(srv.Client().Transport, Policy{MaxAttempts: DefaultMaxAttempts, Budget: DefaultBudget, Jitter: DefaultJitter})
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
		if err != nil || resp.StatusCode != 200 {
			t.Fatal(resp, err)
		}
		resp.Body.Close()
		if conns.Load() != tc.wantConns {
			t.Errorf("a %d-byte refusal body: %d connections, want %d", tc.size, conns.Load(), tc.wantConns)
		}
		tr.CloseIdleConnections()
		srv.Close()
	}
}

// TestConcurrentRequests: one Transport, many goroutines, refusals mixed
// in; under -race this is the data race check, and every request the
// server saw is one Decision. Only first attempts are refused (a retry
// says it is one in SDKRetryHeader), so no request runs out of attempts.
func TestConcurrentRequests(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%3 == 0 && r.Header.Get(SDKRetryHeader) == "0" {
			w.Header().Set("Retry-After-Ms", "2")
			w.WriteHeader(429)
			return
		}
		w.WriteHeader(200)
	}))
	defer srv.Close()
	var decisions atomic.Int64
	tr, _ := New(srv.Client().Transport, Policy{Budget: DefaultBudget, Jitter: DefaultJitter, SharedCooldown: true, MaxAttempts: 2, MarkRetries: true, Observe: func(Decision) { decisions.Add(1) }})
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 10 {
				req, _ := http.NewRequest("GET", srv.URL, nil)
				req.Header.Set(SDKRetryHeader, "0")
				resp, err := client.Do(req)
				if err != nil || resp.StatusCode != 200 {
					t.Errorf("%v %v", resp, err)
					return
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	if decisions.Load() != n.Load() {
		t.Fatalf("%d decisions for %d requests seen", decisions.Load(), n.Load())
	}
}
