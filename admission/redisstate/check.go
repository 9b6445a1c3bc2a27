package redisstate

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"
)

// ErrAuth is the error of a Redis that refuses the password (or asks for
// one): Check wraps it.
var ErrAuth = errors.New("the Redis server refused the password")

// ErrUnusable is the error of a server that answers but cannot keep the
// state as the URL names it: a database number it does not have,
// rediss:// to a Redis without TLS, a TLS handshake it fails, a reply no
// Redis sends. Check wraps it, with why. It does not pass with time, as a
// Redis that is down may.
var ErrUnusable = errors.New("the server cannot keep the state as the URL names it")

// Check pings Redis once, within ctx (each step of it within
// Options.CallTimeout), as every connection starts: the handshake, the
// password, the database. It returns nil when Redis answers; an error
// wrapping ErrAuth when it refuses the password, or ErrUnusable when what
// answers cannot be used as the URL names it; else why nothing answered
// (down, slower than the deadline), which later calls may find answering.
// It counts no fallback, and no error of it holds the password.
func (c *Coordinator) Check(ctx context.Context) error {
	err := c.client.Ping(ctx).Err()
	if err == nil {
		return nil
	}
	return c.diagnose(ctx, c.safe(err))
}

// authErrors are the first words of Redis' answers that refuse a password.
var authErrors = []string{"WRONGPASS", "NOAUTH", "NOPERM", "ERR AUTH", "ERR invalid password"}

// userHint is ErrAuth's hint for a URL with a user name and no password,
// as redis://PASSWORD@HOST is read.
const userHint = "the URL names a user (before the @) and no password is given: " +
	"in a Redis URL a password follows a colon (redis://:PASSWORD@HOST), and it is given apart from the URL"

// diagnose is Check's error for the Ping's err.
func (c *Coordinator) diagnose(ctx context.Context, err error) error {
	msg := err.Error()
	for _, p := range authErrors {
		if strings.HasPrefix(msg, p) {
			if c.url != nil && c.url.userOnly {
				return fmt.Errorf("%w: %s; %s", ErrAuth, firstWord(msg), userHint)
			}
			return fmt.Errorf("%w: %s", ErrAuth, firstWord(msg))
		}
	}
	var re redis.Error
	switch {
	case errors.Is(err, ErrReply):
		return fmt.Errorf("%w: %w", ErrUnusable, err)
	case errors.As(err, &re):
		return fmt.Errorf("%w: it answered %s", ErrUnusable, msg)
	case errors.Is(err, errTLS) && c.url != nil:
		if c.plaintext(ctx) {
			return fmt.Errorf("%w: rediss:// names a Redis that answers without TLS (a plaintext Redis is redis://)", ErrUnusable)
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			return fmt.Errorf("%w: %w", ErrUnusable, err)
		}
	case (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) && c.url != nil && !c.url.tls:
		// A Redis with TLS drops a client that speaks none.
		if c.speaksTLS(ctx) {
			return fmt.Errorf("%w: redis:// names a server that speaks TLS (a Redis with TLS is rediss://)", ErrUnusable)
		}
	}
	return err
}

func firstWord(s string) string { w, _, _ := strings.Cut(s, " "); return w }

// plaintext reports whether a Redis without TLS answers a PING at Open's
// address: after a failed TLS handshake, it tells rediss:// to a
// plaintext Redis (which answers a handshake with nothing, or an error
// line) from a server that is slow or no Redis.
func (c *Coordinator) plaintext(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, c.o.CallTimeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", c.url.addr)
	if err != nil {
		return false
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	conn.SetDeadline(deadline)
	if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return false
	}
	buf := make([]byte, 64)
	n, _ := conn.Read(buf)
	got := buf[:n]
	return bytes.HasPrefix(got, []byte("+PONG")) || bytes.HasPrefix(got, []byte("-NOAUTH"))
}

// speaksTLS reports whether a TLS handshake succeeds at Open's address:
// after a plaintext connection was dropped, it tells redis:// to a Redis
// with TLS from a Redis that is going away. The handshake only asks
// whether the server speaks TLS, so its certificate is not verified;
// nothing is sent over it.
func (c *Coordinator) speaksTLS(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, c.o.CallTimeout)
	defer cancel()
	d := &tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}}
	conn, err := d.DialContext(ctx, "tcp", c.url.addr)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// maxShown bounds the text of a server's error that a message repeats.
const maxShown = 200

// safe is err, from go-redis or the server, with a message fit for a
// user's terminal: a server's error line may repeat what it was sent (the
// password of a HELLO or an AUTH), or anything at all, so the password is
// cut out of it, it is cut to maxShown bytes and quoted when it holds more
// than printable ASCII. errors.Is and As still see err.
func (c *Coordinator) safe(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if c.url != nil && c.url.password != "" {
		msg = strings.ReplaceAll(msg, c.url.password, "[password]")
	}
	cut := len(msg) > maxShown
	if cut {
		msg = msg[:maxShown]
	}
	if strings.IndexFunc(msg, func(r rune) bool { return r < ' ' || r > '~' }) >= 0 {
		msg = strconv.QuoteToASCII(msg)
	}
	if cut {
		msg += "..."
	}
	return &shownError{msg: msg, err: err}
}

type shownError struct {
	msg string
	err error
}

func (e *shownError) Error() string { return e.msg }
func (e *shownError) Unwrap() error { return e.err }
