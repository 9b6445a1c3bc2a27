package client

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// connCounter is an httptest server answering handler, counting the
// connections it accepted.
func connCounter(t *testing.T, handler http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	srv := httptest.NewUnstartedServer(handler)
	conns := countConns(srv)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, conns
}

// countConns counts the connections srv, not yet started, will accept.
func countConns(srv *httptest.Server) *atomic.Int64 {
	var conns atomic.Int64
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	return &conns
}

func newTestH1(max int) *h1Transport {
	return newH1Transport(plainDial((&net.Dialer{Timeout: 5 * time.Second}).DialContext), max)
}

// get sends a GET through tr and reads its body to the end, or n bytes of it
// when n >= 0, and closes it.
func get(t *testing.T, tr http.RoundTripper, ctx context.Context, url string, n int) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	var b []byte
	if n < 0 {
		b, err = io.ReadAll(resp.Body)
	} else {
		b = make([]byte, n)
		_, err = io.ReadFull(resp.Body, b)
	}
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp, string(b)
}

// TestH1KeepsConnectionsAlive: answers of every framing, read to their
// end, leave their connection for the next request; one closed before its
// end, or that asks for the close, does not.
func TestH1KeepsConnectionsAlive(t *testing.T) {
	t.Parallel()
	srv, conns := connCounter(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/chunked":
			io.WriteString(w, "part one,")
			w.(http.Flusher).Flush()
			io.WriteString(w, "part two")
		case "/length":
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "fixed")
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		case "/early":
			w.WriteHeader(http.StatusEarlyHints)
			io.WriteString(w, "after 103")
		case "/close":
			w.Header().Set("Connection", "close")
			io.WriteString(w, "bye")
		case "/extra":
			c, buf, _ := w.(http.Hijacker).Hijack()
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 204 No Content\r\n\r\n")
			buf.Flush()
			t.Cleanup(func() { c.Close() })
		case "/big":
			io.WriteString(w, strings.Repeat("x", 100<<10))
		}
	})
	tr := newTestH1(4)
	defer tr.CloseIdleConnections()
	ctx := context.Background()
	steps := []struct {
		path, body string
		conns      int64 // accepted after the step
	}{
		{"/chunked", "part one,part two", 1},
		{"/length", "fixed", 1},
		{"/empty", "", 1},
		{"/early", "after 103", 1},
		{"/close", "bye", 1},
		{"/length", "fixed", 2}, // the close was kept
		{"/big", "", 2},         // closed after 10 bytes
		{"/length", "fixed", 3},
		{"/extra", "ok", 3},
		{"/length", "fixed", 4}, // bytes past the answer: the connection was dropped
	}
	for _, s := range steps {
		n := -1
		if s.path == "/big" {
			n = 10
		}
		resp, body := get(t, tr, ctx, srv.URL+s.path, n)
		if n < 0 && body != s.body {
			t.Fatalf("%s: body %q, want %q", s.path, body, s.body)
		}
		if s.path == "/early" && resp.StatusCode != 200 {
			t.Fatalf("%s: status %d, want the final 200", s.path, resp.StatusCode)
		}
		if got := conns.Load(); got != s.conns {
			t.Fatalf("after %s: %d connections, want %d", s.path, got, s.conns)
		}
	}
	head, err := http.NewRequest("HEAD", srv.URL+"/length", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(head)
	if err != nil || resp.ContentLength != 5 {
		t.Fatalf("HEAD: %v, %+v", err, resp)
	}
	resp.Body.Close()
	if _, body := get(t, tr, ctx, srv.URL+"/length", -1); body != "fixed" || conns.Load() != 4 {
		t.Fatalf("after HEAD: %q on %d connections, want fixed on 4", body, conns.Load())
	}
}

