package cmd

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ptuprobe/ptuprobe/internal/redisserver"
	"github.com/ptuprobe/ptuprobe/sim"
)

// TestPoliciesOnSimulator runs two policies on a small sweep and checks
// the table, the charts, and that a second run of the same flags writes
// the same policies.csv, byte for byte.
func TestPoliciesOnSimulator(t *testing.T) {
	t.Parallel()
	var csvs [][]byte
	for run := range 2 {
		dir := filepath.Join(t.TempDir(), "lab")
		code, stdout, stderr := runCLI(context.Background(), "policies", "--out-dir", dir, "--quiet",
			"--policy", "none", "--policy", "patient=honor,attempts=4", "--load", "1.5x", "--duration", "1s", "--warmup", "1s", "--tail", "1s", "--repeat", "2", "--clients", "4")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		for _, f := range []string{"policies.csv", "policies.md", "policy_frontier_1.5x.png", "policy_frontier_1.5x.svg", "report.html", "policies-grid.csv"} {
			if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
				t.Errorf("%s missing or empty", f)
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, "policies.csv"))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		// A line per policy and cap: both keep caps of their own, one
		// measurement written under the lab's cap, then the SDKs'.
		if err != nil || len(rows) != 5 || rows[0][0] != "policy" || rows[1][0] != "none" || rows[2][0] != "none" || rows[3][0] != "patient" || rows[4][0] != "patient" ||
			rows[0][len(rows[0])-1] != "sdk_cap" || rows[1][len(rows[1])-1] != "false" || rows[2][len(rows[2])-1] != "true" {
			t.Fatalf("policies.csv: %v %v", rows, err)
		}
		if !strings.Contains(stdout, "Recommendation") || !strings.Contains(stdout, "patient") || !strings.Contains(stdout, "policies.md") {
			t.Fatalf("stdout:\n%s", stdout)
		}
		csvs = append(csvs, b)
		_ = run
	}
	if !bytes.Equal(csvs[0], csvs[1]) {
		t.Fatalf("two runs of the same flags wrote different policies.csv:\n%s\n%s", csvs[0], csvs[1])
	}
}

// TestPoliciesArrivals: the lab takes waves and a recorded run's
// arrivals (here, a burst's results file), and its method names them.
func TestPoliciesArrivals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recorded := filepath.Join(dir, "results.csv")
	code, _, stderr := runCLI(context.Background(), "burst", "-o", recorded, "--quiet",
		"--burst-size", "10", "--burst-waves", "2", "--burst-gap", "50ms", "--sim-ttft", "0", "--sim-tpot", "0")
	if code != 0 {
		t.Fatalf("burst: exit %d: %s", code, stderr)
	}
	for _, tc := range []struct{ arrival, method string }{
		{"waves:8", "- Arrivals: waves of 8 requests at once"},
		{"replay:" + recorded, "- Arrivals: replayed from results.csv: its 20 first attempts"},
	} {
		out := filepath.Join(dir, "lab")
		code, _, stderr := runCLI(context.Background(), "policies", "--out-dir", out, "--quiet", "--arrival", tc.arrival,
			"--policy", "honor", "--load", "1.5x", "--duration", "1s", "--warmup", "0s", "--tail", "0s", "--repeat", "1", "--clients", "2")
		if code != 0 {
			t.Fatalf("--arrival %s: exit %d: %s", tc.arrival, code, stderr)
		}
		md, err := os.ReadFile(filepath.Join(out, "policies.md"))
		if err != nil || !strings.Contains(string(md), tc.method) {
			t.Errorf("--arrival %s: policies.md (%v) does not say %q:\n%s", tc.arrival, err, tc.method, md)
		}
	}
}

// TestPoliciesOnANamedTarget: the same lab against a target on loopback,
// on the wall clock: a row per policy, and the method says so. Phases of
// labPhase at 16/s: the four requests a policy of a second at 4/s sent.
func TestPoliciesOnANamedTarget(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.TTFT, cfg.TPOT = 0, 0 // the runs' length is their plan's, not their answers'
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	dir := filepath.Join(t.TempDir(), "lab")
	code, _, stderr := runCLI(context.Background(), "policies", "--out-dir", dir, "--quiet",
		"--endpoint", srv.URL, "--deployment", sim.DefaultDeployment, "--api-key-env", "HOME",
		"--policy", "honor", "--policy", "pace", "--load", "16/s", "--duration", labPhase.String(), "--warmup", "0s", "--tail", "0s", "--arrival", "constant", "--repeat", "1", "--clients", "2", "--pause", "0s", "--max-tokens", "20")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "policies.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(rows) != 3 || rows[1][0] != "honor" || rows[1][6] != "4" {
		t.Fatalf("policies.csv: %v %v", rows, err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "policies.md"))
	if !bytes.Contains(md, []byte("wall clock")) {
		t.Errorf("policies.md does not say the runs were on the wall clock")
	}
}

