package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/sim"
)

// smallRun is a burst of two waves on the embedded simulator (half a
// second of wall time), written to a results file.
func smallRun(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "results.csv")
	code, _, stderr := runCLI(context.Background(), "burst", "-q", "-o", out, "--burst-size", "25", "--burst-waves", "2", "--burst-gap", "300ms", "--sim-ptu", "60")
	if code != 0 {
		t.Fatalf("burst: exit %d: %s", code, stderr)
	}
	return out
}

// writeProfile writes p to a file in a temporary directory.
func writeProfile(t *testing.T, p sim.Profile) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), p.Name+".json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := sim.WriteProfile(f, p); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFitCommand fits a recorded run and writes the twin, printing the
// recorded and twin tables and the verdict; bad input is one line and
// exit 2.
func TestFitCommand(t *testing.T) {
	t.Parallel()
	run := smallRun(t)
	twin := filepath.Join(t.TempDir(), "twin.json")
	code, stdout, stderr := runCLI(context.Background(), "fit", "-q", run, "-o", twin)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"| Burst-shaped source, recorded |", "| Burst-shaped source, twin |", "quality: ", "wrote " + twin} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	p, err := sim.OpenProfile(twin)
	if err != nil || p.Fit == nil || p.Config.ProfileSource != "twin.json" {
		t.Fatalf("twin: %+v %v", p.Fit, err)
	}
	foreign := filepath.Join(t.TempDir(), "events.csv")
	if err := os.WriteFile(foreign, []byte("source,retry_after_ms\na,40\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fit", foreign}, "not a ptuprobe results file"},
		{[]string{"fit", run, "--hold-out", "nope"}, `--hold-out "nope": no such group`},
		{[]string{"fit", run, "--threshold", "0"}, "--threshold 0"},
		{[]string{"fit"}, "the results files are missing"},
		{[]string{"fit", "--plan", "characterize"}, "--events are needed"},
		{[]string{"fit", filepath.Join(t.TempDir(), "none.csv")}, "no such file"},
	} {
		code, _, stderr := runCLI(context.Background(), append(c.args, "-q", "-o", "")...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, code, stderr, c.want)
		}
	}
}

// TestSimProfileEverywhere: every command that runs the simulator takes
// --sim-profile FILE (serve, burst, schedule, characterize, calibrate,
// policies, referee), and refuses a file that is not a profile with exit 2.
func TestSimProfileEverywhere(t *testing.T) {
	t.Parallel()
	c := sim.DefaultConfig()
	c.PTU = 90
	good := writeProfile(t, sim.Profile{Name: "twin", Config: c})
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"version":1,"settings":{"ptu":-1}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, cmd := range []struct {
		args []string
		ctx  context.Context
	}{
		{[]string{"serve", "--addr", "127.0.0.1:0"}, canceled},
		{[]string{"burst", "--dry-run"}, nil},
		{[]string{"schedule", "--dry-run", "--rate", "2", "--duration", "1s"}, nil},
		{[]string{"characterize", "--dry-run"}, nil},
		{[]string{"calibrate", "--dry-run"}, nil},
		{[]string{"policies", "--quiet", "--out-dir", filepath.Join(dir, "lab"), "--policy", "none", "--load", "1x", "--duration", "1s", "--repeat", "1", "--clients", "1"}, nil},
		{[]string{"referee", "--out-dir", "", "--timeout", "5s", "--"}, nil},
	} {
		ctx := cmd.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		args := append([]string{}, cmd.args...)
		if cmd.args[0] == "referee" {
			args = append([]string{"referee", "--sim-profile", good}, append(cmd.args[1:], "true")...)
		} else {
			args = append(args, "--sim-profile", good)
		}
		code, stdout, stderr := runCLI(ctx, args...)
		if code == ExitUsage || code == ExitFailure {
			t.Errorf("%s --sim-profile FILE: exit %d: %s", cmd.args[0], code, stderr)
		}
		if cmd.args[0] == "burst" && !strings.Contains(stdout+stderr, "--sim-profile twin.json: ptu") {
			t.Errorf("burst --dry-run does not name the profile:\n%s%s", stdout, stderr)
		}
		if cmd.args[0] == "referee" {
			args = []string{"referee", "--sim-profile", bad, "--", "true"}
		} else {
			args = append(append([]string{}, cmd.args...), "--sim-profile", bad)
		}
		code, _, stderr = runCLI(ctx, args...)
		if code != ExitUsage || !strings.Contains(stderr, "ptu -1") {
			t.Errorf("%s --sim-profile BAD: exit %d: %s", cmd.args[0], code, stderr)
		}
	}
}

