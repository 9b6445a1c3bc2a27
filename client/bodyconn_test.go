package client

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
)

// writesConn is a net.Conn that keeps what is written to it, write by write.
type writesConn struct {
	net.Conn
	writes [][]byte
}

func (c *writesConn) Write(p []byte) (int, error) {
	c.writes = append(c.writes, bytes.Clone(p))
	return len(p), nil
}

// onlyReader hides a reader's WriteTo, as net/http's wrappers do.
type onlyReader struct{ io.Reader }

// A body net/http writes through the connection's ReadFrom (a generated
// prompt: the header flushed first) goes through bodyConn's pooled room:
// its bytes and its length's worth only, a body of up to the room's size
// in one write, and no buffer allocated for it (a TCP connection's
// ReadFrom allocates one of the body's length for each).
func TestBodyConnCopiesThroughItsRoom(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 5000) // 80,000 bytes
	for _, n := range []int64{4750, copyRoom, 80000 - 3} {
		c := &writesConn{}
		got, err := (&bodyConn{Conn: c}).ReadFrom(&io.LimitedReader{R: onlyReader{bytes.NewReader(body)}, N: n})
		if err != nil || got != n || !bytes.Equal(bytes.Join(c.writes, nil), body[:n]) {
			t.Fatalf("length %d: wrote %d (%v), bytes equal %v", n, got, err, bytes.Equal(bytes.Join(c.writes, nil), body[:n]))
		}
		if want := (n + copyRoom - 1) / copyRoom; int64(len(c.writes)) != want {
			t.Errorf("length %d: %d writes, want %d", n, len(c.writes), want)
		}
	}
	c := &writesConn{}
	r := bytes.NewReader(body[:4750])
	lr := &io.LimitedReader{R: onlyReader{r}}
	allocs := testing.AllocsPerRun(100, func() {
		r.Seek(0, io.SeekStart)
		lr.N = 4750
		c.writes = c.writes[:0]
		(&bodyConn{Conn: c}).ReadFrom(lr)
	})
	// The one allocation left is the test's own copy of the write.
	if allocs > 1 {
		t.Errorf("%.1f allocations a body, want the test's own 1", allocs)
	}
}

// A request with a generated prompt, a pooled one and one past the pool's
// bound, arrives whole over a plain connection.
func TestPromptBodyOverPlainConn(t *testing.T) {
	t.Parallel()
	for _, prompt := range []int{1000, 20000} {
		srv, seen := recordingServer(t, 200)
		tg, err := New(Config{API: APIAzure, Endpoint: srv.URL, Deployment: "d", Key: "k", PromptTokens: prompt, MaxTokens: 7})
		if err != nil {
			t.Fatal(err)
		}
		send(tg)
		if got := <-seen; !bytes.Equal(got.body, tg.Body(7)) {
			t.Errorf("prompt %d: the server read %d bytes, Body(7) is %d", prompt, len(got.body), len(tg.Body(7)))
		}
		tg.Close()
	}
}

// countedConn counts the writes that reach a real connection.
type countedConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countedConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// A generated prompt's request leaves in one write, its header with its
// body: net/http flushes the header apart, and bodyConn holds it for the
// body's write (it left in two before). A raw body goes with its header
// already, in one write too. The server reads each whole.
func TestPromptRequestIsOneWrite(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		cfg  func(url string) Config
	}{
		{"generated prompt", func(url string) Config {
			return Config{API: APIAzure, Endpoint: url, Deployment: "d", Key: "k", PromptTokens: 1000, MaxTokens: 7}
		}},
		{"raw body", func(url string) Config {
			return Config{API: APIRaw, URL: url + "/v1", Method: http.MethodPost, Body: []byte(`{"max_tokens":1}`)}
		}},
	} {
		srv, seen := recordingServer(t, 200)
		var writes atomic.Int64
		cfg := c.cfg(srv.URL)
		cfg.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return countedConn{conn, &writes}, nil
		}
		tg, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if r := send(tg); r.Status != 200 {
				t.Fatalf("%s: status %d (%s)", c.name, r.Status, r.Error)
			}
			if got := <-seen; !bytes.Equal(got.body, tg.Body(7)) {
				t.Fatalf("%s: the server read %d bytes, Body(7) is %d", c.name, len(got.body), len(tg.Body(7)))
			}
			if n := writes.Load(); n != int64(i+1) {
				t.Errorf("%s: %d writes for %d requests, want one each", c.name, n, i+1)
			}
		}
		tg.Close()
	}
}

// bodyConn holds only a whole request header that announces a body and
// waits for no answer first; anything else it writes at once. A held
// header goes out with what is written next, whether through ReadFrom
// or Write.
func TestBodyConnHoldsOnlyABodysHeader(t *testing.T) {
	const post = "POST /v1 HTTP/1.1\r\nHost: h\r\nContent-Length: 12\r\n\r\n"
	for _, c := range []struct {
		header string
		held   bool
	}{
		{post, true},
		{"POST /v1 HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", false},
		{"POST /v1 HTTP/1.1\r\nHost: h\r\nContent-Length: 00\r\n\r\n", false},
		{"GET /v1 HTTP/1.1\r\nHost: h\r\n\r\n", false},
		{"POST /v1 HTTP/1.1\r\nHost: h\r\nContent-Length: 12\r\nExpect: 100-continue\r\n\r\n", false},
		{"POST /v1 HTTP/1.1\r\nHost: h\r\nContent-Length: 12x\r\n\r\n", false},
		{"POST /v1 HTTP/1.1\r\nHost: h\r\nContent-Length: 12\r\n", false}, // a header cut by the buffer
		{"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", false},
		{post + "0123456789\r\n\r\n", false}, // a raw body with its header, ending in a blank line
		{"\r\n\r\n", false},
	} {
		w := &writesConn{}
		c2 := &bodyConn{Conn: w}
		if n, err := c2.Write([]byte(c.header)); n != len(c.header) || err != nil {
			t.Fatalf("%q: Write = %d, %v", c.header, n, err)
		}
		if held := len(w.writes) == 0; held != c.held {
			t.Errorf("%q: held %v, want %v", c.header, held, c.held)
		}
	}
	body := "0123456789ab"
	w := &writesConn{}
	c := &bodyConn{Conn: w}
	c.Write([]byte(post))
	if n, err := c.ReadFrom(&io.LimitedReader{R: onlyReader{bytes.NewReader([]byte(body))}, N: 12}); n != 12 || err != nil {
		t.Fatalf("ReadFrom = %d, %v", n, err)
	}
	if len(w.writes) != 1 || string(w.writes[0]) != post+body {
		t.Fatalf("through ReadFrom: writes %q, want the header and body in one", w.writes)
	}
	w.writes = nil
	c.Write([]byte(post))
	if n, err := c.Write([]byte(body)); n != 12 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if got := string(bytes.Join(w.writes, nil)); got != post+body {
		t.Fatalf("through Write: %q, want the header then the body", got)
	}
}