// TestH1PoolIsLIFOAndBounded: of two idle connections the newest carries
// the next request, and no more than the pool's size is kept.
func TestH1PoolIsLIFOAndBounded(t *testing.T) {
	t.Parallel()
	srv, _ := connCounter(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.RemoteAddr)
	})
	tr := newTestH1(1)
	defer tr.CloseIdleConnections()
	ctx := context.Background()
	// Two at once: two connections, one kept when both are done.
	req1, _ := http.NewRequest("GET", srv.URL, nil)
	req2, _ := http.NewRequest("GET", srv.URL, nil)
	r1, err := tr.RoundTrip(req1)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := tr.RoundTrip(req2)
	if err != nil {
		t.Fatal(err)
	}
	a1, _ := io.ReadAll(r1.Body)
	a2, _ := io.ReadAll(r2.Body)
	r1.Body.Close()
	r2.Body.Close()
	if string(a1) == string(a2) {
		t.Fatalf("two requests at once shared connection %s", a1)
	}
	if tr.nIdle != 1 {
		t.Fatalf("%d idle, want the pool's size, 1", tr.nIdle)
	}
	if _, from := get(t, tr, ctx, srv.URL, -1); from != string(a1) {
		t.Fatalf("the kept connection is %s, want the first given back, %s", from, a1)
	}
	// Every idle connection past its time: the next request dials.
	tr.idleTimeout = -1
	if _, from := get(t, tr, ctx, srv.URL, -1); from == string(a1) || from == string(a2) {
		t.Fatalf("a connection idle past the timeout (%s) was used again", from)
	}
}

// TestH1ClosesIdleConnectionsOnTime: an idle connection is closed when
// its idle timeout passes, with no request to find it (the server sees
// the close), and so is the next one after the pool was empty.
func TestH1ClosesIdleConnectionsOnTime(t *testing.T) {
	t.Parallel()
	closed := make(chan string, 4)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.RemoteAddr)
	}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed <- c.RemoteAddr().String()
		}
	}
	srv.Start()
	defer srv.Close()
	tr := newTestH1(4)
	tr.idleTimeout = 20 * time.Millisecond
	defer tr.CloseIdleConnections()
	for i := range 2 {
		_, from := get(t, tr, context.Background(), srv.URL, -1)
		select {
		case addr := <-closed:
			if addr != from {
				t.Fatalf("round %d: %s closed, want the idle %s", i, addr, from)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: the idle connection still open 5 s past its 20 ms timeout", i)
		}
		tr.mu.Lock()
		n := tr.nIdle
		tr.mu.Unlock()
		if n != 0 {
			t.Fatalf("round %d: %d idle after the timeout, want none", i, n)
		}
	}
}

// closeConn is a connection that records its close.
type closeConn struct {
	net.Conn // nil: Close is all the pool calls
	closed   bool
}

func (c *closeConn) Close() error { c.closed = true; return nil }

// TestH1SweepClosesOnlyTheExpired: the pool's sweep closes, over every
// host, the idle connections past their timeout and no other, keeps the
// rest newest last, and is armed again for the oldest left.
func TestH1SweepClosesOnlyTheExpired(t *testing.T) {
	t.Parallel()
	tr := newTestH1(8)
	tr.idleTimeout = time.Hour
	defer tr.CloseIdleConnections()
	now := time.Now()
	idle := func(addr string, age time.Duration) *h1Conn {
		pc := &h1Conn{addr: addr, conn: &closeConn{}, idleAt: now.Add(-age)}
		tr.idle[addr] = append(tr.idle[addr], pc)
		tr.nIdle++
		return pc
	}
	a1, a2, a3 := idle("a:80", 3*time.Hour), idle("a:80", 2*time.Hour), idle("a:80", time.Minute)
	b1 := idle("b:80", 90*time.Minute)
	c1 := idle("c:80", 2*time.Minute)
	tr.sweepIdle()
	for _, pc := range []*h1Conn{a1, a2, a3, b1, c1} {
		want := pc == a1 || pc == a2 || pc == b1
		if pc.conn.(*closeConn).closed != want {
			t.Errorf("%s idle %v: closed %v, want %v", pc.addr, now.Sub(pc.idleAt), !want, want)
		}
	}
	if tr.nIdle != 2 || len(tr.idle) != 2 || len(tr.idle["a:80"]) != 1 || tr.idle["a:80"][0] != a3 || tr.idle["c:80"][0] != c1 {
		t.Fatalf("left %d idle: %v, want a3 and c1", tr.nIdle, tr.idle)
	}
	if !tr.sweepOn {
		t.Fatal("the sweep not armed again with two connections idle")
	}
}