// TestSimFlagsOverrideProfile: a --sim-* flag beside a profile overrides
// its setting, wherever it stands on the line; the rest is the profile's.
func TestSimFlagsOverrideProfile(t *testing.T) {
	t.Parallel()
	c := sim.DefaultConfig()
	c.PTU, c.BurstPct = 90, 321
	file := writeProfile(t, sim.Profile{Name: "twin", Config: c})
	for _, line := range [][]string{{"--sim-ptu", "5", "--sim-profile", file}, {"--sim-profile", file, "--sim-ptu", "5"}} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		cfg := sim.DefaultConfig()
		p := addSimFlags(fs, &cfg, "sim-")
		if err := fs.Parse(line); err != nil {
			t.Fatal(err)
		}
		if err := p.resolve(); err != nil {
			t.Fatal(err)
		}
		if cfg.PTU != 5 || cfg.BurstPct != 321 || cfg.ProfileSource != "twin.json" {
			t.Errorf("%v: ptu %v burst %v source %q", line, cfg.PTU, cfg.BurstPct, cfg.ProfileSource)
		}
	}
}

// TestPoliciesRefusePoorFit: the same small lab recommends a policy on a
// profile that fits its run well and nothing on one that fits poorly,
// saying why, and policies.md's method names the profile and its fit.
func TestPoliciesRefusePoorFit(t *testing.T) {
	t.Parallel()
	for _, quality := range []string{sim.FitGood, sim.FitPoor} {
		p := sim.Profile{Name: "twin-" + quality, Config: sim.DefaultConfig(), Fit: &sim.Fit{Quality: quality, Why: "the reason", Threshold: 0.15,
			Source: "replay", Model: sim.ProfilePTU, Groups: []sim.FitGroup{{Group: "burst-shaped", KS: 0.42}}}}
		file := writeProfile(t, p)
		dir := filepath.Join(t.TempDir(), "lab")
		code, stdout, stderr := runCLI(context.Background(), "policies", "--quiet", "--out-dir", dir, "--sim-profile", file,
			"--policy", "honor", "--policy", "patient=honor,attempts=4", "--load", "1.5x", "--duration", "2s", "--repeat", "3", "--clients", "2")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", quality, code, stderr)
		}
		md, err := os.ReadFile(filepath.Join(dir, "policies.md"))
		if err != nil {
			t.Fatal(err)
		}
		refused := "the simulator's profile twin-poor.json fits its recorded run poorly (the reason): nothing is recommended from it"
		method := "Profile: twin-" + quality + ".json, fitted (ptu model, by replay) to a recorded run: the fit is " + quality + " (burst-shaped KS 0.42)"
		if got := strings.Contains(string(md), refused); got != (quality == sim.FitPoor) {
			t.Errorf("%s: policies.md says %q: %v\n%s", quality, refused, got, md)
		}
		if !strings.Contains(string(md), method) {
			t.Errorf("%s: policies.md lacks %q", quality, method)
		}
		if quality == sim.FitGood && !strings.Contains(stdout, "Recommendation") {
			t.Errorf("good fit: no recommendation:\n%s", stdout)
		}
	}
}

// TestProfileKeysAreFlagNames: a profile file's settings are named by
// the --sim-* flags without their prefix, and every flag of a
// deployment's behaviour is one (a new --sim-* flag needs its row in
// sim/profile.go's table, or a reason here why a profile never holds it).
func TestProfileKeysAreFlagNames(t *testing.T) {
	t.Parallel()
	keys := sim.ProfileKeys()
	for key, field := range keys {
		if simFlags[field] != key {
			t.Errorf("profile key %q sets %s, whose flag is --sim-%s", key, field, simFlags[field])
		}
	}
	// The run's settings, not the deployment's: a profile never holds them.
	// Tokens is the client's vocabulary, which a twin takes from the run.
	run := map[string]bool{"Deployment": true, "TimeScale": true, "Seed": true, "RequireKey": true, "WitnessBudget": true, "MaxKeys": true, "Tokens": true}
	for field, flag := range simFlags {
		if _, ok := keys[flag]; !ok && !run[field] {
			t.Errorf("--sim-%s (%s) is no key of a profile file", flag, field)
		}
	}
}
