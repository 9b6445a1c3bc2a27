package redisstate

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// refParse is respScan's reading, written the other way: replies parsed
// one after another from the whole of b by recursion, with the same
// bounds. complete is whether b ends where a reply does.
func refParse(b []byte) (complete bool, err error) {
	for len(b) > 0 {
		p := &refParser{b: b}
		err := p.element(0)
		switch {
		case err == errShort && len(b) > maxReplyBytes:
			return false, errFailed
		case err == errShort:
			return false, nil
		case err != nil:
			return false, err
		case p.pos > maxReplyBytes:
			return false, errFailed
		}
		b = b[p.pos:]
	}
	return true, nil
}

var (
	errShort  = errors.New("the input ends inside a reply")
	errFailed = errors.New("past a bound")
)

type refParser struct {
	b     []byte
	pos   int
	items int
}

func (p *refParser) next() (byte, error) {
	if p.pos == len(p.b) {
		return 0, errShort
	}
	p.pos++
	return p.b[p.pos-1], nil
}

// element parses one element at depth; an attribute is followed by the
// element it annotates, at the same depth.
func (p *refParser) element(depth int) error {
	for {
		kind, err := p.next()
		if err != nil {
			return err
		}
		switch kind {
		case '+', '-', ':', '_', ',', '#', '(':
			return p.line()
		case '$', '!', '=', '*', '~', '>', '%', '|':
		default:
			return errFailed
		}
		n, null, err := p.header(kind)
		if err != nil || null {
			return err
		}
		switch kind {
		case '$', '!', '=':
			return p.body(n)
		case '%', '|':
			n *= 2
		}
		if n > 0 {
			if p.items += n; p.items > maxReplyItems || depth == maxDepth {
				return errFailed
			}
		}
		for range n {
			if err := p.element(depth + 1); err != nil {
				return err
			}
		}
		if kind != '|' {
			return nil
		}
	}
}

func (p *refParser) line() error {
	for n := 0; ; n++ {
		b, err := p.next()
		switch {
		case err != nil:
			return err
		case b == '\r':
			return p.lf()
		case b == '\n' || n == maxLine:
			return errFailed
		}
	}
}

func (p *refParser) lf() error {
	b, err := p.next()
	if err == nil && b != '\n' {
		return errFailed
	}
	return err
}

func (p *refParser) header(kind byte) (n int, null bool, err error) {
	limit := maxReplyItems
	switch kind {
	case '$', '!', '=':
		limit = maxBulk
	case '%', '|':
		limit = maxReplyItems / 2
	}
	neg, digits := false, 0
	for {
		b, err := p.next()
		switch {
		case err != nil:
			return 0, false, err
		case b == '-' && digits == 0 && !neg:
			neg = true
		case b >= '0' && b <= '9':
			digits++
			if n = n*10 + int(b-'0'); neg && n > 1 || n > limit {
				return 0, false, errFailed
			}
		case b == '\r' && digits > 0:
			return n, neg, p.lf()
		default:
			return 0, false, errFailed
		}
	}
}

func (p *refParser) body(n int) error {
	if len(p.b)-p.pos < n {
		p.pos = len(p.b)
		return errShort
	}
	p.pos += n
	b, err := p.next()
	if err == nil && b != '\r' {
		return errFailed
	}
	if err != nil {
		return err
	}
	return p.lf()
}

// scanChunks feeds b to a respScan in chunks cut by seed.
func scanChunks(b []byte, seed uint64) (complete bool, err error) {
	var s respScan
	r := rand.New(rand.NewPCG(seed, 1))
	for len(b) > 0 {
		n := min(len(b), 1+r.IntN(64))
		if seed%3 == 0 {
			n = len(b)
		}
		if err := s.feed(b[:n]); err != nil {
			if !errors.Is(err, ErrReply) {
				return false, err
			}
			return false, errFailed
		}
		b = b[n:]
	}
	return s.bytes == 0, nil // a reply ends: its count starts again
}

// respSeeds are real replies (HELLO 3 of Redis 7, the scripts', errors,
// RESP3 types, an attribute) and some past the bounds.
var respSeeds = []string{
	"%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:5\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n",
	"*3\r\n:1800000000000000\r\n:2\r\n:1\r\n", ":1800000000100000\r\n", "*2\r\n:0\r\n$0\r\n\r\n", "+PONG\r\n",
	"-NOSCRIPT No matching script. Please use EVAL.\r\n", "-ERR DB index is out of range\r\n",
	"_\r\n", "#t\r\n", ",1.5\r\n", "(12345678901234567890\r\n", "=15\r\ntxt:Some string\r\n", "!21\r\nSYNTAX invalid syntax\r\n",
	"$-1\r\n", "*-1\r\n", "~2\r\n:1\r\n:2\r\n", ">2\r\n$7\r\nmessage\r\n$1\r\nx\r\n", "|1\r\n+ttl\r\n:3\r\n*1\r\n:1\r\n",
	"*2000000000\r\n", "$1000000000\r\n", "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", "$3\r\nabcd\r\n",
	"+" + strings.Repeat("A", maxLine+1) + "\r\n", "*-2\r\n", "$\r\n", "HTTP/1.1 400 Bad Request\r\n", "\x15\x03\x01\x00\x02\x02\x46",
}

// FuzzRespScan: the streaming scanner, fed in chunks of any size, refuses
// exactly what the recursive reading refuses, and ends at a reply's end
// exactly when it does.
func FuzzRespScan(f *testing.F) {
	for i, s := range respSeeds {
		f.Add([]byte(s), uint64(i))
		f.Add([]byte(s+s), uint64(i+1))
	}
	f.Fuzz(func(t *testing.T, b []byte, seed uint64) {
		wantComplete, wantErr := refParse(b)
		complete, err := scanChunks(b, seed)
		if (err != nil) != (wantErr != nil) || complete != wantComplete {
			t.Fatalf("%q: scan %v %v, recursive reading %v %v", b, complete, err, wantComplete, wantErr)
		}
	})
}

// TestRespBounds: the bounds, exactly: a reply at each is read, one past
// it refused.
func TestRespBounds(t *testing.T) {
	t.Parallel()
	ints := func(n int) string { return strings.Repeat(":1\r\n", n) }
	nest := func(n int) string { return strings.Repeat("*1\r\n", n) + ":1\r\n" }
	for _, tc := range []struct {
		reply string
		ok    bool
	}{
		{"$4096\r\n" + strings.Repeat("x", 4096) + "\r\n", true},
		{"$4097\r\n", false},
		{"+" + strings.Repeat("A", maxLine) + "\r\n", true},
		{"+" + strings.Repeat("A", maxLine+1) + "\r\n", false},
		{"*1024\r\n" + ints(1024), true},
		{"*1025\r\n", false},
		{"*2\r\n*1000\r\n" + ints(1000) + "*23\r\n", false},
		{"%512\r\n" + ints(1024), true},
		{"%513\r\n", false},
		{nest(8), true},
		{nest(9), false},
		{"*16\r\n" + strings.Repeat("$4096\r\n"+strings.Repeat("x", 4096)+"\r\n", 16), false},
	} {
		var s respScan
		err := s.feed([]byte(tc.reply))
		if (err == nil) != tc.ok || err == nil && s.bytes != 0 {
			t.Errorf("%.40q…: %v at phase %d depth %d, want ok %v", tc.reply, err, s.phase, s.depth, tc.ok)
		}
	}
}
