package redisstate

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"
)

// The bounds of what one reply from Redis may hold. The scripts answer an
// integer or an array of three; HELLO a map of seven fields and the
// modules loaded; PING a status; an error is one line. go-redis allocates
// what a header announces before it reads the elements (an array of 2e9
// is 32 GB), so a reply past a bound fails the read of its connection, as
// a lost connection would, before go-redis sees the header: that call
// falls back, and the connection is closed.
const (
	maxReplyBytes = 64 << 10 // one reply, headers included
	maxReplyItems = 1024     // the elements one reply announces, nested ones included
	maxBulk       = 4 << 10  // one bulk string's bytes
	maxLine       = 4 << 10  // one simple line: a status, an error, a number
	maxDepth      = 8        // aggregates one within another
)

// ErrReply is the error of a read from Redis that met a reply no Redis
// sends to a Coordinator's calls: too large, too deep, or no RESP at all
// (wrapped with what it was).
var ErrReply = errors.New("the server's reply is not one Redis sends to these calls")

func replyErr(format string, a ...any) error {
	return &replyError{why: fmt.Sprintf(format, a...)}
}

// replyError is ErrReply with what the reply was. It is ErrReply by Is,
// not by Unwrap: go-redis unwraps a handshake's error once, which would
// leave ErrReply without the what.
type replyError struct{ why string }

func (e *replyError) Error() string        { return ErrReply.Error() + ": " + e.why }
func (e *replyError) Is(target error) bool { return target == ErrReply }

// respPhase is what a respScan expects of the next byte.
type respPhase uint8

const (
	atType   respPhase = iota // an element's type byte
	inHeader                  // the length or count after it, to its CR
	inLine                    // a simple line's text, to its CR
	inBody                    // a bulk string's bytes
	atCR                      // the CR after a bulk string's bytes
	atLF                      // the LF after a CR
)

// respScan follows the RESP stream a connection reads, reply by reply,
// and refuses the first byte that makes a reply exceed a bound. It keeps
// no byte of the stream: only where in a reply it is.
type respScan struct {
	phase  respPhase
	ending respPhase // what the CR that atLF follows ended
	kind   byte      // the type byte of the element being read
	num    int64     // the header's number so far
	neg    bool      // the header began with '-' (only -1, a null, is one)
	digits int
	line   int   // bytes of the simple line so far
	left   int64 // bytes of the bulk string still to come
	bytes  int64 // bytes of the reply so far
	items  int64 // elements the reply has announced so far
	depth  int
	open   [maxDepth]struct {
		left int64 // elements of the aggregate still to come
		attr bool  // an attribute: the element it annotates follows it
	}
}

// feed scans p, the next bytes of the stream.
func (s *respScan) feed(p []byte) error {
	for i := 0; i < len(p); {
		if s.phase == inBody {
			n := min(int64(len(p)-i), s.left)
			i += int(n)
			s.left -= n
			s.bytes += n
			if s.left == 0 {
				s.phase = atCR
			}
			if s.bytes > maxReplyBytes {
				return errReplyBytes
			}
			continue
		}
		// Counted before the step, which may end the reply.
		if s.bytes++; s.bytes > maxReplyBytes {
			return errReplyBytes
		}
		if err := s.step(p[i]); err != nil {
			return err
		}
		i++
	}
	return nil
}

var errReplyBytes = replyErr("a reply of more than %d bytes", maxReplyBytes)

// step scans one byte outside a bulk string's body.
func (s *respScan) step(b byte) error {
	switch s.phase {
	case atType:
		s.kind, s.num, s.neg, s.digits, s.line = b, 0, false, 0, 0
		switch b {
		case '+', '-', ':', '_', ',', '#', '(':
			s.phase = inLine
		case '$', '!', '=', '*', '~', '>', '%', '|':
			s.phase = inHeader
		default:
			return replyErr("a reply element began with byte %#02x, no RESP type", b)
		}
	case inLine:
		switch {
		case b == '\r':
			s.phase, s.ending = atLF, inLine
		case b == '\n':
			return replyErr("a line ended without CR")
		case s.line >= maxLine:
			return replyErr("a line of more than %d bytes", maxLine)
		default:
			s.line++
		}
	case inHeader:
		return s.headerByte(b)
	case atCR:
		if b != '\r' {
			return replyErr("a bulk string longer than it announced")
		}
		s.phase, s.ending = atLF, inBody
	case atLF:
		if b != '\n' {
			return replyErr("a CR without LF")
		}
		if s.ending == inHeader {
			return s.header()
		}
		s.done()
	}
	return nil
}

