package sim

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// withBodyReadTimeout shortens BodyReadTimeout (the server's ReadTimeout) for a test.
func withBodyReadTimeout(d time.Duration) Option {
	return func(o *options) { o.bodyReadTimeout = d }
}

// startLoopback starts a simulator on a loopback port, closed at cleanup.
func startLoopback(t *testing.T, cfg Config, opts ...Option) *Running {
	t.Helper()
	run, err := Start(context.Background(), cfg, "127.0.0.1:0", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	return run
}

// closedWithin reports whether the server ends c (EOF, reset, or an answer
// followed by EOF) within d; bytes it sends are read and dropped.
func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	ne, timeout := err.(net.Error)
	return !(timeout && ne.Timeout())
}

// TestADrippedBodyIsCutOff: a client that sends its headers, then its body
// a byte now and then, is cut off once the body's time is up, rather than
// holding its socket for as long as it drips.
func TestADrippedBodyIsCutOff(t *testing.T) {
	t.Parallel()
	run := startLoopback(t, testConfig(), withBodyReadTimeout(300*time.Millisecond))
	c, err := net.Dial("tcp", run.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := chatBody(100, 1)
	if _, err := io.WriteString(c, "POST "+azurePath+" HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\nContent-Length: "+
		strconv.Itoa(len(body))+"\r\n\r\n"+body[:1]); err != nil {
		t.Fatal(err)
	}
	cut := make(chan bool, 1)
	go func() { cut <- closedWithin(c, 5*time.Second) }()
	drip := time.NewTicker(50 * time.Millisecond)
	defer drip.Stop()
	for i := 1; i < len(body)-1; i++ { // never the last byte
		select {
		case ok := <-cut:
			if !ok {
				t.Fatal("a dripped body held its connection 5 s")
			}
			return
		case <-drip.C:
			c.Write([]byte{body[i]})
		}
	}
	if !<-cut {
		t.Fatal("a dripped body held its connection 5 s")
	}
}

// TestALongAnswerOutlivesTheReadTimeout: the read timeout bounds the
// request, not the answer: one that takes several times longer (a time
// to first token of 300 ms against 100 ms to read the request; a server
// whose read deadline outlived the request would end the answer's
// context 200 ms before its first token), streamed or not, arrives
// whole.
func TestALongAnswerOutlivesTheReadTimeout(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.TTFT, cfg.TPOT = 300*time.Millisecond, 10*time.Millisecond
	run := startLoopback(t, cfg, withBodyReadTimeout(100*time.Millisecond))
	for name, body := range map[string]string{"plain": chatBody(10, 20), "streamed": strings.TrimSuffix(chatBody(10, 20), "}") + `,"stream":true}`} {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each waits out its answer: side by side
			resp, b, err := do(run.URL, azurePath, body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 || !(strings.Contains(b, `"finish_reason":"stop"`) || strings.Contains(b, `"finish_reason":"length"`)) {
				t.Fatalf("%s: %d %q, want the whole answer", body, resp.StatusCode, b)
			}
		})
	}
}

// TestConnectionsPerClientAreBounded: past MaxConnsPerClient connections
// from one address, one more is answered 503 and closed at once; when one
// closes, a new one is served.
func TestConnectionsPerClientAreBounded(t *testing.T) {
	t.Parallel()
	run := startLoopback(t, testConfig(), MaxConnsPerClient(2))
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", run.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	// A request on each proves both were accepted (and counted) first.
	for _, c := range held {
		io.WriteString(c, "GET /sim/stats HTTP/1.1\r\nHost: sim\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("a connection within the limit: %v %v", resp, err)
		}
	}
	extra, err := net.Dial("tcp", run.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	io.WriteString(extra, "GET /sim/stats HTTP/1.1\r\nHost: sim\r\n\r\n")
	extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(extra), nil)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a third connection from the same address: %v %v, want 503", resp, err)
	}
	if !closedWithin(extra, 5*time.Second) {
		t.Fatal("the refused connection was left open")
	}
	held[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get(run.URL + "/sim/stats")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no place freed 5 s after a connection closed: %v %v", resp, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
