package client

import (
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stalledH2 is an HTTPS server speaking HTTP/2 with a limit of streams
// per connection whose handlers hold every request until want of them
// are in, as a stalled server does while requests pile up; it counts the
// connections it accepts.
func stalledH2(t *testing.T, streams, want int) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var in atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if in.Add(1) == int64(want) {
			close(release)
		}
		<-release
		w.Write([]byte(`{"usage":{"prompt_tokens":3,"completion_tokens":4}}`))
	}))
	srv.EnableHTTP2 = true
	srv.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: streams}
	conns := countConns(srv)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, conns
}

// TestHTTP2DialsOnlyTheConnectionsNeeded: requests that find every HTTP/2
// connection at the server's limit of streams open one connection at a
// time, each of which the requests waiting take, so a server that
// stalls with requests piling up is dialed the connections they need,
// not one per waiting request. net/http alone dialed a connection for
// every request waiting and closed most of them unused: the 5,000/s
// HTTPS stall, where a 90 ms pause of the server brought 600 TLS
// handshakes and half a second of lateness (bench/README.md).
func TestHTTP2DialsOnlyTheConnectionsNeeded(t *testing.T) {
	t.Parallel()
	// At least the 100 streams the client assumes of a connection before
	// the server's settings come: past them a server refuses streams,
	// which the client retries a second later.
	const streams, requests = 100, 300
	srv, conns := stalledH2(t, streams, requests)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	tg, err := New(Config{API: APIOpenAI, URL: srv.URL + "/v1/chat/completions", PromptTokens: 10, MaxTokens: 5,
		RootCAs: pool, MaxConns: requests, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range requests {
		wg.Go(func() {
			if r := send(tg); r.Status != http.StatusOK || r.CompletionTokens != 4 {
				failed.Add(1)
				t.Errorf("status %d, error %q, completion tokens %d", r.Status, r.Error, r.CompletionTokens)
			}
		})
	}
	wg.Wait()
	// A request that asks for a connection just as one completes may
	// still dial one more (the Transport hands the new one out after the
	// gate has counted it): at most one more for each needed, where
	// net/http alone made 324-556.
	if got, want := conns.Load(), int64(requests/streams); failed.Load() == 0 && (got < want || got > 2*want) {
		t.Fatalf("%d connections for %d requests of %d streams a connection, want %d to %d", got, requests, streams, want, 2*want)
	}
}

// BenchmarkSendHTTP2 is BenchmarkSend429 over HTTPS, HTTP/2, where each
// attempt is followed through the Transport for the dial gate: the
// client's cost per request with net/http's HTTP/2 client.
func BenchmarkSendHTTP2(b *testing.B) {
	srv := httptest.NewUnstartedServer(refuse43(false))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	tg, err := New(Config{API: APIRaw, URL: srv.URL + "/v1/chat/completions", Method: http.MethodPost, Body: []byte(`{"max_tokens":1}`), RootCAs: pool})
	if err != nil {
		b.Fatal(err)
	}
	defer tg.Close()
	benchRefused(b, tg, true)
}
