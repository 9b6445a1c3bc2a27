package cmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/sim"
)

// smallRun is a burst of one wave on the embedded simulator, written to
// a results file: 5 requests, 3 refused, enough for a fit to test and
// cheap to replay (a fit replays every send at some 1,900 points: 0.4 s
// of CPU, 0.8 s with the 10 requests of before; fit's own tests fit
// more, these check the command).
func smallRun(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "results.csv")
	code, _, stderr := runCLI(context.Background(), "burst", "-q", "-o", out, "--burst-size", "5", "--burst-waves", "1", "--sim-ptu", "20", "--sim-ttft", "0", "--sim-tpot", "0")
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
// exit 2. The twin is the one fit of the package's tests (a fit replays
// the run at some 1,900 points): FewRefusalsRecommendsNothing labs on it.
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
	t.Run("FewRefusalsRecommendsNothing", func(t *testing.T) {
		t.Parallel()
		fewRefusalsRecommendNothing(t, stdout, twin)
	})
	foreign := filepath.Join(t.TempDir(), "events.csv")
	if err := os.WriteFile(foreign, []byte("source,retry_after_ms\na,40\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fit", foreign}, "not a ptuprobe results file: a replay needs each send's time (sent_ms); to fit published waits, give them with --events under --plan characterize"},
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
// policies; referee: TestSimProfileReferee), and refuses a file that is
// not a profile with exit 2.
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
		{[]string{"policies", "--quiet", "--out-dir", filepath.Join(dir, "lab"), "--policy", "none", "--load", "1x", "--duration", "1s", "--warmup", "0s", "--tail", "0s", "--repeat", "1", "--clients", "1"}, nil},
		// referee: TestSimProfileReferee, not in parallel.
	} {
		ctx := cmd.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		args := append(append([]string{}, cmd.args...), "--sim-profile", good)
		code, stdout, stderr := runCLI(ctx, args...)
		if code == ExitUsage || code == ExitFailure {
			t.Errorf("%s --sim-profile FILE: exit %d: %s", cmd.args[0], code, stderr)
		}
		if cmd.args[0] == "burst" && !strings.Contains(stdout+stderr, "--sim-profile twin.json: ptu") {
			t.Errorf("burst --dry-run does not name the profile:\n%s%s", stdout, stderr)
		}
		args = append(append([]string{}, cmd.args...), "--sim-profile", bad)
		code, _, stderr = runCLI(ctx, args...)
		if code != ExitUsage || !strings.Contains(stderr, "ptu -1") {
			t.Errorf("%s --sim-profile BAD: exit %d: %s", cmd.args[0], code, stderr)
		}
	}
}

