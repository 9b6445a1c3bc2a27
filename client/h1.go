package client

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// h1Transport is the round tripper of a plain http:// target reached
// directly: HTTP/1.1 over a keep-alive pool, each round trip done in the
// caller's goroutine. net/http's Transport hands a request to its
// connection's writeLoop goroutine, the response from its readLoop back
// to the caller and the body's end back to readLoop: some four goroutine
// wake-ups a request, and two goroutines (with their stacks) an open
// connection. Here the caller writes the request and reads the answer on
// the connection itself, parked by the netpoller while it waits: one
// wake-up a request, no goroutine of the connection's own
// (bench/README.md, round 14). The wire format is the standard
// library's: (*http.Request).Write and http.ReadResponse.
//
// It keeps the Transport's promises the client relies on: a pool of
// idle connections per host, at most maxIdle of them, reused newest
// first and dropped after idleTimeout; a connection goes back only when
// its answer's body was read to its end and neither side asked to close;
// a body closed before its end closes the connection; the request's
// context ending closes the connection, and the round trip or the body's
// read returns the context's error; response headers beyond maxHeader
// bytes fail with net/http's words (Classify reads them); 1xx answers
// but 101 are skipped.
//
// An idle connection is closed when its idleTimeout passes, as the
// Transport's are, by one timer for the pool (sweep) where the Transport
// has one a connection: the Transport resets its connection's timer
// each time the connection is put back and stops it each time it is
// taken, two timer operations a request; this one is armed when the
// first connection goes idle, for the oldest's end, and only rearmed
// when it fires, so a busy pool pays a boolean a request and a firing
// each idleTimeout (bench/README.md, round 15).
//
// What it does differently: a connection kept idle is not watched
// (net/http's readLoop sees a server close it while idle and drops it);
// it is peeked once, without waiting, when it is taken from the pool
// (alive), and dropped if the server closed it or sent anything. A
// request is sent again once, on a new connection, by net/http's rules
// (stale): when writing it met a closed connection, or when it is
// replayable and its kept-alive connection ended before any byte of the
// answer; a POST written and then met by an end of file is recorded,
// never sent twice. And the request is written in full before its
// answer is read, where net/http reads while it writes.
type h1Transport struct {
	dial        func(ctx context.Context, network, addr string) (net.Conn, error)
	maxIdle     int           // idle connections kept, over all hosts
	idleTimeout time.Duration // an idle connection older than this is closed
	maxHeader   int64         // response header bytes, 1xx answers' included
	readSize    int           // each connection's read buffer
	writeSize   int           // and write buffer

	mu      sync.Mutex
	idle    map[string][]*h1Conn // by host:port, newest last
	nIdle   int
	sweep   *time.Timer // runs sweepIdle; made at the first put
	sweepOn bool        // sweep is armed for the oldest idle one's end
}

// newH1Transport is an h1Transport dialing with dial, keeping at most
// maxIdle idle connections, with the Transport's settings of cfg's.
func newH1Transport(dial func(ctx context.Context, network, addr string) (net.Conn, error), maxIdle int) *h1Transport {
	return &h1Transport{
		dial: dial, maxIdle: maxIdle, idleTimeout: 90 * time.Second,
		maxHeader: MaxHeaderBytes, readSize: ReadBufferSize, writeSize: WriteBufferSize,
		idle: map[string][]*h1Conn{},
	}
}

// h1Conn is one connection of an h1Transport's.
type h1Conn struct {
	t      *h1Transport
	addr   string
	conn   net.Conn
	br     *bufio.Reader
	bw     *bufio.Writer
	in     limitedConn
	idleAt time.Time // when it was put back in the pool
	reused bool      // it has carried a request before
	cancel func()    // closes conn: made once, not a request
	peek   peeker    // the socket alive asks, kept from its first reuse
}

// limitedConn is a connection's reading side as the bufio.Reader sees
// it: at most n bytes, so that a response header without an end is
// refused at maxHeader bytes (as net/http's persistConn.Read).
type limitedConn struct {
	conn net.Conn
	n    int64
	read bool // some byte of the answer came
}

func (l *limitedConn) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errHeaderLimit
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.conn.Read(p)
	l.n -= int64(n)
	l.read = l.read || n > 0
	return n, err
}

var errHeaderLimit = errors.New("read limit of response header bytes exhausted")

// errReadOnClosed is net/http's error for a body read after its Close.
var errReadOnClosed = errors.New("http: read on closed response body")

// RoundTrip sends req on an idle connection to its host, or a new one,
// and reads the answer's header; the body is read from the connection
// as the caller reads resp.Body.
func (t *h1Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeRequestBody(req)
		return nil, err
	}
	addr := canonicalAddr(req)
	for again := false; ; again = true {
		pc, err := t.conn(ctx, addr, again)
		if err != nil {
			closeRequestBody(req)
			return nil, err
		}
		resp, err := pc.roundTrip(ctx, req)
		if err == nil {
			return resp, nil
		}
		if again || !pc.reused || !retryable(err) || ctx.Err() != nil {
			return nil, err
		}
		next, rerr := rewound(req)
		if rerr != nil {
			return nil, err
		}
		req = next
	}
}