// headerByte scans one byte of a length or count: -1 (a null) or digits
// up to the bound of its kind.
func (s *respScan) headerByte(b byte) error {
	switch {
	case b == '-' && s.digits == 0 && !s.neg:
		s.neg = true
	case b >= '0' && b <= '9':
		s.digits++
		s.num = s.num*10 + int64(b-'0')
		if s.neg && s.num > 1 {
			return replyErr("a negative length other than -1")
		}
		if limit := s.limit(); s.num > limit {
			return replyErr("a %c header announcing more than %d", s.kind, limit)
		}
	case b == '\r' && s.digits > 0:
		s.phase, s.ending = atLF, inHeader
	default:
		return replyErr("a %c header that is no length", s.kind)
	}
	return nil
}

// limit is the largest number a header of s.kind may announce: bytes of
// a bulk string, elements of an aggregate (pairs of a map).
func (s *respScan) limit() int64 {
	switch s.kind {
	case '$', '!', '=':
		return maxBulk
	case '%', '|':
		return maxReplyItems / 2
	}
	return maxReplyItems
}

// header acts on a complete header: a bulk string's body follows, an
// aggregate opens, a null or an empty aggregate is an element done.
func (s *respScan) header() error {
	n := s.num
	switch {
	case s.neg:
		s.done()
		return nil
	case s.kind == '$' || s.kind == '!' || s.kind == '=':
		s.left, s.phase = n, inBody
		if n == 0 {
			s.phase = atCR
		}
		return nil
	case s.kind == '%' || s.kind == '|':
		n *= 2
	}
	attr := s.kind == '|'
	if n == 0 {
		if attr {
			s.phase = atType // the annotated element follows
		} else {
			s.done()
		}
		return nil
	}
	if s.items += n; s.items > maxReplyItems {
		return replyErr("a reply announcing more than %d elements", maxReplyItems)
	}
	if s.depth == maxDepth {
		return replyErr("aggregates nested more than %d deep", maxDepth)
	}
	s.open[s.depth].left, s.open[s.depth].attr = n, attr
	s.depth++
	s.phase = atType
	return nil
}

// done ends an element: it counts in the aggregate it is in, which may end
// with it, and so on out; the reply ends with its outermost element. An
// attribute is no element of its own: the one it annotates follows.
func (s *respScan) done() {
	s.phase = atType
	for s.depth > 0 {
		f := &s.open[s.depth-1]
		if f.left--; f.left > 0 {
			return
		}
		s.depth--
		if f.attr {
			return
		}
	}
	s.bytes, s.items = 0, 0
}

// guardedConn is a connection to Redis whose reads pass through a
// respScan: the first read that meets a reply past a bound fails, and so
// does every read after it.
type guardedConn struct {
	net.Conn
	scan respScan
	err  error
}

func (c *guardedConn) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.Conn.Read(p)
	if e := c.scan.feed(p[:n]); e != nil {
		c.err = e
		return 0, e
	}
	return n, err
}

// NetConn is the connection below, for go-redis' check of an idle
// connection (as crypto/tls.Conn's).
func (c *guardedConn) NetConn() net.Conn { return c.Conn }

// errTLS marks a dial whose TLS handshake failed after the TCP connection
// was made: a plaintext Redis answers a handshake with nothing, or with an
// error line.
var errTLS = errors.New("the TLS handshake failed")

// dialer is go-redis' Options.Dialer for Open: a TCP connection within
// timeout (and ctx), with TLS when tlsConf is set, its handshake within
// the same bound, and every read through a respScan.
func dialer(tlsConf *tls.Config, timeout time.Duration) func(context.Context, string, string) (net.Conn, error) {
	nd := &net.Dialer{Timeout: timeout}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		conn, err := nd.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if tlsConf != nil {
			tc := tls.Client(conn, tlsConf)
			if err := tc.HandshakeContext(ctx); err != nil {
				conn.Close()
				return nil, fmt.Errorf("%w: %w", errTLS, err)
			}
			conn = tc
		}
		return &guardedConn{Conn: conn}, nil
	}
}
