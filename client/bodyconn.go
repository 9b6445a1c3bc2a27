package client

import (
	"bytes"
	"context"
	"io"
	"net"
	"sync"
)

// bodyConn is a plain connection of the Transport's. net/http writes a
// request body of its own kinds (a *bytes.Reader's, as a raw body is)
// with the header, in one write; any other body (a generated prompt) it
// writes after flushing the header, through the connection's ReadFrom,
// as an io.LimitedReader of the body's length. A TCP connection's
// ReadFrom copies such a reader through a buffer it allocates for each
// body (the body's length, up to 32 KiB: 4.75 KB a request with the
// streams' prompt, bench/README.md); bodyConn copies it through a pooled
// buffer instead (a body up to 32 KiB in one write, as before). A TLS
// connection is not wrapped: net/http reads its state.
//
// net/http also flushes the header of such a body on its own, one write,
// before the body's: bodyConn holds a request header that announces a
// body (Content-Length above 0, and no Expect, whose answer net/http
// could wait for) and writes it with the body's first room, so that a
// generated prompt leaves in one write(2) with its header, as a raw body
// does. Holding it cannot stall a request: the header says the body's
// bytes follow, and net/http writes them next (or, failing to read them,
// closes the connection).
type bodyConn struct {
	net.Conn
	held *[copyRoom]byte // a header waiting for its body, or nil
	n    int             // its length
}

// plainDial is dial with its connections as bodyConns.
func plainDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &bodyConn{Conn: c}, nil
	}
}

// copyRoom is the buffer bodyConn copies another body through.
const copyRoom = 32 << 10

var copyRooms = sync.Pool{New: func() any { return new([copyRoom]byte) }}

// ReadFrom writes r to its end, a room at a time: the room filled before
// each write, so a body read in pieces (a prompt's parts) is still one
// write up to the room's size.
func (c *bodyConn) ReadFrom(r io.Reader) (n int64, err error) {
	room, held := c.held, c.n
	c.held, c.n = nil, 0
	if room == nil {
		room = copyRooms.Get().(*[copyRoom]byte)
	}
	defer copyRooms.Put(room)
	for {
		m, rerr := io.ReadFull(r, room[held:])
		if held+m > 0 {
			w, werr := c.Conn.Write(room[:held+m])
			n += int64(max(w-held, 0))
			held = 0
			if werr != nil {
				return n, werr
			}
		}
		switch rerr {
		case nil:
		case io.EOF, io.ErrUnexpectedEOF:
			return n, nil
		default:
			return n, rerr
		}
	}
}

// Write holds a request header that announces a body (bodyHeader) for
// the body's write, and writes anything else at once, after a header
// held (both in one writev(2)).
func (c *bodyConn) Write(p []byte) (int, error) {
	if c.held != nil {
		room, held := c.held, c.n
		c.held, c.n = nil, 0
		bufs := net.Buffers{room[:held], p}
		_, err := bufs.WriteTo(c.Conn)
		copyRooms.Put(room)
		if err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if len(p) <= copyRoom/2 && bodyHeader(p) {
		c.held = copyRooms.Get().(*[copyRoom]byte)
		c.n = copy(c.held[:], p)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// bodyHeader reports whether p is a whole HTTP/1.1 request header and
// nothing more (its first blank line ends p), as net/http flushes one
// before a body it writes apart, that announces a body: a Content-Length
// above 0, no Expect field (an Expect: 100-continue header must reach
// the server before its body may).
func bodyHeader(p []byte) bool {
	if len(p) < 4 || bytes.Index(p, []byte("\r\n\r\n")) != len(p)-4 ||
		!bytes.HasSuffix(p[:bytes.IndexByte(p, '\n')+1], []byte(" HTTP/1.1\r\n")) {
		return false // not a header alone: a body (or a part) is in p
	}
	if bytes.Contains(p, []byte("\r\nExpect:")) {
		return false
	}
	i := bytes.Index(p, []byte("\r\nContent-Length: "))
	if i < 0 {
		return false
	}
	v := p[i+len("\r\nContent-Length: "):]
	v = v[:bytes.IndexByte(v, '\r')]
	some := false
	for _, d := range v {
		if d < '0' || d > '9' {
			return false
		}
		some = some || d != '0'
	}
	return some
}