// TestSimProfileReferee is TestSimProfileEverywhere for referee, which
// runs a command, so not in parallel (TestRefereeExitCodes says why).
func TestSimProfileReferee(t *testing.T) {
	c := sim.DefaultConfig()
	c.PTU = 90
	good := writeProfile(t, sim.Profile{Name: "twin", Config: c})
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"version":1,"settings":{"ptu":-1}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(context.Background(), "referee", "--sim-profile", good, "--out-dir", "", "--timeout", "5s", "--", "true")
	if code == ExitUsage || code == ExitFailure {
		t.Errorf("referee --sim-profile FILE: exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI(context.Background(), "referee", "--sim-profile", bad, "--", "true")
	if code != ExitUsage || !strings.Contains(stderr, "ptu -1") {
		t.Errorf("referee --sim-profile BAD: exit %d: %s", code, stderr)
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
// profile that fits its run well and nothing on one that fits poorly or
// insufficiently (issue 35: a fit of one event was good, and recommended
// from), saying why, and policies.md's method names the profile and its
// fit. The fit's text comes from a file: policies.md escapes it (issue
// 35: a line break in it started a heading, HTML passed through to the
// job summary).
func TestPoliciesRefusePoorFit(t *testing.T) {
	t.Parallel()
	hostile := "the reason\n# Owned <img src=x onerror=alert(1)> [link](http://x) |"
	for _, quality := range []string{sim.FitGood, sim.FitPoor, sim.FitInsufficient} {
		p := sim.Profile{Name: "twin-" + quality, Config: sim.DefaultConfig(), Fit: &sim.Fit{Quality: quality, Why: hostile, Threshold: 0.15,
			MinWaits: 67, Source: "replay", Model: sim.ProfilePTU, Groups: []sim.FitGroup{{Group: "burst-shaped", KS: 0.42, Tested: true}, {Group: "scheduled-shaped", KS: 0.5}}}}
		file := writeProfile(t, p)
		dir := filepath.Join(t.TempDir(), "lab")
		// A recommendation needs 3 repeats: the good fit's lab has them; a
		// lab on a poor or an insufficient fit says why it recommends
		// nothing whatever their number.
		repeat := map[bool]string{true: "3", false: "1"}[quality == sim.FitGood]
		code, stdout, stderr := runCLI(context.Background(), "policies", "--quiet", "--out-dir", dir, "--sim-profile", file,
			"--policy", "honor", "--policy", "patient=honor,attempts=4", "--load", "1.5x", "--duration", "1s", "--warmup", "0s", "--tail", "0s", "--repeat", repeat, "--clients", "2")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", quality, code, stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, "policies.md"))
		if err != nil {
			t.Fatal(err)
		}
		md := string(b)
		escaped := `the reason # Owned &lt;img src=x onerror=alert(1)&gt; \[link\](http://x) \|`
		refused := map[string]string{
			sim.FitPoor:         "Nothing to recommend: the simulator's profile twin-poor.json fits its recorded run poorly (" + escaped + "): nothing is recommended from it",
			sim.FitInsufficient: "Nothing to recommend: the simulator's profile twin-insufficient.json was fitted to too few refusals to be judged (insufficient) (" + escaped + "): nothing is recommended from it",
		}[quality]
		method := "Profile: twin-" + quality + ".json, fitted (ptu model, by replay) to a recorded run: the fit is " + quality + " (burst-shaped KS 0.42, scheduled-shaped KS 0.5, untested): " + escaped
		if refused != "" && !strings.Contains(md, refused) {
			t.Errorf("%s: policies.md lacks %q\n%s", quality, refused, md)
		}
		if !strings.Contains(md, method) {
			t.Errorf("%s: policies.md lacks %q\n%s", quality, method, md)
		}
		if strings.Contains(md, "\n# Owned") || strings.Contains(md, "<img") {
			t.Errorf("%s: the fit's text reaches policies.md unescaped:\n%s", quality, md)
		}
		if got := strings.Contains(stdout, "nothing is recommended from it"); got != (quality != sim.FitGood) {
			t.Errorf("%s: says nothing is recommended: %v:\n%s", quality, got, stdout)
		}
	}
}

// fewRefusalsRecommendNothing: a small burst's run (4 refusals,
// fewer than the 67 the KS threshold needs) fits as insufficient, never
// good (fitted is the fit's stdout, twin its profile), and policies
// recommends nothing from it, saying why.
func fewRefusalsRecommendNothing(t *testing.T, fitted, twin string) {
	if !strings.Contains(fitted, "quality: insufficient: the fitted groups hold ") {
		t.Fatalf("fit:\n%s", fitted)
	}
	lab := filepath.Join(t.TempDir(), "lab")
	code, stdout, stderr := runCLI(context.Background(), "policies", "--quiet", "--out-dir", lab, "--sim-profile", twin,
		"--policy", "honor", "--load", "1.5x", "--duration", "1s", "--warmup", "0s", "--tail", "0s", "--repeat", "3", "--clients", "2")
	md, _ := os.ReadFile(filepath.Join(lab, "policies.md"))
	if code != 0 || !strings.Contains(string(md), "Nothing to recommend: the simulator's profile twin.json was fitted to too few refusals to be judged (insufficient) (the fitted groups hold ") {
		t.Errorf("policies: exit %d: %s%s\n%s", code, stdout, stderr, md)
	}
}

// TestFitRefusesCellsPastBounds runs the real binary on results files
// whose cells pass the replay's bounds: one line, exit 2, in little
// memory (issue 35: prompt_tokens 10^9 ran out of memory, 2^63−1
// panicked, a 2xx latency_ms of 9.3·10^12 overflowed the latency model);
// and a fit past --max-work is refused before it replays.
func TestFitRefusesCellsPastBounds(t *testing.T) {
	t.Parallel()
	rows, err := os.ReadFile(smallRun(t))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(rows), "\n"), "\n")
	head := strings.Split(lines[0], ",")
	col := func(name string) int { return slices.Index(head, name) }
	ok := slices.IndexFunc(lines[1:], func(l string) bool { return strings.Split(l, ",")[col("status")] == "200" }) + 1
	for _, c := range []struct{ column, value, want string }{
		{"prompt_tokens", "1000000000", "prompt_tokens 1000000000: at most 1000000"},
		{"prompt_tokens", "9223372036854775807", "prompt_tokens 9223372036854775807: at most 1000000"},
		{"latency_ms", "9300000000000", "latency_ms 9.3e+12: an attempt lasts at most 3.6e+06 ms (1h0m0s)"},
	} {
		cells := strings.Split(lines[ok], ",")
		cells[col(c.column)] = c.value
		bad := slices.Clone(lines)
		bad[ok] = strings.Join(cells, ",")
		file := filepath.Join(t.TempDir(), "bad.csv")
		if err := os.WriteFile(file, []byte(strings.Join(bad, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := runMain(t, []string{"fit", "-q", "-o", filepath.Join(t.TempDir(), "twin.json"), file}, 0, nil)
		want := "bad.csv row " + strconv.Itoa(ok) + ": " + c.want
		if r.code != ExitUsage || !strings.Contains(r.stderr, want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 || r.rss > maxRSS {
			t.Errorf("%s %s: exit %d, %d MB, stderr %q; want exit 2 and one line with %q", c.column, c.value, r.code, r.rss>>20, r.stderr, want)
		}
	}
	code, _, stderr := runCLI(context.Background(), "fit", "-q", "-o", "", "--max-work", "1000", writeLines(t, lines))
	if code != ExitUsage || !strings.Contains(stderr, "--max-work 1,000: the results hold more than 1 sent attempts, the most it allows") {
		t.Errorf("--max-work 1000: exit %d: %s", code, stderr)
	}
}

func writeLines(t *testing.T, lines []string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "results.csv")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestFitWarnsOfDuplicates: a file given twice is warned of on stderr,
// even under -q, in one line (issue 35). That the fit then goes on is
// internal/fit's TestDuplicatesWarned; here --hold-out of a group the run
// lacks refuses it after the warning and before any replay, so the
// warning is seen without a second fit in this package's tests (issue 39).
func TestFitWarnsOfDuplicates(t *testing.T) {
	t.Parallel()
	run := smallRun(t)
	rows := len(testkit.ReadRecords(t, run)) // every row of the small run was sent
	code, _, stderr := runCLI(context.Background(), "fit", "-q", "-o", "", "--hold-out", "nope", run, run)
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != ExitUsage || len(lines) != 2 || !strings.HasPrefix(lines[0], fmt.Sprintf("warning: %d rows repeat a row already read", rows)) ||
		!strings.Contains(lines[1], `--hold-out "nope": no such group`) {
		t.Errorf("exit %d, stderr %q; want exit 2, the warning, then --hold-out's refusal", code, stderr)
	}
}

// TestSimProfileAmbiguous: --sim-profile NAME, where NAME is a built-in
// profile and a file in the working directory, is refused in one line
// (issue 35: the built-in silently won); ./NAME is the file; a command's
// default profile stays the built-in whatever the directory holds.
func TestSimProfileAmbiguous(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	c := sim.DefaultConfig()
	c.PTU = 90
	data, err := os.ReadFile(writeProfile(t, sim.Profile{Name: "mine", Config: c}))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{sim.ProfileDocuments, sim.ProfilePTU} {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI(context.Background(), "burst", "--dry-run", "--sim-profile", name)
		if code != ExitUsage || !strings.Contains(stderr, "names both a built-in profile and a file in the working directory: give ./"+name) ||
			strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("--sim-profile %s: exit %d: %s", name, code, stderr)
		}
		code, stdout, stderr := runCLI(context.Background(), "burst", "--dry-run", "--sim-profile", "./"+name)
		if code != 0 || !strings.Contains(stdout+stderr, "--sim-profile "+name+": ptu") {
			t.Errorf("--sim-profile ./%s: exit %d: %s%s", name, code, stdout, stderr)
		}
	}
	if code, _, stderr := runCLI(context.Background(), "characterize", "--dry-run"); code != 0 {
		t.Errorf("characterize's default profile beside a file named documents: exit %d: %s", code, stderr)
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
