package cmd

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ptuprobe/ptuprobe/internal/redisserver"
)

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
		"--policy", "slots", "--coordinate", "redis://" + rs.Addr + "/0", "--coordinate-password-env", "PTUPROBE_TEST_REDIS_PW"}

	code, _, stderr := runCLI(context.Background(), append(base, "--coordinate-password-env", "PTUPROBE_TEST_REDIS_WRONG_PW")...)
	if code != ExitUsage || !strings.HasPrefix(stderr, "ptuprobe: --coordinate: ") || strings.Contains(stderr, "wrong-pw") || sent.Load() != 0 {
		t.Fatalf("a refused password: exit %d, stderr %q, %d sent; want exit 2 naming --coordinate, before traffic", code, stderr, sent.Load())
	}

	code, stdout, stderr := runCLI(context.Background(), append(base, "--policy", "c=honor,cooldown=on,slots=100ms")...)
	if code != 0 || sent.Load() != 4 || strings.Contains(stdout+stderr, "s3cret-pw") {
		t.Fatalf("exit %d, %d sent; stdout %q stderr %q", code, sent.Load(), stdout, stderr)
	}
	rc := redis.NewClient(&redis.Options{Addr: rs.Addr, Password: "s3cret-pw"})
	defer rc.Close()
	keys := rc.Keys(context.Background(), "*").Val()
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