// TestPoliciesRefuseBadInputBeforeTraffic: one line naming the flag,
// exit 2, no file.
func TestPoliciesRefuseBadInputBeforeTraffic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty, headerOnly, other := filepath.Join(dir, "empty.csv"), filepath.Join(dir, "header.csv"), filepath.Join(dir, "other.csv")
	for f, text := range map[string]string{empty: "", headerOnly: "run_id,shape,group,seq,attempt,wave,intended_ms,sent_ms,ttfb_ms,latency_ms,status\n", other: "a,b,c\n1,2,3\n"} {
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy", "sometimes"}, "unknown policy"},
		{[]string{"--policy", "x=honor,attempts"}, "not key=value"},
		{[]string{"--policy", "x=nosuch"}, "unknown base"},
		{[]string{"--policy", "x=honor,budget=0s"}, "budget"},
		{[]string{"--policy", "x=honor,jitter=2"}, "jitter"},
		{[]string{"--policy", "X Y=honor"}, "policy name"},
		{[]string{"--policy", "x=honor,attempts=2,attempts=3"}, "given twice"},
		{[]string{"--policy", "none=honor"}, "built-in"},
		{[]string{"--policy", "honor", "--policy", "honor"}, "named twice"},
		{[]string{"--retry-budget", "0s"}, "--retry-budget"},
		{[]string{"--max-attempts", "0"}, "--max-attempts"},
		{[]string{"--max-attempts", "201"}, "--max-attempts"},
		{[]string{"--repeat", "0"}, "--repeat"},
		{[]string{"--repeat", "21"}, "--repeat"},
		{[]string{"--load", "0x"}, "--load"},
		{[]string{"--load", "fast"}, "--load"},
		{[]string{"--load", "1x,1x"}, "--load"},
		{[]string{"--load", "100x", "--duration", "1h"}, "--load"},
		{[]string{"--clients", "0"}, "--clients"},
		{[]string{"--clients", "many"}, "--clients"},
		// a fleet size given twice ran twice, its lines doubled in
		// policies.csv, the second without a grade (round 10's audit)
		{[]string{"--clients", "1,1", "--policy", "none", "--load", "1.5x", "--repeat", "1", "--duration", "1s", "--warmup", "0s", "--tail", "0s"}, "--clients"},
		{[]string{"--duration", "0s"}, "--duration"},
		{[]string{"--arrival", "bursty"}, "--arrival"},
		{[]string{"--grid", "everything"}, "--grid"},
		{[]string{"--sim-refusal-cost", "2"}, "--sim-refusal-cost"},
		{[]string{"--arrival", "waves:40@2s"}, "--arrival waves of 40 every 2s are 20 requests/s"},
		{[]string{"--arrival", "waves:0"}, "--arrival"},
		{[]string{"--arrival", "replay:" + filepath.Join(dir, "nosuch.csv")}, "--arrival"},
		{[]string{"--sim-dialect", "openai"}, "--sim-dialect"},
		{[]string{"--sim-profile", "window", "--sim-window-limit", "0"}, "--sim-window-limit"},
		{[]string{"--capacity", "5"}, "--capacity"},
		{[]string{"--policy", "budget", "--endpoint", "https://x.example", "--deployment", "d", "--api-key-env", "HOME", "--load", "5/s"}, "--fallback-deployment"},
		{[]string{"--endpoint", "https://x.example", "--deployment", "d", "--api-key-env", "HOME"}, "--capacity"},
		{[]string{"--endpoint", "https://x.example", "--deployment", "d", "--api-key-env", "HOME", "--load", "50/s", "--duration", "10m"}, "--max-requests"},
		{[]string{"--clients", "1024", "--load", "100x", "--repeat", "20"}, "--max-work the lab would send the simulator up to 534,651,480 attempts"},
		{[]string{"--max-work", "0"}, "--max-work"},
		{[]string{"--policy", "honor", "--coordinate", "redis://127.0.0.1:1/0"}, "--coordinate"},
		{[]string{"--policy", "slots", "--coordinate", "http://127.0.0.1:1"}, "--coordinate"},
		{[]string{"--policy", "slots", "--coordinate", "redis://:hunter2@127.0.0.1:1/0"}, "--coordinate"},
		{[]string{"--policy", "slots", "--coordinate", "redis://127.0.0.1:1/0", "--coordinate-password-env", ""}, "--coordinate-password-env"},
		// --from's file, refused by the fit, is named by its flag, never
		// by the fit's Go field (round 10's audit: "Inputs empty.csv is
		// not a ptuprobe results file").
		{[]string{"--from", empty}, "--from"},
		{[]string{"--from", headerOnly}, "--from"},
		{[]string{"--from", other}, "--from"},
		{[]string{"--from", empty, "--sim-profile", "documents"}, "--from"},
		{[]string{"--from", headerOnly, "--endpoint", "https://x.example", "--deployment", "d", "--api-key-env", "HOME", "--load", "5/s"}, "--from"},
	} {
		out := filepath.Join(dir, "lab")
		code, _, stderr := runCLI(context.Background(), append([]string{"policies", "--out-dir", out, "--quiet"}, tt.args...)...)
		// fit's advice names fit's flags (--events, --plan), which
		// policies has not (round 10's audit).
		if code != ExitUsage || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 || strings.Contains(stderr, "--events") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %q", tt.args, code, stderr, tt.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s before refusing", tt.args, out)
		}
		if strings.Contains(stderr, "Inputs") {
			t.Errorf("%v: a Go field's name in the error: %q", tt.args, stderr)
		}
		if strings.Contains(stderr, "hunter2") {
			t.Errorf("%v: the password is in the output: %q", tt.args, stderr)
		}
	}
}

