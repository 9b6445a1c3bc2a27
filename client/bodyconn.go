package client

import (
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
type bodyConn struct{ net.Conn }

// plainDial is dial with its connections as bodyConns.
func plainDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return bodyConn{c}, nil
	}
}

// copyRoom is the buffer bodyConn copies another body through.
const copyRoom = 32 << 10

var copyRooms = sync.Pool{New: func() any { return new([copyRoom]byte) }}

// ReadFrom writes r to its end, a room at a time: the room filled before
// each write, so a body read in pieces (a prompt's parts) is still one
// write up to the room's size.
func (c bodyConn) ReadFrom(r io.Reader) (n int64, err error) {
	room := copyRooms.Get().(*[copyRoom]byte)
	defer copyRooms.Put(room)
	for {
		m, rerr := io.ReadFull(r, room[:])
		if m > 0 {
			w, werr := c.Conn.Write(room[:m])
			n += int64(w)
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
