package cmd

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPoliciesOnSimulator runs two policies on a small plan and checks
// the table, the charts and the rows it leaves.
func TestPoliciesOnSimulator(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "lab")
	code, stdout, stderr := runCLI(context.Background(), "policies", "--out-dir", dir, "--quiet",
		"--policy", "none", "--policy", "patient=honor,attempts=4,budget=20s",
		"--burst-size", "20", "--burst-waves", "1", "--rate", "10/s", "--duration", "2s", "--sim-time-scale", "50")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"policies.csv", "policies.md", "policy_latency_ecdf.png", "policy_latency_ecdf.svg", "policy_tradeoff.png", "report.html", "results.csv"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty", f)
		}
	}
	f, _ := os.Open(filepath.Join(dir, "policies.csv"))
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 3 || rows[0][0] != "policy" || rows[1][0] != "none" || rows[2][0] != "patient" || rows[1][1] != "40" {
		t.Fatalf("policies.csv: %v %v", rows, err)
	}
	groups := map[string]int{}
	for _, r := range readResults(t, filepath.Join(dir, "results.csv")) {
		groups[r.Group]++
		if r.Group != r.Policy {
			t.Fatalf("a row of group %q carries policy %q", r.Group, r.Policy)
		}
	}
	if groups["none"] != 40 || groups["patient"] < 40 {
		t.Fatalf("rows per policy: %v", groups)
	}
	if !strings.Contains(stdout, "patient") || !strings.Contains(stdout, "policies.md") {
		t.Fatalf("stdout:\n%s", stdout)
	}
}

// TestPoliciesRefuseBadInputBeforeTraffic: one line, exit 2, no file.
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
		{[]string{"--policy", "honor", "--policy", "honor"}, "named twice"},
		{[]string{"--budget", "0s"}, "--budget"},
		{[]string{"--policy", "budget", "--endpoint", "https://x.example", "--deployment", "d", "--api-key-env", "HOME"}, "--fallback-deployment"},
		{[]string{"--repeat", "0"}, "--repeat"},
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