// TestH1StaleConnectionIsRetried: a server that closed a kept-alive
// connection while it was idle costs no row: the request, body and all,
// goes again on a new connection. A reset after the request was read is
// recorded as it is.
func TestH1StaleConnectionIsRetried(t *testing.T) {
	t.Parallel()
	var reset atomic.Bool
	srv, conns := connCounter(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if reset.Load() {
			c, _, _ := w.(http.Hijacker).Hijack()
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
			return
		}
		io.WriteString(w, `{"usage":{"prompt_tokens":`+strconv.Itoa(len(b))+`,"completion_tokens":1}}`)
	})
	tg, err := New(Config{API: APIOpenAI, URL: srv.URL + "/v1/chat/completions", PromptTokens: 10, MaxTokens: 1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	first := send(tg)
	srv.CloseClientConnections()
	waitIdleClosed(t, tg)
	again := send(tg)
	if first.Error != "" || again.Error != "" || again.Status != 200 || again.PromptTokens != first.PromptTokens || first.PromptTokens < 10 {
		t.Fatalf("rows %+v and %+v, want both 200 with the whole body", first, again)
	}
	if conns.Load() != 2 {
		t.Fatalf("%d connections, want 2", conns.Load())
	}
	reset.Store(true)
	if r := send(tg); r.Error != results.ClassReset {
		t.Fatalf("row %+v, want error %s", r, results.ClassReset)
	}
}

// waitIdleClosed waits until the far side's close of every idle
// connection of tg's has reached its socket (a close on loopback is not
// seen at once), so that the pool's peek finds it.
func waitIdleClosed(t *testing.T, tg *Target) {
	t.Helper()
	tr := tg.rt.(attemptTimeout).next.(*h1Transport)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		tr.mu.Lock()
		open := 0
		for _, s := range tr.idle {
			for _, pc := range s {
				if pc.alive() {
					open++
				}
			}
		}
		tr.mu.Unlock()
		if open == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d idle connections still open 5 s after the server closed them", open)
		}
	}
}

