package policylab

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/policy"
	"github.com/ptuprobe/ptuprobe/sim"
)

// fromHeader is a results file's header (results' columns).
const fromHeader = "run_id,shape,group,seq,attempt,wave,intended_ms,sent_ms,ttfb_ms,latency_ms,status,error,retry_after_ms,retry_after,wait_ms,wait_source,spillover,ratelimit_remaining_requests,ratelimit_remaining_tokens,utilization_pct,prompt_tokens,cached_tokens,completion_tokens,max_tokens,policy,decision,fallback,dialect,reset_requests_ms,reset_tokens_ms,limit_requests,limit_tokens,worker,prompt_tokens_sent,ttft_ms,itl_p50_ms,itl_max_ms,tpot_ms"

// TestFromFitsTheTwinAndReplaysTheRun: --from fits the twin to the run
// (its fit, here poor: 3 refusals a second apart no model matches
// second by second; named as the twin of the file), makes the run's first attempts the lab's arrivals and its mean
// prompt the lab's; the lab then recommends nothing from it.
func TestFromFitsTheTwinAndReplaysTheRun(t *testing.T) {
	t.Parallel()
	if !*long {
		t.Skip("a whole fit: run with -long (.ci/run's long stage does)")
	}
	var b strings.Builder
	b.WriteString(fromHeader + "\n")
	for i := range 12 {
		status, wait, completion := 200, "", "60"
		if i%4 == 3 {
			status, wait, completion = 429, "900", ""
		}
		fmt.Fprintf(&b, "r1,scheduled,scheduled-shaped,%d,1,,%d,%d,5,%d,%d,,%s,1,%s,retry-after-ms,0,,,,%d,,%s,100,,,0,azure,,,,,,%d,,,,\n",
			i, 250*i, 250*i, 200+i, status, wait, wait, 1500+100*(i%2), completion, 1500+100*(i%2))
	}
	file := filepath.Join(t.TempDir(), "results.csv")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	l := Lab{Sim: sim.DefaultConfig(), PromptTokens: 1000, MaxTokens: 100}
	l.Sim.Seed = 42
	r, err := l.FitFrom(t.Context(), From{File: file, Arrival: true, Prompt: true})
	if err == nil {
		err = fmt.Errorf("no error") // Validate's, of an empty lab: its loads and policies are the command's
	}
	if !strings.Contains(err.Error(), "Loads") && !strings.Contains(err.Error(), "Policies") {
		t.Fatalf("FitFrom: %v", err)
	}
	if r.Profile.Fit == nil || r.Profile.Fit.Recommends() {
		t.Fatalf("fit %+v", r.Profile.Fit)
	}
	if l.Sim.Fit != r.Profile.Fit || l.Sim.ProfileSource != "twin of results.csv" || l.Sim.Fit.Recommends() {
		t.Errorf("lab's simulator: source %q fit %+v", l.Sim.ProfileSource, l.Sim.Fit)
	}
	if l.Sim.Seed != 42 || l.Sim.PTU != r.Profile.Config.PTU {
		t.Errorf("seed %d (want the run's 42), PTU %v (want the twin's %v)", l.Sim.Seed, l.Sim.PTU, r.Profile.Config.PTU)
	}
	if l.Arrival.Kind != arrivalReplay || len(l.Arrival.Replay) != 12 || l.Arrival.Replay[1] != 250*time.Millisecond {
		t.Errorf("arrival %+v", l.Arrival)
	}
	if l.PromptTokens != 1550 || l.MaxTokens != 100 || len(l.sizes) != 12 || l.sizes[0] != (requestSize{1500, 100}) || l.sizes[1] != (requestSize{1600, 100}) {
		t.Errorf("prompt %d, max_tokens %d (want the run's means 1550 and 100), sizes %v", l.PromptTokens, l.MaxTokens, l.sizes)
	}
}

// resultsFile writes a results file of 12 first attempts 250 ms apart,
// request i of prompt and max_tokens size(i), every fourth refused.
func resultsFile(t *testing.T, size func(i int) (prompt, maxTokens int)) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(fromHeader + "\n")
	for i := range 12 {
		p, m := size(i)
		status, wait, completion := 200, "", "60"
		if i%4 == 3 {
			status, wait, completion = 429, "900", ""
		}
		fmt.Fprintf(&b, "r1,scheduled,scheduled-shaped,%d,1,,%d,%d,5,%d,%d,,%s,1,%s,retry-after-ms,0,,,,%d,,%s,%d,,,0,azure,,,,,,%d,,,,\n",
			i, 250*i, 250*i, 200+i, status, wait, wait, p, completion, m, p)
	}
	file := filepath.Join(t.TempDir(), "results.csv")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestFromReplaysEachRequestsSize: two runs with the same arrivals and
