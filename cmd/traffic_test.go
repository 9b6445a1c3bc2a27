package cmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/results"
)

// runCLI runs the command line in-process and returns exit code and output.
func runCLI(ctx context.Context, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

// readResults reads every record of a results file (testkit.ReadRecords).
var readResults = testkit.ReadRecords

// scripted answers by the request's order of arrival: a mix of every header
// form, a 503 and a connection reset.
func scripted(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch n.Add(1) % 7 {
		case 0:
			w.Header().Set("retry-after-ms", "43")
			w.Header().Set("retry-after", "1")
			w.WriteHeader(429)
		case 1:
			w.Header().Set("retry-after", "2")
			w.WriteHeader(429)
		case 2:
			w.Header().Set("retry-after-ms", "garbage")
			w.WriteHeader(429)
		case 3:
			w.WriteHeader(503)
		case 4:
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		case 5:
			now := time.Now().UTC()
			w.Header().Set("Date", now.Format(http.TimeFormat))
			w.Header().Set("retry-after", now.Add(3*time.Second).Format(http.TimeFormat))
			w.WriteHeader(429)
		default:
			io.WriteString(w, `{"usage":{"prompt_tokens":1000,"completion_tokens":40}}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

const canaryKey = "canary-key-7f3a9b"
const canaryDeployment = "canary-deployment-x1"

func TestBurstAgainstScriptedTarget(t *testing.T) {
	t.Parallel()
	srv, _ := scripted(t)
	out := filepath.Join(t.TempDir(), "results.csv")
	code, stdout, stderr := runCLI(context.Background(), "burst", "--endpoint", srv.URL, "--deployment", canaryDeployment, "--api-key-env", canaryKeyEnv,
		"--burst-size", "14", "--burst-waves", "2", "--burst-gap", "200ms", "--max-in-flight", "1", "-o", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := readResults(t, out)
	if len(recs) != 28 {
		t.Fatalf("%d rows, want 28", len(recs))
	}
	var waits, dates, invalid, none, resets, s503, s200 int
	seen := map[int]bool{}
	for _, r := range recs {
		seen[r.Seq] = true
		if r.Shape != "burst" || r.Group != "burst-shaped" || r.Wave != r.Seq/14 || r.Attempt != 1 || len(r.RunID) != 8 {
			t.Fatalf("row %+v", r)
		}
		switch {
		case r.Status == 429 && r.WaitSource == results.WaitRetryAfterDate:
			dates++
			if r.WaitMS != 3000 || !strings.Contains(r.RetryAfter, "GMT") {
				t.Errorf("http-date wait %v from %q", r.WaitMS, r.RetryAfter)
			}
		case r.Status == 429 && r.HasWait():
			waits++
			if r.WaitMS != 43 && r.WaitMS != 2000 {
				t.Errorf("wait %v", r.WaitMS)
			}
		case r.Status == 429 && r.WaitSource == results.WaitInvalid:
			invalid++
		case r.Status == 429:
			none++
		case r.Error == results.ClassReset:
			resets++
		case r.Status == 503:
			s503++
		case r.Status == 200:
			s200++
			if r.PromptTokens != 1000 || r.MaxTokens != 100 {
				t.Errorf("usage %+v", r)
			}
		}
	}
	if len(seen) != 28 || waits != 8 || dates != 4 || invalid != 4 || resets != 4 || s503 != 4 || s200 != 4 {
		t.Fatalf("seqs %d waits %d dates %d invalid %d none %d resets %d 503 %d 200 %d", len(seen), waits, dates, invalid, none, resets, s503, s200)
	}
	if !strings.Contains(stdout, "requests: 28") || !strings.Contains(stdout, "429s: 16") {
		t.Errorf("summary:\n%s", stdout)
	}
	assertNoSecrets(t, srv.URL, stdout, stderr, out)
}

func assertNoSecrets(t *testing.T, url, stdout, stderr, file string) {
	t.Helper()
	b, _ := os.ReadFile(file)
	host := strings.TrimPrefix(url, "http://")
	for _, where := range []struct{ name, text string }{{"stdout", stdout}, {"stderr", stderr}, {"results", string(b)}} {
		for _, secret := range []string{canaryKey, canaryDeployment, host} {
			if strings.Contains(where.text, secret) {
				t.Errorf("%s contains %q", where.name, secret)
			}
		}
	}
}

func TestScheduleConstantRate(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("retry-after-ms", "7")
		w.WriteHeader(429)
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "results.csv")
	code, stdout, stderr := runCLI(context.Background(), "schedule", "--url", srv.URL+"/v1/chat/completions",
		"--rate", "200/s", "--duration", "250ms", "-o", out, "--group", "night-run", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := readResults(t, out)
	if len(recs) != 50 {
		t.Fatalf("%d rows, want exactly 50", len(recs))
	}
	for _, r := range recs {
		if r.Shape != "scheduled" || r.Group != "night-run" || r.Wave != results.None || r.WaitMS != 7 {
			t.Fatalf("row %+v", r)
		}
		if want := float64(r.Seq) * 5; r.IntendedMS < want-0.001 || r.IntendedMS > want+0.001 {
			t.Fatalf("seq %d intended %v, want %v", r.Seq, r.IntendedMS, want)
		}
		if r.SentMS < r.IntendedMS {
			t.Fatalf("seq %d sent before its time", r.Seq)
		}
	}
	if !strings.Contains(stdout, "p50 7 ms") {
		t.Errorf("summary:\n%s", stdout)
	}
	// A second run appends under the same header.
	runCLI(context.Background(), "schedule", "--url", srv.URL, "--rate", "20/s", "--duration", "100ms", "-o", out, "--quiet")
	if n := len(readResults(t, out)); n != 52 {
		t.Fatalf("after append: %d rows, want 52", n)
	}
}

// TestInterruptKeepsCompletedRows cancels a run (as SIGINT does) while some
// requests are answered and others hang: exit 130, every answered request
// in the file, the hanging ones recorded as canceled after the grace.
func TestInterruptKeepsCompletedRows(t *testing.T) {
	t.Parallel()
	var answered atomic.Int64
	release := make(chan struct{})
	var once sync.Once
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if answered.Load() >= 8 {
			// Requests past the eighth hang until the test ends.
			once.Do(cancel)
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		answered.Add(1)
		w.Header().Set("retry-after-ms", "5")
		w.WriteHeader(429)
	}))
	defer srv.Close()
	defer close(release)
	out := filepath.Join(t.TempDir(), "results.csv")
	code, stdout, stderr := runCLI(ctx, "schedule", "--url", srv.URL, "--rate", "100/s", "--duration", "10s",
		"--max-in-flight", "1", "-o", out, "--quiet", "--grace", "50ms")
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want 130: %s", code, stderr)
	}
	recs := readResults(t, out)
	var ok, canceled int
	for _, r := range recs {
		switch {
		case r.Status == 429:
			ok++
		case r.Error == results.ClassCanceled:
			canceled++
		}
	}
	if ok != 8 || canceled != 1 || len(recs) != 9 {
		t.Fatalf("rows %d: answered %d canceled %d, want 8 and 1", len(recs), ok, canceled)
	}
	if !strings.Contains(stderr, "interrupted: 9 completed requests kept") || !strings.Contains(stdout, "requests: 9") {
		t.Fatalf("stdout %q stderr %q", stdout, stderr)
	}
}

func TestBadInputIsOneLineExit2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign.csv")
	os.WriteFile(foreign, []byte("a,b\n1,2\n"), 0o644)
	tests := [][]string{
		{"schedule", "--rate", "0", "--url", "http://127.0.0.1:9"},
		{"schedule", "--rate", "-5/s", "--url", "http://127.0.0.1:9"},
		{"schedule", "--rate", "10/s", "--duration", "banana", "--url", "http://127.0.0.1:9"},
		{"schedule", "--phase", "warmup:2m", "--url", "http://127.0.0.1:9"},
		{"schedule", "--url", "http://127.0.0.1:9"},
		{"schedule", "--rate", "10", "--phase", "1s@1", "--url", "http://127.0.0.1:9"},
		{"schedule", "--rate", "100/s", "--duration", "200s", "--url", "http://127.0.0.1:9"},
		{"burst", "--burst-size", "0", "--url", "http://127.0.0.1:9"},
		{"burst", "--burst-size", "5000", "--burst-waves", "3", "--url", "http://127.0.0.1:9"},
		{"burst", "--url", "ftp://127.0.0.1:9/x"},
		{"burst", "--endpoint", "http://127.0.0.1:9"},
		{"burst", "--api", "raw", "--url", "http://127.0.0.1:9", "--body", "@" + filepath.Join(dir, "missing.json")},
		{"burst", "--url", "http://127.0.0.1:9", "--header", "no-colon"},
		{"burst", "--url", "http://127.0.0.1:9", "-o", foreign},
		{"burst", "--url", "http://127.0.0.1:9", "--group", "a,b"},
		{"burst", "--burst-waves", "2", "--burst-gap", "20m", "--url", "http://127.0.0.1:9"},
		{"burst", "--api-key-env", "PTUPROBE_SURELY_UNSET", "--url", "http://127.0.0.1:9"},
		{"burst", "--prompt-tokens", "1099511627776", "--url", "http://127.0.0.1:9"},
		{"burst", "--url", "http://127.0.0.1:99999"},
		{"burst", "--api", "raw", "--method", "GE T", "--url", "http://127.0.0.1:9"},
		{"burst", "--no-such-flag"},
		{"schedule", "extra-arg"},
		{"brust", "--burst-size", "3"},
		{"burst", "--burst-size", "4611686018427387905", "--burst-waves", "4", "--url", "http://127.0.0.1:9"},
		{"burst", "--burst-waves", "3", "--burst-gap", "2000000h", "--url", "http://127.0.0.1:9"},
		{"burst", "--max-duration", "0", "--url", "http://127.0.0.1:9"},
		{"burst", "--max-duration", "100000h", "--url", "http://127.0.0.1:9"},
		{"schedule", "--rate", "1e-9/s", "--duration", "1000000h", "--url", "http://127.0.0.1:9"},
		{"schedule", "--phase", "a:200h@1/s", "--url", "http://127.0.0.1:9"},
		{"burst", "--max-in-flight", "1000000", "--url", "http://127.0.0.1:9"},
		{"burst", "--grace", "0", "--url", "http://127.0.0.1:9"},
		{"burst", "--retry-max-wait", "100h", "--url", "http://127.0.0.1:9"},
		{"characterize", "--max-duration", "0"},
		{"calibrate", "--probe-duration", "2h"},
		{"burst", "--timeout", "2h", "--url", "http://127.0.0.1:9"},
		{"calibrate", "--max-pause", "2h"},
		{"calibrate", "--pause", "3m"},
		{"nosuch"},
	}
	for _, args := range tests {
		code, stdout, stderr := runCLI(context.Background(), append(args, "--quiet")...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, stderr)
			continue
		}
		if strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 || !strings.HasPrefix(stderr, "ptuprobe: ") {
			t.Errorf("%v: stderr is not one line: %q", args, stderr)
		}
		if stdout != "" {
			t.Errorf("%v: wrote to stdout: %q", args, stdout)
		}
	}
}

// TestTargetUnreachableIsRecordedAndFails: a refused connection is
// recorded on every row, and a run whose every request got no answer
// exits 1 with one line saying so.
func TestTargetUnreachableIsRecordedAndFails(t *testing.T) {
	t.Parallel()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	out := filepath.Join(t.TempDir(), "results.csv")
	code, _, stderr := runCLI(context.Background(), "burst", "--url", "http://"+addr, "--burst-size", "3", "-o", out, "--quiet")
	if code != ExitFailure || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "all 3 requests failed, none by admission (no response ×3; errors: refused ×3)") {
		t.Fatalf("exit %d, want 1 and one line: %q", code, stderr)
	}
	for _, r := range readResults(t, out) {
		if r.Status != 0 || r.Error != results.ClassRefused {
			t.Fatalf("row %+v", r)
		}
	}
}

// TestEveryRequestFailedExits1: against a target that answers 404 to
// everything (a wrong path), burst and schedule exit 1 with one line, and
// 0 with --allow-failures; a run with one 429 among the failures measured
// admission and exits 0.
func TestEveryRequestFailedExits1(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/one-429" && n.Add(1) == 2 {
			w.WriteHeader(429)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"burst", "--url", srv.URL + "/v1/chat/completions", "--burst-size", "4"}, ExitFailure},
		{[]string{"schedule", "--url", srv.URL, "--rate", "50/s", "--duration", "100ms"}, ExitFailure},
		{[]string{"burst", "--url", srv.URL, "--burst-size", "4", "--allow-failures"}, 0},
		{[]string{"characterize", "--url", srv.URL, "--burst-size", "2", "--burst-waves", "1", "--rate", "20/s", "--duration", "100ms", "--out-dir", filepath.Join(t.TempDir(), "report")}, ExitFailure},
		{[]string{"burst", "--url", srv.URL + "/one-429", "--burst-size", "4", "--max-in-flight", "1"}, 0},
	}
	for _, c := range cases {
		args := append(c.args, "--quiet")
		if c.args[0] != "characterize" {
			args = append(args, "-o", filepath.Join(t.TempDir(), "results.csv"))
		}
		code, stdout, stderr := runCLI(context.Background(), args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d: %s", c.args, code, c.code, stderr)
			continue
		}
		if c.code == ExitFailure && (strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "requests failed, none by admission (404 ×")) {
			t.Errorf("%v: stderr %q, want one line naming the 404s", c.args, stderr)
		}
		if c.args[0] != "characterize" && !strings.Contains(stdout, "results: ") {
			t.Errorf("%v: no summary on stdout: %q", c.args, stdout)
		}
	}
}

// TestAbortOnFail: once more than half of the last abortWindow attempts
// failed, --abort-on-fail stops the plan, keeps every completed row, says
// why and exits 1.
func TestAbortOnFail(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if n.Add(1) <= 5 {
			io.WriteString(w, `{"usage":{"prompt_tokens":10,"completion_tokens":4}}`)
			return
		}
		w.WriteHeader(500)
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "results.csv")
	code, _, stderr := runCLI(context.Background(), "schedule", "--url", srv.URL, "--rate", "200/s", "--duration", "10s",
		"--max-in-flight", "1", "--abort-on-fail", "50%", "-o", out, "--quiet")
	if code != ExitFailure || !strings.Contains(stderr, "aborted: 15 of the last 20 completed attempts failed other than by a 429, more than --abort-on-fail 50%") {
		t.Fatalf("exit %d, want 1 and the reason: %q", code, stderr)
	}
	recs := readResults(t, out)
	if len(recs) < 20 || len(recs) > 100 {
		t.Fatalf("%d rows kept, want the 20 before the abort (of 2000 planned)", len(recs))
	}
	if !strings.Contains(stderr, fmt.Sprintf("%d completed requests kept in %s", len(recs), out)) {
		t.Errorf("stderr %q does not count the %d rows kept", stderr, len(recs))
	}
	for _, bad := range []string{"1.5", "100%", "x", "-1"} {
		code, _, stderr := runCLI(context.Background(), "burst", "--url", srv.URL, "--abort-on-fail", bad, "-o", out)
		if code != ExitUsage || !strings.Contains(stderr, "--abort-on-fail") {
			t.Errorf("--abort-on-fail %s: exit %d %q, want 2 naming the flag", bad, code, stderr)
		}
	}
}

// TestHelpHasExamples: every command the root registers, whatever it is,
// prints its help with examples and exits 0.
func TestHelpHasExamples(t *testing.T) {
	t.Parallel()
	root := NewRootCommand()
	seen := 0
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" || !c.Runnable() {
			continue
		}
		seen++
		code, stdout, _ := runCLI(context.Background(), c.Name(), "--help")
		if code != 0 || !strings.Contains(stdout, "Examples:") || !strings.Contains(stdout, "Usage:") {
			t.Errorf("%s --help: exit %d, usage or examples missing:\n%s", c.Name(), code, stdout)
		}
	}
	if seen < 7 {
		t.Fatalf("only %d commands registered", seen)
	}
}

// TestBadInputNamesTheFlag: a refused setting is reported by the flag the
// user typed, with the prefix of the command that has it, never by the Go
// field a package named it by.
func TestBadInputNamesTheFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	foreign := filepath.Join(dir, "events.csv")
	os.WriteFile(foreign, []byte("a,b\n1,2\n"), 0o644)
	soon := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"burst", "--burst-size", "0"}, "--burst-size must be at least 1"},
		{[]string{"characterize", "--burst-waves", "0", "--out-dir", dir}, "--burst-waves must be at least 1"},
		{[]string{"burst", "--burst-spread", "2s", "--burst-gap", "1s", "--burst-waves", "2"}, "--burst-spread (2s) is longer than --burst-gap (1s)"},
		{[]string{"schedule", "--rate", "1/s", "--arrival", "bursty"}, `--arrival "bursty": want constant, poisson or gamma:CV`},
		{[]string{"schedule", "--rate", "1/s", "--arrival", "gamma:0"}, `--arrival "gamma:0": the coefficient of variation of gamma:CV must be a number from 0.01 to 10`},
		{[]string{"burst", "--max-in-flight", "0"}, "--max-in-flight must be between 1 and 100000"},
		{[]string{"burst", "--max-attempts", "201"}, "--max-attempts must be from 1 to 200"},
		{[]string{"schedule", "--rate", "1/s", "--pace-window", "20ms"}, "--pace-window must be between 0 and 10ms"},
		{[]string{"burst", "--group", "night\u00a0run"}, "--group must be printable"},
		{[]string{"burst", "--sim-ptu", "0"}, "--sim-ptu 0"},
		{[]string{"serve", "--sim-ptu", "0"}, "--sim-ptu 0"},
		{[]string{"burst", "--url", "http://127.0.0.1:9", "--prompt-tokens", "0"}, "--prompt-tokens"},
		{[]string{"calibrate", "--factor", "1"}, "--factor must be above 1"},
		{[]string{"calibrate", "--max-rate", "1/s", "--min-rate", "2/s"}, "--max-rate must be greater than --min-rate"},
		{[]string{"analyze", foreign}, "name the column with --value-column"},
		{[]string{"analyze", "--columns", "p42", foreign}, "--columns: unknown column"},
		{[]string{"analyze", "--label", "x", foreign}, "--label: \"x\": want FROM=TO"},
		{[]string{"analyze", "--fail-if", "p99>", foreign}, "--fail-if: "},
		{[]string{"burst", "--shard", "4/4", "--start-at", soon}, `--shard "4/4": the index 4 must be between 0 and 3`},
		{[]string{"schedule", "--rate", "1/s", "--shard", "0/0", "--start-at", soon}, `--shard "0/0": the count 0 must be between 1 and`},
		{[]string{"characterize", "--shard", "x/y", "--out-dir", dir}, `--shard "x/y": want I/N`},
		{[]string{"burst", "--start-at", "2000-01-01T00:00:00Z"}, "--start-at 2000-01-01T00:00:00Z is 9"},
		{[]string{"burst", "--start-at", time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)}, "in the past (this machine's clock reads"},
		{[]string{"schedule", "--rate", "1/s", "--start-at", time.Now().Add(30 * time.Hour).UTC().Format(time.RFC3339)}, "ahead (this machine's clock reads"},
		{[]string{"burst", "--start-at", "2030-01-01T00:00:00Z"}, "days ahead"},
		// Past about 292 years the difference saturates: compare instants.
		{[]string{"burst", "--burst-size", "2", "--shard", "0/2", "--start-at", "2400-01-01T00:00:00Z"}, "--start-at 2400-01-01T00:00:00Z is more than 292 years ahead"},
		{[]string{"burst", "--start-at", "tomorrow"}, `--start-at "tomorrow" is not an RFC 3339 time`},
		{[]string{"burst", "--start-at", "2026-05-01 12:00:00"}, "is not an RFC 3339 time"},
		{[]string{"characterize", "--burst-wait-wave", "--start-at", soon, "--out-dir", dir}, "--burst-wait-wave paces each wave by this worker's own answers"},
		{[]string{"calibrate", "--shard", "0/4"}, "unknown flag: --shard"},
		// --max-requests bounds the plan, the same refusal on every worker.
		{[]string{"burst", "--burst-size", "40", "--max-requests", "30", "--shard", "1/4", "--start-at", soon}, "--max-requests is 30, but the plan has 40 requests"},
	}
	for _, tt := range tests {
		code, _, stderr := runCLI(context.Background(), append(tt.args, "--quiet")...)
		if tt.args[0] == "analyze" || tt.args[0] == "serve" {
			code, _, stderr = runCLI(context.Background(), tt.args...)
		}
		if code != ExitUsage || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line naming %q", tt.args, code, stderr, tt.want)
		}
		for _, field := range []string{"MaxInFlight", "Size ", "Waves", "PromptTokens", "ValueColumn", "Spread"} {
			if strings.Contains(stderr, field) {
				t.Errorf("%v: stderr names the Go field %q: %q", tt.args, field, stderr)
			}
		}
	}
}

// TestRetriesHonourTheAdvisedWait: with --max-attempts 3 a request refused
// twice is sent three times, each retry a row with the next attempt number,
// sent no sooner than the advised wait after the 429.
func TestRetriesHonourTheAdvisedWait(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen[string(b)]++
		n := seen[string(b)]
		mu.Unlock()
		if n <= 2 {
			w.Header().Set("retry-after-ms", "50")
			w.WriteHeader(429)
			return
		}
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "results.csv")
	code, stdout, stderr := runCLI(context.Background(), "burst", "--url", srv.URL, "--burst-size", "4",
		"--max-attempts", "3", "--retry-jitter", "0", "-o", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := readResults(t, out)
	if len(recs) != 12 || !strings.Contains(stdout, "retries: 8") {
		t.Fatalf("%d rows; stdout %q", len(recs), stdout)
	}
	last := map[int]results.Record{}
	for _, r := range recs {
		if prev, ok := last[r.Seq]; ok {
			if r.Attempt != prev.Attempt+1 {
				t.Fatalf("seq %d: attempt %d after %d", r.Seq, r.Attempt, prev.Attempt)
			}
			if r.SentMS < prev.SentMS+prev.LatencyMS+50 {
				t.Fatalf("seq %d attempt %d sent at %v, before the advised 50 ms after %v", r.Seq, r.Attempt, r.SentMS, prev.SentMS+prev.LatencyMS)
			}
		}
		last[r.Seq] = r
	}
	for seq, r := range last {
		if r.Attempt != 3 || r.Status != 200 {
			t.Fatalf("seq %d ended with attempt %d status %d", seq, r.Attempt, r.Status)
		}
	}
	if code, _, _ := runCLI(context.Background(), "burst", "--url", srv.URL, "--max-attempts", "0", "-o", out, "--quiet"); code != ExitUsage {
		t.Fatalf("--max-attempts 0: exit %d", code)
	}
}

// FuzzAbortOnFail: whatever --abort-on-fail is given, it is a share from
// 0 to below 1 or a one-line usage error naming the flag.
func FuzzAbortOnFail(f *testing.F) {
	for _, s := range []string{"0.5", "50%", " 10 % ", "0", "1", "100%", "-0", "NaN", "1e-9", "%", "0x1p-1", "99.99%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, given string) {
		ff := failureFlags{abort: given}
		err := ff.check()
		if err != nil {
			if !strings.Contains(err.Error(), "--abort-on-fail") || (strings.ContainsAny(err.Error(), "\n\r") && !strings.ContainsAny(given, "\n\r")) {
				t.Fatalf("%q: %v", given, err)
			}
			return
		}
		if given != "" && !(ff.share >= 0 && ff.share < 1) {
			t.Fatalf("%q accepted as the share %v", given, ff.share)
		}
	})
}
