package fit

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/charplan"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/schedule"
	"github.com/ptuprobe/ptuprobe/sim"
)

// characterize runs the main job's plans against an embedded simulator
// of cfg, in a synctest bubble on an in-memory network, and returns the
// results file: what `ptuprobe characterize` would write of that target.
func characterize(t *testing.T, cfg sim.Config) string {
	t.Helper()
	return runPlans(t, campaign.Target{Sim: cfg, InMemory: true, Spec: defaultSpec()})
}

func defaultSpec() client.Spec {
	return client.Spec{PromptTokens: client.DefaultPromptTokens, MaxTokens: client.DefaultMaxTokens, Timeout: 30 * time.Second}
}

// hiddenRun is characterize(t, hidden()), run once for the package's
// tests (the same seed gives the same file): each test gets its own copy.
func hiddenRun(t *testing.T) string {
	t.Helper()
	hiddenOnce.Do(func() {
		hiddenBytes, hiddenErr = os.ReadFile(characterize(t, hidden()))
	})
	if hiddenErr != nil {
		t.Fatal(hiddenErr)
	}
	out := filepath.Join(t.TempDir(), "results.csv")
	if err := os.WriteFile(out, hiddenBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

var (
	hiddenOnce  sync.Once
	hiddenBytes []byte
	hiddenErr   error
)

// runPlans runs the main job's plans against target and returns the
// results file.
func runPlans(t *testing.T, target campaign.Target) string {
	t.Helper()
	return runBurst(t, target, charplan.Burst())
}

// runBurst is runPlans with the burst plan bc in place of the default's.
func runBurst(t *testing.T, target campaign.Target, bc burst.Config) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "results.csv")
	synctest.Test(t, func(t *testing.T) {
		b, err := campaign.BurstPlan(bc, false)
		if err != nil {
			t.Fatal(err)
		}
		s, err := campaign.SchedulePlan(schedule.Config{Phases: charplan.Phases()})
		if err != nil {
			t.Fatal(err)
		}
		job := campaign.Job{
			Plans: []campaign.Plan{b, s}, Output: out, Replace: true, Target: target,
			Options: campaign.Options{MaxInFlight: 512, MaxRequests: 20_000, Wait: sleep.Until},
		}
		if _, err := campaign.Run(t.Context(), job); err != nil {
			t.Fatal(err)
		}
	})
	return out
}

// twinLong asks for the tests that run whole fits (seconds of CPU
// each): .ci/run runs them in its long stage (go test ./internal/fit
// -twin), and `go test ./...` tests the fit's units.
var twinLong = flag.Bool("twin", false, "run the fit's long tests: whole fits of hidden targets")

// long skips t unless -twin is given.
func long(t *testing.T, what string) {
	t.Helper()
	if !*twinLong {
		t.Skip(what + ": run with -twin (.ci/run does)")
	}
}

// quick is a search budget for tests that need a fit, not the best one.
var quick = budget{global: 12, starts: 1, simplex: 30, passes: 1}

// fixedPoint is a search that stays at its start (the defaults), but
// for the first simplex (no ranges' scan): the tests of what a fit does
// around its search (the files read, the groups held out, the warnings)
// run it, not a search: some 25 replays.
var fixedPoint = budget{starts: 1, noScan: true}

// tiny is a small search budget, for the tests of what a fit refuses
// before it replays (its estimate of the work).
var tiny = budget{global: 3, starts: 1, simplex: 6, passes: 1}

// fitFiles fits the results files with the defaults, holding out holdOut,
// on budget b (zero: the default).
func fitFiles(t *testing.T, b budget, holdOut []string, files ...string) Result {
	t.Helper()
	return fitModels(t, b, nil, holdOut, files...)
}

// fitModels is fitFiles fitting only models (nil: every model).
func fitModels(t *testing.T, b budget, models, holdOut []string, files ...string) Result {
	t.Helper()
	return fitBudgets(t, b, budget{}, models, holdOut, files...)
}

// fitBudgets is fitModels with the models after the first searched on
// others (zero: b).
func fitBudgets(t *testing.T, b, others budget, models, holdOut []string, files ...string) Result {
	t.Helper()
	var inputs []input
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { fh.Close() })
		inputs = append(inputs, input{Name: filepath.Base(f), R: fh})
	}
	r, err := Run(context.Background(), Job{inputs: inputs, HoldOut: holdOut, Threshold: DefaultThreshold, MinAgreement: DefaultMinAgreement, MaxWork: DefaultMaxWork,
		PromptTokens: client.DefaultPromptTokens, MaxTokens: client.DefaultMaxTokens, budget: b, others: others, models: models})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// overall is the analysis of a results file: its Overall row and groups.
func analysis(t *testing.T, file string) *analyze.Analysis {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tally := analyze.NewTally(false)
	if err := tally.Read(context.Background(), f, analyze.Input{Name: file, Ordinal: 1}, analyze.ForeignColumns{}); err != nil {
		t.Fatal(err)
	}
	a, err := tally.Analysis(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
