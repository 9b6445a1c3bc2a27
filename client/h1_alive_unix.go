//go:build unix

package client

import (
	"crypto/tls"
	"net"
	"syscall"
)

// peeker is what alive needs of a connection's socket, got at its first
// reuse and kept, so that the peek before each reuse allocates nothing
// (a syscall.RawConn and a closure a request before: bench/README.md,
// round 15).
type peeker struct {
	raw   syscall.RawConn       // the socket's, nil until asked
	none  bool                  // the connection is not a socket
	recv  func(fd uintptr) bool // peek, a method value made once
	errno error                 // the last peek's
	buf   [1]byte
}

// peek reads one byte without taking it or waiting; p.errno is nil when
// a byte or the end of file is there.
func (p *peeker) peek(fd uintptr) bool {
	_, _, p.errno = syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return true
}

// alive reports whether pc, idle in the pool, may carry a request: its
// far side has neither closed it nor sent a byte since its last answer.
// net/http's readLoop watches an idle connection and drops it when the
// server closes it; here nothing waits on an idle connection, so it is
// asked once before it is reused, by a peek that does not wait (one
// system call). Without it, a request written on a connection the server
// had closed would fail with an end of file that cannot be told from a
// server that read the request and closed without an answer, which must
// be recorded, not sent again. A connection that cannot be asked (not a
// socket) is taken as alive.
func (pc *h1Conn) alive() bool {
	p := &pc.peek
	if p.raw == nil {
		if p.none {
			return true
		}
		sc := socketOf(pc.conn)
		if sc == nil {
			p.none = true
			return true
		}
		rc, err := sc.SyscallConn()
		if err != nil {
			return false
		}
		p.raw, p.recv = rc, p.peek
	}
	if err := p.raw.Read(p.recv); err != nil {
		return false
	}
	// Nothing to read is the only answer of a connection kept open:
	// no error is a byte or the end of file.
	return p.errno == syscall.EAGAIN || p.errno == syscall.EWOULDBLOCK
}

// socketOf is the socket under c, through bodyConn and TLS, or nil.
func socketOf(c net.Conn) syscall.Conn {
	for {
		switch v := c.(type) {
		case *bodyConn:
			c = v.Conn
		case *tls.Conn:
			c = v.NetConn()
		case syscall.Conn:
			return v
		default:
			return nil
		}
	}
}
