package cmd

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ptuprobe/ptuprobe/internal/redisserver"
)

// heard is --coordinate-timeout at its most, for the tests whose Redis
// must be heard: a loaded machine under -race can miss the default 50 ms
// on loopback, and a call that times out falls back (a check that times
// out is a warning, not the refusal a test waits for).
var heard = []string{"--coordinate-timeout", "10s"}

// counted is a target that refuses its first request (advising 50 ms),
// admits the rest, and counts them.
func counted(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After-Ms", "50")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestCoordinateBadInput: a --coordinate or --policy that cannot be used
// is one line naming the flag, exit 2, before any traffic.
func TestCoordinateBadInput(t *testing.T) {
	t.Parallel()
	srv, sent := counted(t)
	out := filepath.Join(t.TempDir(), "r.csv")
	for _, tc := range []struct {
		flag string
		args []string
	}{
		{"--coordinate", []string{"--max-attempts", "3", "--coordinate", "http://127.0.0.1:6379"}},
		{"--coordinate", []string{"--max-attempts", "3", "--coordinate", "127.0.0.1:6379"}},
		{"--coordinate", []string{"--max-attempts", "3", "--coordinate", "redis://127.0.0.1:6379/db"}},
		{"--coordinate", []string{"--max-attempts", "3", "--coordinate", "redis://:hunter2@127.0.0.1:6379/0"}},
		{"--coordinate", []string{"--max-attempts", "3", "--coordinate", "redis://:hunter2@[::1/0"}},
		{"--coordinate", []string{"--max-attempts", "3", "--coordinate", "redis://127.0.0.1:6379/-1"}},
		{"--coordinate-timeout", []string{"--max-attempts", "3", "--coordinate", "redis://127.0.0.1:6379/0", "--coordinate-timeout", "0s"}},
		{"--coordinate-timeout", []string{"--max-attempts", "3", "--coordinate", "redis://127.0.0.1:6379/0", "--coordinate-timeout", "11s"}},
		{"--coordinate", []string{"--coordinate", "redis://127.0.0.1:6379/0"}},
		{"--coordinate", []string{"--policy", "honor", "--coordinate", "redis://127.0.0.1:6379/0"}},
		{"--coordinate-password-env", []string{"--max-attempts", "3", "--coordinate", "redis://127.0.0.1:6379/0", "--coordinate-password-env", ""}},
		{"--policy", []string{"--policy", "nosuch"}},
		{"--policy", []string{"--policy", "x=honor,attempts=0"}},
		{"--policy", []string{"--policy", "cooldown"}},
	} {
		for _, command := range []string{"burst", "schedule"} {
			args := append([]string{command, "--url", srv.URL, "-o", out, "--quiet"}, tc.args...)
			if command == "schedule" {
				args = append(args, "--rate", "2/s", "--duration", "1s")
			}
			code, stdout, stderr := runCLI(context.Background(), args...)
			if code != ExitUsage || !strings.HasPrefix(stderr, "ptuprobe: "+tc.flag) ||
				strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 || stdout != "" {
				t.Errorf("%v: exit %d, stderr %q; want one line naming %s, exit 2", args, code, stderr, tc.flag)
			}
			if strings.Contains(stderr, "hunter2") {
				t.Errorf("%v: the password is in the output: %q", args, stderr)
			}
		}
	}
	if sent.Load() != 0 {
		t.Errorf("%d requests sent by refused command lines", sent.Load())
	}
}

// TestCoordinateThroughRedis: a refused password is exit 2 before
// traffic; the right one, from the environment, runs, and the fleet's
// state is in Redis under ptuprobe: keys that name nothing of the target.
// A Redis that is gone makes a warning, once, and the run goes on.
func TestCoordinateThroughRedis(t *testing.T) {
	// The passwords are in variables only this test names, set once (not
	// with t.Setenv), so that it runs beside the others.
	os.Setenv("PTUPROBE_TEST_REDIS_PW", "s3cret-pw")
	os.Setenv("PTUPROBE_TEST_REDIS_WRONG_PW", "wrong-pw")
	t.Parallel()
	rs := redisserver.Start(t, "--requirepass", "s3cret-pw")
	srv, sent := counted(t)
	out := filepath.Join(t.TempDir(), "r.csv")
	base := []string{"burst", "--url", srv.URL, "--burst-size", "3", "--burst-waves", "1", "-o", out, "--quiet",
		"--policy", "slots", "--coordinate", "redis://" + rs.Addr + "/0", "--coordinate-password-env", "PTUPROBE_TEST_REDIS_PW", heard[0], heard[1]}

	code, _, stderr := runCLI(context.Background(), append(base, "--coordinate-password-env", "PTUPROBE_TEST_REDIS_WRONG_PW")...)
	if code != ExitUsage || !strings.HasPrefix(stderr, "ptuprobe: --coordinate: ") || strings.Contains(stderr, "wrong-pw") || sent.Load() != 0 {
		t.Fatalf("a refused password: exit %d, stderr %q, %d sent; want exit 2 naming --coordinate, before traffic", code, stderr, sent.Load())
	}

	// The keys the run writes, from Redis' keyspace events: they expire a
	// second after the cooldown's end, so a KEYS after the run missed
	// them on a loaded machine.
	rc := redis.NewClient(&redis.Options{Addr: rs.Addr, Password: "s3cret-pw"})
	defer rc.Close()
	written := keyspaceEvents(t, rc)
	code, stdout, stderr := runCLI(context.Background(), append(base, "--policy", "c=honor,cooldown=on,slots=100ms")...)
	if code != 0 || sent.Load() != 4 || strings.Contains(stdout+stderr, "s3cret-pw") {
		t.Fatalf("exit %d, %d sent; stdout %q stderr %q", code, sent.Load(), stdout, stderr)
	}
	keys := written()
	host, _, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	if len(keys) != 2 {
		t.Errorf("keys %q after a run refused once; want the cooldown and the slots", keys)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "ptuprobe:{") || strings.Contains(k, host) {
			t.Errorf("key %q", k)
		}
	}
	for _, r := range readResults(t, out) {
		if r.Policy != "c" {
			t.Errorf("row policy %q, want the --policy name", r.Policy)
			break
		}
	}

	// Redis gone: the run goes on, warns once, reports its fallbacks on
	// stderr and as a metric.
	rs.Stop()
	gone := []string{"burst", "--url", srv.URL, "--burst-size", "3", "--burst-waves", "1", "-o", out,
		"--policy", "c=honor,cooldown=on", "--coordinate", "redis://" + rs.Addr + "/0",
		"--coordinate-password-env", "PTUPROBE_TEST_REDIS_PW", "--metrics-addr", "127.0.0.1:0", "--metrics-linger", "1m"}
	r := startWithMetrics(t, gone...)
	text, _ := r.finalScrape(t) // exit 0, or it fails the test
	stderr = r.stderr.String()
	if strings.Count(stderr, "warning: --coordinate") != 1 || !strings.Contains(stderr, "fell back") {
		t.Errorf("Redis gone: stderr %q; want one warning and the count of fallbacks", stderr)
	}
	if !strings.Contains(text, "\nptuprobe_coordinate_fallbacks_total ") || strings.Contains(text, "ptuprobe_coordinate_fallbacks_total 0\n") {
		t.Errorf("metrics without the fallbacks counted:\n%s", text)
	}
}