// TestPoliciesCoordinated: with --coordinate the lab runs pace alone and
// coordinated, side by side on the wall clock, and the coordinated run's
// four clients share one pace in Redis: one key, where clients with
// state of their own would make four and the run alone none. A Redis
// that does not answer is refused before any traffic (a refused password
// goes through the same check as burst's, TestCoordinateThroughRedis).
func TestPoliciesCoordinated(t *testing.T) {
	t.Parallel()
	rs := redisserver.Start(t)
	url := "redis://" + rs.Addr + "/0"
	lab := []string{"policies", "--quiet", "--policy", "pace", "--clients", "4", "--load", "3x", "--duration", "1s",
		"--warmup", "0s", "--tail", "0s", "--retry-budget", "300ms", "--repeat", "1", "--max-tokens", "20", heard[0], heard[1]}

	dir := filepath.Join(t.TempDir(), "lab")
	code, stdout, stderr := runCLI(context.Background(), append(lab, "--out-dir", dir, "--coordinate", url, "--coordinate-password-env", "PTUPROBE_TEST_UNSET")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rc := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rc.Close()
	keys := rc.Keys(context.Background(), "*").Val()
	if len(keys) != 1 || !strings.HasPrefix(keys[0], "ptuprobe:{") || !strings.HasSuffix(keys[0], "}:pace") {
		t.Errorf("keys %q; want one pace, shared by the coordinated run's clients", keys)
	}
	b, err := os.ReadFile(filepath.Join(dir, "policies.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	col := slices.Index(rows[0], "coordinated")
	if err != nil || len(rows) != 3 || rows[1][0] != "pace" || rows[2][0] != "pace (coordinated)" || col < 0 || rows[2][col] != "true" {
		t.Fatalf("policies.csv: %v %v", rows, err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "policies.md"))
	for _, want := range []string{"## Coordinated against alone", "pace, 3x, 4 clients — ", "not byte-reproducible"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("policies.md lacks %q", want)
		}
	}
	if !strings.Contains(stdout, "Coordinated against alone") {
		t.Errorf("stdout:\n%s", stdout)
	}

	rs.Stop()
	dir = filepath.Join(t.TempDir(), "gone")
	code, _, stderr = runCLI(context.Background(), append(lab, "--out-dir", dir, "--coordinate", url, "--coordinate-password-env", "PTUPROBE_TEST_UNSET")...)
	if code == 0 || !strings.HasPrefix(stderr, "ptuprobe: --coordinate: the Redis does not answer") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("Redis gone: exit %d, stderr %q; want one line naming --coordinate", code, stderr)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("wrote %s with Redis gone", dir)
	}
}