// canonicalAddr is req's host:port, the port 80 (443 for https) when
// its URL has none.
func canonicalAddr(req *http.Request) string {
	port := req.URL.Port()
	switch {
	case port != "":
	case req.URL.Scheme == "https":
		port = "443"
	default:
		port = "80"
	}
	return net.JoinHostPort(req.URL.Hostname(), port)
}

// closeRequestBody closes req's body, as a round trip must whatever
// becomes of it.
func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// retryable reports whether err, a round trip's failure on a kept-alive
// connection before any byte of the answer came, says the connection
// was gone (the server closed it while it was idle), not that the
// request failed.
func retryable(err error) bool {
	var se stale
	return errors.As(err, &se)
}

// stale is the failure of a round trip whose connection was found
// closed (end of file, broken pipe) before any byte of the answer.
type stale struct{ err error }

func (s stale) Error() string { return s.err.Error() }
func (s stale) Unwrap() error { return s.err }

// rewound is req with its body again (req.GetBody), to be sent anew; an
// error when it has a body and no GetBody (the round trip's own error is
// then returned).
func rewound(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	if req.GetBody == nil {
		return nil, errors.New("no GetBody to send the body again")
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	again := *req
	again.Body = body
	return &again, nil
}

// conn is the newest idle connection to addr younger than idleTimeout
// (unless fresh), or a new one.
func (t *h1Transport) conn(ctx context.Context, addr string, fresh bool) (*h1Conn, error) {
	if !fresh {
		for pc := t.takeIdle(addr); pc != nil; pc = t.takeIdle(addr) {
			if pc.alive() {
				return pc, nil
			}
			pc.conn.Close()
		}
	}
	c, err := t.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	pc := &h1Conn{t: t, addr: addr, conn: c, in: limitedConn{conn: c}}
	pc.br = bufio.NewReaderSize(&pc.in, t.readSize)
	pc.bw = bufio.NewWriterSize(c, t.writeSize)
	pc.cancel = func() { c.Close() }
	return pc, nil
}

// takeIdle is the newest idle connection to addr, or nil; it closes
// them all when that one has been idle longer than idleTimeout.
func (t *h1Transport) takeIdle(addr string) *h1Conn {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.idle[addr]
	if len(s) == 0 {
		return nil
	}
	pc := s[len(s)-1]
	s[len(s)-1] = nil
	t.idle[addr] = s[:len(s)-1]
	t.nIdle--
	if time.Since(pc.idleAt) > t.idleTimeout {
		// The newest is too old: so are all the others to addr.
		for _, o := range t.idle[addr] {
			o.conn.Close()
		}
		t.nIdle -= len(t.idle[addr])
		delete(t.idle, addr)
		pc.conn.Close()
		return nil
	}
	return pc
}

// put gives pc back to the pool, newest; it closes pc when the pool is
// full. The pool's sweep is armed if it was not.
func (t *h1Transport) put(pc *h1Conn) {
	pc.idleAt = time.Now()
	pc.reused = true
	if pc.br.Buffered() > 0 {
		// Bytes past the answer's end: not an answer to the next
		// request (net/http drops such a connection too).
		pc.conn.Close()
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.nIdle >= t.maxIdle {
		pc.conn.Close()
		return
	}
	t.idle[pc.addr] = append(t.idle[pc.addr], pc)
	t.nIdle++
	if !t.sweepOn {
		t.armSweepLocked(t.idleTimeout)
	}
}

// armSweepLocked has sweepIdle run in d.
func (t *h1Transport) armSweepLocked(d time.Duration) {
	if t.sweep == nil {
		t.sweep = time.AfterFunc(d, t.sweepIdle)
	} else {
		t.sweep.Reset(d)
	}
	t.sweepOn = true
}

// sweepIdle closes the idle connections whose idleTimeout has passed
// and arms the sweep again for the end of the oldest left, if any.
func (t *h1Transport) sweepIdle() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweepOn = false
	now := time.Now()
	var oldest time.Time
	for addr, s := range t.idle {
		old := 0
		for old < len(s) && now.Sub(s[old].idleAt) >= t.idleTimeout {
			s[old].conn.Close()
			old++
		}
		t.nIdle -= old
		if old == len(s) {
			delete(t.idle, addr)
			continue
		}
		if old > 0 {
			n := copy(s, s[old:])
			clear(s[n:])
			t.idle[addr] = s[:n]
		}
		if at := s[0].idleAt; oldest.IsZero() || at.Before(oldest) {
			oldest = at
		}
	}
	if !oldest.IsZero() {
		t.armSweepLocked(oldest.Add(t.idleTimeout).Sub(now))
	}
}

// CloseIdleConnections closes every idle connection.
func (t *h1Transport) CloseIdleConnections() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closeIdleLocked()
}

func (t *h1Transport) closeIdleLocked() {
	if t.sweep != nil {
		t.sweep.Stop()
	}
	t.sweepOn = false
	for addr, s := range t.idle {
		for _, pc := range s {
			pc.conn.Close()
		}
		delete(t.idle, addr)
	}
	t.nIdle = 0
}

