//go:build unix

package client

import (
	"crypto/tls"
	"net"
	"syscall"
)

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
	sc := socketOf(pc.conn)
	if sc == nil {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var b [1]byte
	var perr error
	if err := rc.Read(func(fd uintptr) bool {
		_, _, perr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true
	}); err != nil {
		return false
	}
	// Nothing to read is the only answer of a connection kept open:
	// no error is a byte or the end of file.
	return perr == syscall.EAGAIN || perr == syscall.EWOULDBLOCK
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
