package client

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http/httptrace"
	"sync"
	"time"
)

// tlsHandshakeTimeout bounds a TLS handshake, as the Transport's
// TLSHandshakeTimeout did before the gate made its own.
const tlsHandshakeTimeout = 10 * time.Second

// obsoleteWait bounds how long a dial the gate found not needed waits for
// its request before it dials after all: only a connection that broke the
// moment it was made leaves a request waiting that long.
const obsoleteWait = tlsHandshakeTimeout

// dialGate makes the TLS connections of a Target, one at a time to an
// address that speaks HTTP/2. net/http's Transport dials a connection for
// every request that finds each HTTP/2 connection at the server's limit
// of streams (250 for Go's server), all at once, and then closes all but
// the first that completes (golang.org/issue/16582's trade): a server
// that stalled for 90 ms at 5,000 requests a second held 450 streams, and
// the requests past the limit started some 600 TLS handshakes, on both
// sides of a 2-core machine — half a second of lateness where the stall
// was a tenth of that (bench/README.md, bench/stall.sh). Through the gate
// one dial goes at a time; when it brings an HTTP/2 connection, the
// Transport hands it to every request waiting for one (an HTTP/2
// connection is shared), so the dials queued behind it for those requests
// are not needed: they make no connection, and end once their request
// holds a connection or asks for another (the Transport then waits for
// them no more; roundTrip follows each request). A request that still
// finds no stream asks again, and dials through the gate. An address that
// speaks HTTP/1.1 (a request a connection) is dialed without the gate, and
// so is every address while its dials fail.
type dialGate struct {
	dial func(ctx context.Context, network, addr string) (net.Conn, error) // the TCP connection
	tls  *tls.Config                                                       // cloned per connection

	mu    sync.Mutex
	addrs map[string]*addrDials
}

// addrDials is the gate's state for one address.
type addrDials struct {
	speaks  speaks        // what its last connection negotiated
	failing bool          // its last dial failed: dial without the gate until one succeeds
	dialing bool          // a dial through the gate is in progress
	h2      uint64        // the HTTP/2 connections made so far
	done    chan struct{} // closed when the dial in progress ends
}

// speaks is what an address's connections negotiate.
type speaks int

const (
	speaksUnknown speaks = iota // no connection made yet
	speaksHTTP2
	speaksHTTP1 // HTTP/1.1, or no protocol named (no ALPN)
)

// errDialNotNeeded is what a dial not needed returns, to a Transport that
// no longer waits for it: no request sees it.
var errDialNotNeeded = errors.New("connection not needed: the request was given another")

func newDialGate(dial func(ctx context.Context, network, addr string) (net.Conn, error), cfg *tls.Config) *dialGate {
	if cfg == nil {
		cfg = &tls.Config{}
	}
	cfg = cfg.Clone()
	cfg.NextProtos = []string{"h2", "http/1.1"}
	return &dialGate{dial: dial, tls: cfg, addrs: map[string]*addrDials{}}
}

// DialTLSContext is the Transport's: a TLS connection to addr, through the
// gate.
func (g *dialGate) DialTLSContext(ctx context.Context, network, addr string) (net.Conn, error) {
	rt, _ := ctx.Value(roundTripKey{}).(*roundTrip)
	phase := rt.phase()
	a, gated, needed, err := g.enter(ctx, addr, rt)
	if err != nil {
		return nil, err
	}
	if !needed && rt.movedOn(ctx, phase, obsoleteWait) {
		return nil, errDialNotNeeded
	}
	conn, err := g.handshake(ctx, network, addr)
	g.leave(a, gated, conn, err)
	if err != nil {
		return nil, err
	}
	return conn, nil
}

// enter waits for addr's gate, where it applies: gated says this dial
// holds it; needed is false when an HTTP/2 connection to addr was made
// since the request (rt) last asked the Transport for one, which the
// Transport then handed it.
func (g *dialGate) enter(ctx context.Context, addr string, rt *roundTrip) (a *addrDials, gated, needed bool, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	a = g.addrs[addr]
	if a == nil {
		a = &addrDials{done: make(chan struct{})}
		g.addrs[addr] = a
	}
	asked := a.h2 // when rt names no request: as it entered
	if rt != nil {
		asked = rt.asked()
	}
	for !a.ungated() {
		if a.h2 > asked {
			return a, false, false, nil
		}
		if !a.dialing {
			a.dialing = true
			return a, true, true, nil
		}
		done := a.done
		g.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			err = ctx.Err()
		}
		g.mu.Lock()
		if err != nil {
			return a, false, false, err
		}
	}
	return a, false, true, nil
}