// TestH1PostIsNeverSentTwice: a server that reads a POST on a kept-alive
// connection and closes it without an answer gets it once; the attempt
// is recorded as failed, not sent again on a new connection (net/http's
// Transport does not replay a POST either). A connection the server
// closed while idle is found by the pool's peek before it is used.
func TestH1PostIsNeverSentTwice(t *testing.T) {
	t.Parallel()
	var drop atomic.Bool
	var calls atomic.Int64
	srv, conns := connCounter(t, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.Copy(io.Discard, r.Body)
		if drop.Load() {
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Close()
			return
		}
		io.WriteString(w, `{"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
	})
	tg, err := New(Config{API: APIOpenAI, URL: srv.URL + "/v1/chat/completions", PromptTokens: 10, MaxTokens: 1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if r := send(tg); r.Status != 200 {
		t.Fatalf("row %+v, want a 200", r)
	}
	drop.Store(true)
	r := send(tg)
	if r.Status == 200 || r.Error == "" {
		t.Fatalf("row %+v, want a failed attempt", r)
	}
	if calls.Load() != 2 || conns.Load() != 1 {
		t.Fatalf("the server read %d requests on %d connections, want 2 on 1: the POST was sent again", calls.Load(), conns.Load())
	}
}

// TestH1CancelEndsTheRoundTrip: the request's context ending closes the
// connection, and the read waiting on it returns the context's error.
func TestH1CancelEndsTheRoundTrip(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv, _ := connCounter(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/body" {
			io.WriteString(w, "head of the body")
			w.(http.Flusher).Flush()
		}
		<-release
	})
	defer close(release)
	tr := newTestH1(2)
	defer tr.CloseIdleConnections()

	ctx, cancel := context.WithCancelCause(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/header", nil)
	time.AfterFunc(50*time.Millisecond, func() { cancel(context.Canceled) })
	if _, err := tr.RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("waiting for the header: %v, want %v", err, context.Canceled)
	}

	ctx, cancel2 := context.WithTimeout(context.Background(), time.Hour)
	req, _ = http.NewRequestWithContext(ctx, "GET", srv.URL+"/body", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, len("head of the body"))
	if _, err := io.ReadFull(resp.Body, b); err != nil {
		t.Fatal(err)
	}
	cancel2()
	if _, err := resp.Body.Read(b); !errors.Is(err, context.Canceled) {
		t.Fatalf("reading the body: %v, want %v", err, context.Canceled)
	}
	resp.Body.Close()
	if tr.nIdle != 0 {
		t.Fatalf("%d idle, want none: a canceled connection is closed", tr.nIdle)
	}
}

// answerConn is a connection whose far side has sent answer and closed,
// and reads whatever is written to it.
type answerConn struct {
	net.Conn // nil: the methods below are all a round trip calls
	answer   *strings.Reader
}

func (c *answerConn) Read(p []byte) (int, error)  { return c.answer.Read(p) }
func (c *answerConn) Write(p []byte) (int, error) { return len(p), nil }
func (c *answerConn) Close() error                { return nil }

// FuzzH1Answer: whatever bytes a server answers, a round trip ends in a
// response whose body reads to an end, or in an error; never a panic or
// a hang, and a header past the limit is refused in net/http's words.
func FuzzH1Answer(f *testing.F) {
	f.Add("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	f.Add("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
	f.Add("HTTP/1.0 200 OK\r\n\r\nread to the close")
	f.Add("HTTP/1.1 200 OK\r\nX: " + strings.Repeat("y", 300) + "\r\n\r\n")
	f.Add("garbage\r\n\r\n")
	f.Fuzz(func(t *testing.T, answer string) {
		tr := newH1Transport(func(context.Context, string, string) (net.Conn, error) {
			return &answerConn{answer: strings.NewReader(answer)}, nil
		}, 1)
		tr.maxHeader = 256
		req, _ := http.NewRequest("POST", "http://fuzz.invalid/v1", strings.NewReader("{}"))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			limit := strings.HasPrefix(err.Error(), "net/http: server response headers exceeded 256 bytes")
			if errors.Is(err, errHeaderLimit) || limit != (len(answer) >= 256 && Classify(context.Background(), err) == results.ClassHeaders) {
				t.Fatalf("an answer of %d bytes: %v", len(answer), err)
			}
			return
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n > int64(len(answer)) {
			t.Fatalf("a body of %d bytes from an answer of %d", n, len(answer))
		}
	})
}

// TestH1OverTLS: with HTTP1, an https:// target that offers HTTP/2 is
// spoken to in HTTP/1.1 over one kept-alive TLS connection.
func TestH1OverTLS(t *testing.T) {
	t.Parallel()
	var protos sync.Map
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protos.Store(r.Proto, true)
		io.WriteString(w, `{"usage":{"prompt_tokens":3,"completion_tokens":1}}`)
	}))
	srv.EnableHTTP2 = true
	conns := countConns(srv)
	srv.StartTLS()
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	tg, err := New(Config{API: APIOpenAI, URL: srv.URL + "/v1/chat/completions", PromptTokens: 10, MaxTokens: 1,
		Timeout: 5 * time.Second, RootCAs: roots, HTTP1: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	for range 3 {
		if r := send(tg); r.Status != 200 || r.Error != "" || r.PromptTokens != 3 {
			t.Fatalf("row %+v", r)
		}
	}
	var seen []string
	protos.Range(func(k, _ any) bool { seen = append(seen, k.(string)); return true })
	if len(seen) != 1 || seen[0] != "HTTP/1.1" || conns.Load() != 1 {
		t.Fatalf("protocols %v on %d connections, want HTTP/1.1 on 1", seen, conns.Load())
	}
}
