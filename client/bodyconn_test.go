package client

import (
	"bytes"
	"io"
	"net"
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
		got, err := bodyConn{c}.ReadFrom(&io.LimitedReader{R: onlyReader{bytes.NewReader(body)}, N: n})
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
		bodyConn{c}.ReadFrom(lr)
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