// leave records how a dial to a ended, and opens the gate if it held it.
func (g *dialGate) leave(a *addrDials, gated bool, conn *tls.Conn, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gated {
		a.dialing = false
		close(a.done)
		a.done = make(chan struct{})
	}
	a.failing = err != nil
	if err != nil {
		return
	}
	a.speaks = speaksHTTP1
	if conn.ConnectionState().NegotiatedProtocol == "h2" {
		a.speaks = speaksHTTP2
		a.h2++
	}
}

// made is how many HTTP/2 connections to addr the gate has made.
func (g *dialGate) made(addr string) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if a := g.addrs[addr]; a != nil {
		return a.h2
	}
	return 0
}

// ungated reports whether dials to the address go without the gate: it
// speaks HTTP/1.1 (or names no protocol), or its last dial failed.
func (a *addrDials) ungated() bool { return a.failing || a.speaks == speaksHTTP1 }

// handshake dials addr and makes a TLS connection over it, offering
// HTTP/2 and HTTP/1.1 as the Transport does.
func (g *dialGate) handshake(ctx context.Context, network, addr string) (*tls.Conn, error) {
	raw, err := g.dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	cfg := g.tls
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	tc := tls.Client(raw, cfg)
	hctx, cancel := context.WithTimeout(ctx, tlsHandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		raw.Close()
		return nil, err
	}
	return tc, nil
}

// roundTripKey finds a request's roundTrip in its context, which a
// dial's context keeps the values of.
type roundTripKey struct{}

// roundTrip is one attempt's context, which follows its pass through the
// Transport (httptrace's GetConn and GotConn) for the dial gate: a dial
// made for a request the Transport has since handed a connection is not
// needed.
type roundTrip struct {
	context.Context
	gate  *dialGate
	trace httptrace.ClientTrace

	mu     sync.Mutex
	gen    uint64        // the gate's HTTP/2 connections when the request last asked for one
	steps  uint64        // the GetConn and GotConn so far: a step taken is a want of a connection ended
	got    bool          // GotConn came last: the request holds a connection
	ended  bool          // the round trip is over
	stepCh chan struct{} // made by a waiting dial, closed at the next step
}

// newRoundTrip follows an attempt of context ctx through the Transport
// for g: the attempt goes on rctx.
func newRoundTrip(ctx context.Context, g *dialGate) (rt *roundTrip, rctx context.Context) {
	rt = &roundTrip{Context: ctx, gate: g}
	rt.trace = httptrace.ClientTrace{GetConn: rt.getConn, GotConn: rt.gotConn}
	return rt, httptrace.WithClientTrace(rt, &rt.trace)
}

func (r *roundTrip) Value(key any) any {
	if key == (roundTripKey{}) {
		return r
	}
	return r.Context.Value(key)
}

// getConn is httptrace's: the request asks the Transport for a connection
// to hostPort (an idle one or a new one).
func (r *roundTrip) getConn(hostPort string) {
	gen := r.gate.made(hostPort)
	r.step(func() { r.gen, r.got = gen, false })
}

// gotConn is httptrace's: the request holds a connection (an HTTP/2
// stream reserved on one).
func (r *roundTrip) gotConn(httptrace.GotConnInfo) { r.step(func() { r.got = true }) }

// end marks the round trip over.
func (r *roundTrip) end() { r.step(func() { r.ended = true }) }

// step applies f and wakes the dials waiting for the request to move on.
func (r *roundTrip) step(f func()) {
	r.mu.Lock()
	f()
	r.steps++
	if r.stepCh != nil {
		close(r.stepCh)
		r.stepCh = nil
	}
	r.mu.Unlock()
}

// asked is the gate's count of HTTP/2 connections when the request last
// asked for one.
func (r *roundTrip) asked() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gen
}

// phase is the steps so far (0 for no request).
func (r *roundTrip) phase() uint64 {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.steps
}

// movedOn reports whether the request has moved on from the want of a
// connection it had at phase (it holds one, asked again, or its round
// trip ended), waiting up to d (or until ctx ends) for it: only then
// does the Transport no longer wait for the dial made at phase. A nil
// r has not.
func (r *roundTrip) movedOn(ctx context.Context, phase uint64, d time.Duration) bool {
	if r == nil {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		r.mu.Lock()
		if r.got || r.ended || r.steps != phase {
			r.mu.Unlock()
			return true
		}
		if r.stepCh == nil {
			r.stepCh = make(chan struct{})
		}
		ch := r.stepCh
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return true
		case <-t.C:
			return false
		}
	}
}