// roundTrip writes req on pc and reads the answer's header. The
// connection is closed when ctx ends before the body's end (stop then
// reports false), and then every failure is ctx's error.
func (pc *h1Conn) roundTrip(ctx context.Context, req *http.Request) (*http.Response, error) {
	stop := context.AfterFunc(ctx, pc.cancel)
	fail := func(err error) (*http.Response, error) {
		stop()
		pc.conn.Close()
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	pc.in.n, pc.in.read = pc.t.maxHeader, false
	// (*http.Request).Write closes the body. A generated prompt's header
	// is flushed apart, before its body, which bodyConn holds to write
	// with the body, in one write(2) (client/bodyconn.go).
	if err := req.Write(pc.bw); err != nil {
		return fail(pc.stale(req, err, true))
	}
	if err := pc.bw.Flush(); err != nil {
		return fail(pc.stale(req, err, true))
	}
	resp, err := pc.readResponse(req)
	if err != nil {
		if pc.in.n <= 0 {
			err = fmt.Errorf("net/http: server response headers exceeded %d bytes; aborted", pc.t.maxHeader)
		}
		return fail(pc.stale(req, err, false))
	}
	pc.in.n = math.MaxInt64
	keep := !resp.Close && !req.Close && resp.StatusCode >= 200
	if resp.Body == http.NoBody {
		if stop() && keep {
			pc.t.put(pc)
		} else {
			pc.conn.Close()
		}
		return resp, nil
	}
	resp.Body = &h1Body{body: resp.Body, pc: pc, ctx: ctx, stop: stop, keep: keep}
	return resp, nil
}

// readResponse reads the answer to req, past 1xx answers but 101, all
// their headers within maxHeader bytes (as net/http's without a trace).
func (pc *h1Conn) readResponse(req *http.Request) (*http.Response, error) {
	for {
		resp, err := http.ReadResponse(pc.br, req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode < 100 || resp.StatusCode > 199 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
	}
}

// stale marks err as a connection found gone, when pc had carried a
// request before and no byte of this one's answer came, so that req may
// be sent again on a new connection, as net/http's Transport would: a
// reset or broken pipe while writing (the server had closed the
// connection: nothing of the request was read), or, for a replayable
// request (GET, HEAD, OPTIONS, TRACE, or one with an idempotency key,
// its body to be had again), an end of file before the answer. A POST
// that went out and met an end of file, or a reset read, is a server
// that read it and did not answer: it is recorded as it is, never sent
// twice (the pool's peek, alive, drops a connection the server closed
// while it was idle before it is used).
func (pc *h1Conn) stale(req *http.Request, err error, writing bool) error {
	if !pc.reused || pc.in.read {
		return err
	}
	if writing && (errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)) ||
		replayable(req) && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
		return stale{err}
	}
	return err
}

// replayable reports whether req may be sent twice, by net/http's rule:
// its method is idempotent and it has no body to lose, or it carries an
// idempotency key.
func replayable(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, key := req.Header["Idempotency-Key"]
	_, xkey := req.Header["X-Idempotency-Key"]
	return key || xkey
}

// h1Body is an answer's body on its connection: read to its end, it
// gives the connection back to the pool (when both sides keep it);
// closed before, or failed, it closes the connection.
type h1Body struct {
	body io.ReadCloser // http.ReadResponse's, on pc.br
	pc   *h1Conn
	ctx  context.Context
	stop func() bool // ends the context's watch
	keep bool        // the connection may carry another request
	done atomic.Bool // the end was seen, or the body closed
	eof  bool
}

func (b *h1Body) Read(p []byte) (int, error) {
	if b.done.Load() {
		if b.eof {
			return 0, io.EOF
		}
		return 0, errReadOnClosed
	}
	n, err := b.body.Read(p)
	switch {
	case err == io.EOF:
		if b.done.CompareAndSwap(false, true) {
			b.eof = true
			if b.stop() && b.keep {
				b.pc.t.put(b.pc)
			} else {
				b.pc.conn.Close()
			}
		}
	case err != nil:
		b.end()
		if cerr := b.ctx.Err(); cerr != nil {
			err = cerr
		}
	}
	return n, err
}

// Close closes the connection unless the body was read to its end: the
// rest is not read (http.ReadResponse's body would read it all).
func (b *h1Body) Close() error {
	b.end()
	return nil
}

func (b *h1Body) end() {
	if b.done.CompareAndSwap(false, true) {
		b.stop()
		b.pc.conn.Close()
	}
}

// http1Dial is dial with a TLS connection made over each connection,
// offering HTTP/1.1 alone (Config.HTTP1), as a bodyConn: bodyConn writes
// a generated prompt's header and body in one TLS record's write.
func http1Dial(dial func(ctx context.Context, network, addr string) (net.Conn, error), cfg *tls.Config) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if cfg == nil {
		cfg = &tls.Config{}
	}
	cfg = cfg.Clone()
	cfg.NextProtos = []string{"http/1.1"}
	g := &dialGate{dial: dial, tls: cfg}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		tc, err := g.handshake(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &bodyConn{Conn: tc}, nil
	}
}