// the same mean prompt and max_tokens, one every request alike, one a
// mix of small and large, replay differently: each request keeps its
// own size, not the run's mean (before, both replayed 1,550 tokens and
// were the same run).
func TestFromReplaysEachRequestsSize(t *testing.T) {
	t.Parallel()
	alike := resultsFile(t, func(int) (int, int) { return 1550, 100 })
	mixed := resultsFile(t, func(i int) (int, int) {
		if i%2 == 0 {
			return 200, 20
		}
		return 2900, 180
	})
	var runs [2]runOutcome
	for k, file := range []string{alike, mixed} {
		// The traffic FitFrom replays, without the fit (which
		// TestFromFitsTheTwinAndReplaysTheRun runs, under -long).
		l := Lab{Sim: sim.DefaultConfig(), PromptTokens: 1000, MaxTokens: 100}
		if err := l.replayFrom(t.Context(), From{File: file, Arrival: true, Prompt: true, MaxTokens: true}); err != nil {
			t.Fatalf("replayFrom: %v", err)
		}
		if l.PromptTokens != 1550 || l.MaxTokens != 100 {
			t.Fatalf("run %d: means %d and %d, want 1550 and 100", k, l.PromptTokens, l.MaxTokens)
		}
		if l.Arrival.Kind != arrivalReplay || len(l.Arrival.Replay) != 12 || l.Arrival.Replay[1] != 250*time.Millisecond {
			t.Errorf("run %d: arrival %+v", k, l.Arrival)
		}
		// The same simulator for both: only the sizes differ.
		v := virtualRun{Spec: mustSpec(t, "none"), Sim: sim.DefaultConfig(), Rate: 4, Duration: 20 * time.Second, Arrival: l.Arrival, Clients: 4,
			Seed: 1, Budget: 30 * time.Second, PromptTokens: l.PromptTokens, MaxTokens: l.MaxTokens, sizes: l.sizes}
		out, err := v.run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		runs[k] = out
	}
	if len(runs[0].SuccessE2E) == 0 || slices.Equal(runs[0].SuccessE2E, runs[1].SuccessE2E) {
		t.Errorf("the two size mixes replayed alike: %d and %d successes, latencies equal", len(runs[0].SuccessE2E), len(runs[1].SuccessE2E))
	}
}

// mustSpec is the built-in name under the lab's default fair caps.
func mustSpec(t *testing.T, name string) policy.Spec {
	t.Helper()
	s, err := policy.Parse(name)
	if err != nil {
		t.Fatal(err)
	}
	return s.Fair(policy.DefaultBudget, policy.DefaultMaxAttempts)
}

// TestFromTwinIsTheGridsModel: the twin fitted to the user's run is the
// model given, so the grid varies the refusal cost, the arrivals and the
// budget around it and never swaps it for a built-in model (issue 38:
// "the model (the user's twin when given; else ptu and documents)").
// Before, --from ran ptu and documents beside the twin: two of its nine
// conditions.
func TestFromTwinIsTheGridsModel(t *testing.T) {
	t.Parallel()
	l := Lab{Sim: sim.DefaultConfig(), Budget: policy.DefaultBudget, SLO: DefaultSLO, Arrival: Arrival{Kind: arrivalReplay}}
	names := func() []string {
		var out []string
		for _, c := range l.conditions() {
			out = append(out, c.name)
		}
		return out
	}
	if got := names(); !slices.Contains(got, "model documents") {
		t.Fatalf("the lab on the default simulator: conditions %q, want the built-in models among them", got)
	}
	twin, _, err := sim.OpenBuiltin("documents") // a fitted profile, standing in for a twin
	if err != nil {
		t.Fatal(err)
	}
	l.takeTwin(twin, "results.csv")
	got := names()
	want := []string{"refusal cost 1%", "refusal cost 5%", "arrivals poisson", "arrivals gamma:2", "arrivals waves", "budget 10 s (the SLO)"}
	if !slices.Equal(got, want) {
		t.Errorf("the lab on the twin: conditions %q, want %q", got, want)
	}
	if l.Sim.ProfileSource != "twin of results.csv" || l.Sim.Fit != twin.Fit || l.Sim.PTU != twin.Config.PTU {
		t.Errorf("the lab's simulator: source %q, fit %v, PTU %v", l.Sim.ProfileSource, l.Sim.Fit, l.Sim.PTU)
	}
}
