package redisstate

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/redisserver"
)

// TestCheckRefusesWhatCannotServe: a Redis that answers but cannot keep
// the state as the URL names it is refused at Check (ErrUnusable), once,
// before any decision: a database it does not have, rediss:// to a
// plaintext Redis, redis:// to a TLS server; /-1 (which go-redis reads
// as no database: DB 0) is refused at Open. A Redis that is down is not
// refused: later calls may find it.
func TestCheckRefusesWhatCannotServe(t *testing.T) {
	t.Parallel()
	srv := redisserver.Start(t)
	tlsSrv := httptest.NewTLSServer(nil)
	defer tlsSrv.Close()
	// A port nobody listens on, outside the range the kernel hands to
	// listeners on port 0 (one given back there answered as another
	// test's HTTP server: round 15, 1 run in 83).
	down := net.JoinHostPort("127.0.0.1", strconv.Itoa(redisserver.FreePort(t)))
	for _, tc := range []struct {
		url, want string // want: in the error; "" for a Redis that is down
		timeouts  []time.Duration
	}{
		{"redis://" + srv.Addr + "/16", "DB index is out of range", []time.Duration{heard}},
		// A plaintext Redis never answers a TLS handshake (Redis 7.0.15
		// answered nothing in 3 s, nor a PING sent after the ClientHello:
		// it reads an inline command, whose line a NUL byte keeps from
		// ending): Check waits out the call's timeout, then tries a PING
		// without TLS within the same timeout. The handshake's timeout is
		// the outcome, so a short one is tried first; a PING it misses (a
		// loaded machine) leaves Check saying only that nothing answered,
		// and the case is tried again with more time, last at 2 s (heard
		// would be 5 s of waiting; 2 s, not 1, which a PING at load 10 on
		// two cores can miss).
		{"rediss://" + srv.Addr + "/0", "rediss:// names a Redis that answers without TLS", []time.Duration{100 * time.Millisecond, 500 * time.Millisecond, 2 * time.Second}},
		{"redis://" + tlsSrv.Listener.Addr().String() + "/0", "redis:// names a server that speaks TLS", []time.Duration{heard}},
		{"redis://" + down + "/0", "", []time.Duration{heard}},
	} {
		for i, timeout := range tc.timeouts {
			// The probes must be heard: at the default 50 ms a loaded
			// machine's TLS handshake timed out (EOF, not ErrUnusable).
			c, err := Open(tc.url, "", Options{Deployment: "d", CallTimeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			err = c.Check(context.Background())
			c.Close()
			if i < len(tc.timeouts)-1 && unanswered(err) {
				t.Logf("%s within %v: %v; again with more time", tc.url, timeout, err)
				continue
			}
			switch {
			case tc.want == "" && (err == nil || errors.Is(err, ErrUnusable)):
				t.Errorf("%s: %v, want an error that is not ErrUnusable", tc.url, err)
			case tc.want != "" && (!errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%s: %v, want ErrUnusable saying %q", tc.url, err, tc.want)
			}
			break
		}
	}
	if _, err := Open("redis://"+srv.Addr+"/-1", "", Options{Deployment: "d"}); !errors.Is(err, ErrURL) {
		t.Errorf("/-1: %v, want ErrURL", err)
	}
}

// unanswered reports whether Check's err says only that nothing answered
// in time: a timeout, not ErrUnusable nor ErrAuth.
func unanswered(err error) bool {
	var ne net.Error
	return err != nil && !errors.Is(err, ErrUnusable) && !errors.Is(err, ErrAuth) &&
		(errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout())
}

// TestCheckHintsAtAPasswordAsUser: redis://PASSWORD@HOST names a user;
// refused, the error says where a password goes, and never what was
// given.
func TestCheckHintsAtAPasswordAsUser(t *testing.T) {
	t.Parallel()
	srv := redisserver.Start(t, "--requirepass", "s3cret-pw")
	c, err := Open("redis://s3cret-pw@"+srv.Addr+"/0", "", Options{Deployment: "d", CallTimeout: heard})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Check(context.Background())
	if !errors.Is(err, ErrAuth) || !strings.HasSuffix(err.Error(), userHint) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a password given as the user: %v; want ErrAuth with the hint, without the password", err)
	}
}

// TestCheckKeepsThePasswordOut: a server whose errors repeat what it was
// sent (the password of HELLO and AUTH) has it cut out of Check's error.
func TestCheckKeepsThePasswordOut(t *testing.T) {
	t.Parallel()
	fake := redisserver.StartFake(t, func(cmd []string, w io.Writer) error {
		_, err := io.WriteString(w, "-ERR unknown command '"+cmd[0]+"', with args beginning with: '"+strings.Join(cmd[1:], "' '")+"'\r\n")
		return err
	})
	c, err := Open("redis://"+fake.Addr+"/0", "pw-echoed", Options{Deployment: "d", CallTimeout: heard})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Check(context.Background())
	if err == nil || strings.Contains(err.Error(), "pw-echoed") || !strings.Contains(err.Error(), "[password]") {
		t.Errorf("Check: %v; want an error with the password cut out", err)
	}
}
