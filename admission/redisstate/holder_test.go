package redisstate

import (
	"io"
	"net"
	"sync"
	"testing"
)

// holder is a TCP proxy before a Redis that can hold it: from Hold on,
// what the clients send is kept, not forwarded, until Release, so a call
// waits as on a Redis busy with another's command, for as long as the
// test says and whatever the machine's load (a DEBUG SLEEP, sent from a
// goroutine and probed with a short PING, was taken as holding the
// server when the probe was merely slow, and the call after it was
// answered).
type holder struct {
	Addr string
	mu   sync.Mutex
	cond *sync.Cond
	held bool
}

// hold starts a holder before the Redis at target, closed at the test's
// end (released first).
func hold(t *testing.T, target string) *holder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &holder{Addr: ln.Addr().String()}
	h.cond = sync.NewCond(&h.mu)
	var (
		wg    sync.WaitGroup
		cmu   sync.Mutex
		conns []net.Conn
	)
	track := func(c net.Conn) {
		cmu.Lock()
		conns = append(conns, c)
		cmu.Unlock()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			track(c)
			r, err := net.Dial("tcp", target)
			if err != nil { // a Redis that is down: the client sees the connection end
				c.Close()
				continue
			}
			track(r)
			wg.Add(2)
			go func() { defer wg.Done(); io.Copy(c, r); c.Close() }()
			go func() { defer wg.Done(); h.forward(r, c); r.Close() }()
		}
	}()
	t.Cleanup(func() {
		h.Release()
		ln.Close()
		cmu.Lock()
		for _, c := range conns {
			c.Close()
		}
		cmu.Unlock()
		wg.Wait()
	})
	return h
}

// forward copies what the client sends to Redis, waiting while held.
func (h *holder) forward(to io.Writer, from io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			h.mu.Lock()
			for h.held {
				h.cond.Wait()
			}
			h.mu.Unlock()
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Hold keeps what the clients send from now on.
func (h *holder) Hold() {
	h.mu.Lock()
	h.held = true
	h.mu.Unlock()
}

// Release forwards what was kept, and the rest.
func (h *holder) Release() {
	h.mu.Lock()
	h.held = false
	h.mu.Unlock()
	h.cond.Broadcast()
}