// keyspaceEvents subscribes to rc's keyspace events (database 0); the
// func it returns is the keys written so far, each once, in order: every
// event a command made before it was called, since Redis sends a
// command's events before its reply, and the subscription's PING answer
// after the events queued before it.
func keyspaceEvents(t *testing.T, rc *redis.Client) func() []string {
	t.Helper()
	ctx := context.Background()
	if err := rc.ConfigSet(ctx, "notify-keyspace-events", "K$h").Err(); err != nil {
		t.Fatal(err)
	}
	sub := rc.PSubscribe(ctx, "__keyspace@0__:*")
	t.Cleanup(func() { sub.Close() })
	if _, err := sub.Receive(ctx); err != nil { // the subscription's confirmation
		t.Fatal(err)
	}
	return func() []string {
		t.Helper()
		if err := sub.Ping(ctx, "end"); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for {
			m, err := sub.Receive(ctx)
			if err != nil {
				t.Fatal(err)
			}
			switch m := m.(type) {
			case *redis.Pong:
				return keys
			case *redis.Message:
				if k := strings.TrimPrefix(m.Channel, "__keyspace@0__:"); !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
	}
}

// TestCoordinateRefusesWhatCannotServe: a Redis that answers but cannot
// keep the state as --coordinate names it — a database it does not have,
// rediss:// to a plaintext Redis, a handshake answered with an array of
// 2e9, a password given as the URL's user — is one line naming
// --coordinate, exit 2, before any traffic, the password nowhere.
func TestCoordinateRefusesWhatCannotServe(t *testing.T) {
	t.Parallel()
	plain := redisserver.Start(t)
	locked := redisserver.Start(t, "--requirepass", "s3cret-pw")
	hostile := redisserver.StartFake(t, func(_ []string, w io.Writer) error {
		_, err := io.WriteString(w, "*2000000000\r\n")
		return err
	})
	for _, tc := range []struct {
		url, want string
		timeouts  []string
	}{
		{"redis://" + plain.Addr + "/16", "DB index is out of range", []string{heard[1]}},
		// A plaintext Redis never answers a TLS handshake: the check waits
		// out its timeout, then tries a PING without TLS within the same
		// timeout. The handshake's timeout is the outcome, so a short one
		// is tried first; a PING it misses (a loaded machine) leaves the
		// check unanswered, and the run goes on (its first request
		// refused, a decision asks Redis and warns): the case is then
		// tried again with more time, last at 2 s (not 10 s, the
		// test's longest wait; not 1 s, which a PING at load 10 on two
		// cores can miss). At load 9 the 100 ms missed once in three.
		{"rediss://" + plain.Addr + "/0", "without TLS", []string{"100ms", "500ms", "2s"}},
		{"redis://" + hostile.Addr + "/0", "more than 1024", []string{heard[1]}},
		{"redis://s3cret-pw@" + locked.Addr + "/0", "redis://:PASSWORD@HOST", []string{heard[1]}},
	} {
		for i, timeout := range tc.timeouts {
			srv, sent := counted(t) // each run's first request refused
			code, stdout, stderr := runCLI(context.Background(), "burst", "--url", srv.URL, "-o", filepath.Join(t.TempDir(), "r.csv"), "--quiet",
				"--burst-size", "3", "--burst-waves", "1",
				"--policy", "slots", "--coordinate", tc.url, "--coordinate-password-env", "PTUPROBE_TEST_UNSET_PW", "--coordinate-timeout", timeout)
			if i < len(tc.timeouts)-1 && code != ExitUsage && strings.Contains(stderr, "ptuprobe: warning: --coordinate: Redis failed") {
				t.Logf("%s within %s: exit %d, %q; again with more time", tc.url, timeout, code, stderr)
				continue
			}
			if code != ExitUsage || !strings.HasPrefix(stderr, "ptuprobe: --coordinate: ") || !strings.Contains(stderr, tc.want) ||
				strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 || stdout != "" || strings.Contains(stderr, "s3cret") {
				t.Errorf("%s: exit %d, stderr %q; want one line naming --coordinate saying %q, exit 2", tc.url, code, stderr, tc.want)
			}
			if sent.Load() != 0 {
				t.Errorf("%s: %d requests sent by a refused command line", tc.url, sent.Load())
			}
			break
		}
	}
}

// hostileEval is a Redis that answers the check and misbehaves at the
// scripts: eval answers each EVALSHA (its words), HELLO is answered as
// by an old Redis, PING with PONG.
func hostileEval(t *testing.T, eval func(cmd []string) string) *redisserver.Fake {
	return redisserver.StartFake(t, func(cmd []string, w io.Writer) error {
		reply := "+PONG\r\n"
		switch cmd[0] {
		case "HELLO":
			reply = "-ERR unknown command 'HELLO'\r\n"
		case "EVALSHA":
			reply = eval(cmd)
		}
		_, err := io.WriteString(w, reply)
		return err
	})
}

// TestCoordinateHostileMidRun: a Redis that passes the check and answers
// a script with a string of 1e9 bytes is a fault like a timeout: every
// request is answered and kept, on the process's own state, and the run
// says so in one warning.
func TestCoordinateHostileMidRun(t *testing.T) {
	t.Parallel()
	fake := hostileEval(t, func([]string) string { return "$1000000000\r\n" + strings.Repeat("x", 1<<20) })
	srv, sent := counted(t)
	out := filepath.Join(t.TempDir(), "r.csv")
	code, _, stderr := runCLI(context.Background(), "burst", "--url", srv.URL, "--burst-size", "3", "--burst-waves", "1", "-o", out, "--quiet",
		"--policy", "slots", "--coordinate", "redis://"+fake.Addr+"/0")
	if code != 0 || sent.Load() != 4 || len(readResults(t, out)) != 4 || strings.Count(stderr, "warning: --coordinate") != 1 {
		t.Errorf("exit %d, %d sent, stderr %q; want 4 rows (one refusal retried) and one warning", code, sent.Load(), stderr)
	}
}

// TestCoordinatePaceHeldToTheBudget: a store that grants every send slot
// an hour ahead does not hold a paced run (the command line:
// --retry-budget 2s, --max-duration 3s): each request gives up on its
// slot at once.
func TestCoordinatePaceHeldToTheBudget(t *testing.T) {
	t.Parallel()
	var reserves atomic.Int64
	fake := hostileEval(t, func(cmd []string) string {
		if len(cmd) > 4 && cmd[4] == "reserve" {
			reserves.Add(1)
			return "*3\r\n:" + strconv.FormatInt(time.Now().Add(time.Hour).UnixMicro(), 10) + "\r\n:0\r\n:1\r\n"
		}
		return "*3\r\n:0\r\n:0\r\n:0\r\n"
	})
	srv, sent := counted(t)
	out := filepath.Join(t.TempDir(), "r.csv")
	// The run's own caps would end it within seconds: a minute is a hang.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code, _, stderr := runCLI(ctx, "burst", "--url", srv.URL, "--burst-size", "2", "-o", out, "--quiet",
		"--policy", "pace", "--max-attempts", "3", "--retry-budget", "2s", "--max-duration", "3s", "--coordinate", "redis://"+fake.Addr+"/0",
		// The store must be heard (a loaded machine under -race can miss
		// 50 ms): a call that times out falls back, and the pace sends.
		"--coordinate-timeout", "1s")
	if code == ExitInterrupted || ctx.Err() != nil || sent.Load() != 0 || reserves.Load() == 0 {
		t.Errorf("exit %d, %d sent, %d slots granted an hour ahead; stderr %q; want every request given up on its slot", code, sent.Load(), reserves.Load(), stderr)
	}
}
