package cmd

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
			"--policy", "none", "--policy", "patient=honor,attempts=4", "--load", "1.5x", "--duration", "5s", "--repeat", "2", "--clients", "4")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		for _, f := range []string{"policies.csv", "policies.md", "policy_frontier_1.5x.png", "policy_frontier_1.5x.svg", "report.html"} {
			if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
				t.Errorf("%s missing or empty", f)
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, "policies.csv"))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil || len(rows) != 3 || rows[0][0] != "policy" || rows[1][0] != "none" || rows[2][0] != "patient" {
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

// TestPoliciesOnANamedTarget: the same lab against a target on loopback,
// on the wall clock: a row per policy, and the method says so.
func TestPoliciesOnANamedTarget(t *testing.T) {
	t.Parallel()
	s, err := sim.New(sim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	dir := filepath.Join(t.TempDir(), "lab")
	code, _, stderr := runCLI(context.Background(), "policies", "--out-dir", dir, "--quiet",
		"--endpoint", srv.URL, "--deployment", sim.DefaultDeployment, "--api-key-env", "HOME",
		"--policy", "honor", "--policy", "pace", "--load", "4/s", "--duration", "1s", "--arrival", "constant", "--repeat", "1", "--clients", "2", "--pause", "0s", "--max-tokens", "20")
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
		{[]string{"--duration", "0s"}, "--duration"},
		{[]string{"--arrival", "bursty"}, "--arrival"},
		{[]string{"--sim-dialect", "openai"}, "--sim-dialect"},
		{[]string{"--sim-profile", "window", "--sim-window-limit", "0"}, "--sim-window-limit"},
		{[]string{"--capacity", "5"}, "--capacity"},
		{[]string{"--policy", "budget", "--endpoint", "https://x.example", "--deployment", "d", "--api-key-env", "HOME", "--load", "5/s"}, "--fallback-deployment"},
		{[]string{"--endpoint", "https://x.example", "--deployment", "d", "--api-key-env", "HOME"}, "--capacity"},
		{[]string{"--endpoint", "https://x.example", "--deployment", "d", "--api-key-env", "HOME", "--load", "50/s", "--duration", "10m"}, "--max-requests"},
	} {
		out := filepath.Join(dir, "lab")
		code, _, stderr := runCLI(context.Background(), append([]string{"policies", "--out-dir", out, "--quiet"}, tt.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %q", tt.args, code, stderr, tt.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s before refusing", tt.args, out)
		}
	}
}
