package cmd

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/sim"
)

// arrivalLog is the embedded simulator served on loopback, noting when
// each request arrives.
type arrivalLog struct {
	mu sync.Mutex
	at []time.Time
	h  http.Handler
}

func (a *arrivalLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	a.mu.Lock()
	a.at = append(a.at, now)
	a.mu.Unlock()
	a.h.ServeHTTP(w, r)
}

func (a *arrivalLog) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.at)
}

func simOnLoopback(t *testing.T) (*httptest.Server, *arrivalLog, string) {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.TTFT, cfg.TPOT = 0, 0
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	log := &arrivalLog{h: s}
	srv := httptest.NewServer(log)
	t.Cleanup(srv.Close)
	return srv, log, cfg.Deployment
}

// planRow is what a plan fixes for an arrival, whoever sends it.
type planRow struct {
	shape      string
	seq, wave  int
	intendedMS float64
}

func planRows(recs []results.Record) []planRow {
	var out []planRow
	for _, r := range recs {
		if r.Attempt == 1 {
			out = append(out, planRow{r.Shape, r.Seq, r.Wave, r.IntendedMS})
		}
	}
	slices.SortFunc(out, func(a, b planRow) int {
		return cmp.Or(strings.Compare(a.shape, b.shape), cmp.Compare(a.seq, b.seq))
	})
	return out
}

// TestFleetOfFourSendsOnePlan runs four ptuprobe workers at once, each
// `characterize --shard I/4 --start-at T` with the same plan (a burst of
// three waves of 12, then a seeded Poisson schedule), against one
// simulator on loopback. Their rows merged are, arrival by arrival, the
// plan one unsharded run sends (shape, seq, wave, intended_ms); each
// worker sent exactly its seqs ≡ I mod 4, recorded as worker I/4; and
// analyze over the four files gives the fleet's table, split by worker
// with --group-by worker. That each wave leaves every worker at its
// instant on the common clock is dispatch's TestShardsSendThePlanOnce,
// on a fake clock; here the spread is logged, not judged (it once was,
// against a bound in ms that a loaded machine missed). The workers run
// in this process: what a process adds (its signal handling, its own
// clock reading of --start-at) is TestStartAtWaitsAndCtrlCLeavesAValidFile's.
func TestFleetOfFourSendsOnePlan(t *testing.T) {
	t.Parallel()
	const workers = 4
	srv, arrivals, deployment := simOnLoopback(t)
	wsrv, _, _ := simOnLoopback(t)
	dir := t.TempDir()
	plan := []string{"characterize", "--endpoint", srv.URL, "--deployment", deployment, "--api-key-env", testKeyEnv,
		"--burst-size", "12", "--burst-waves", "3", "--burst-gap", fmt.Sprint(fleetGap),
		"--rate", "80/s", "--duration", "300ms", "--arrival", "poisson", "--seed", "7", "--quiet"}
	// A start ahead, so that each worker waits for it; a worker that began
	// more than campaign.StartTolerance (1 s) past it would be refused.
	start := time.Now().Add(200 * time.Millisecond)
	type outcome struct {
		code   int
		stderr string
	}
	done := make([]chan outcome, workers+1) // the workers, then the unsharded run
	for i := range done {
		done[i] = make(chan outcome, 1)
		args := append(slices.Clone(plan), "--out-dir", filepath.Join(dir, fmt.Sprint("worker-", i)))
		if i == workers {
			args[2] = wsrv.URL
			args[len(args)-1] = filepath.Join(dir, "whole")
		} else {
			args = append(args, "--shard", fmt.Sprintf("%d/%d", i, workers), "--start-at", start.UTC().Format(time.RFC3339Nano))
		}
		go func() {
			code, _, stderr := runCLI(context.Background(), args...)
			done[i] <- outcome{code, stderr}
		}()
	}
	for i, d := range done {
		if o := <-d; o.code != 0 {
			t.Fatalf("run %d (the unsharded one is %d): exit %d: %s", i, workers, o.code, o.stderr)
		}
	}

	var merged []results.Record
	var files []string
	for i := range workers {
		path := filepath.Join(dir, fmt.Sprint("worker-", i), "results.csv")
		files = append(files, path)
		recs := readResults(t, path)
		for _, r := range recs {
			if r.Seq%workers != i || r.Worker != fmt.Sprintf("%d/%d", i, workers) {
				t.Fatalf("worker %d wrote seq %d as worker %q", i, r.Seq, r.Worker)
			}
		}
		merged = append(merged, recs...)
	}
	wholeRecs := readResults(t, filepath.Join(dir, "whole", "results.csv"))
	got, want := planRows(merged), planRows(wholeRecs)
	if !slices.Equal(got, want) {
		t.Fatalf("the four workers sent %d arrivals, the unsharded plan %d; first difference at %d", len(got), len(want), firstDiff(got, want))
	}
	burstRows, scheduled := 0, 0
	for _, r := range want {
		if r.shape == results.ShapeBurst {
			burstRows++
		} else {
			scheduled++
		}
	}
	if burstRows != 36 || scheduled < 20 {
		t.Fatalf("the plan: %d burst and %d scheduled arrivals", burstRows, scheduled)
	}
	logWaveSpread(t, merged, arrivals, start)

	// The fleet's table from the four files, and one group per worker.
	code, stdout, stderr := runCLI(context.Background(), append([]string{"analyze", "--out-dir", filepath.Join(dir, "fleet"), "--min-group", "1"}, files...)...)
	if code != 0 || !strings.Contains(stdout, "Burst-shaped source") || !strings.Contains(stdout, "Scheduled-shaped source") {
		t.Fatalf("analyze: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(context.Background(), append([]string{"analyze", "--group-by", "worker", "--out-dir", filepath.Join(dir, "by-worker"), "--min-group", "1"}, files...)...)
	if code != 0 {
		t.Fatalf("analyze --group-by worker: exit %d: %s", code, stderr)
	}
	for i := range workers {
		if !strings.Contains(stdout, fmt.Sprintf("worker %d/%d", i, workers)) {
			t.Errorf("analyze --group-by worker has no group for worker %d:\n%s", i, stdout)
		}
	}
}

// fleetGap is the fleet test's burst gap: waves that far apart.
const fleetGap = 100 * time.Millisecond

// logWaveSpread logs how far apart each burst wave's sends were across
// the workers, in sent_ms on the common clock, and when they arrived at
// the target: on the idle 2-core machine 1–6 ms, under `go test -race
// ./...` up to about 40 ms, at a load of 13 more.
func logWaveSpread(t *testing.T, merged []results.Record, arrivals *arrivalLog, start time.Time) {
	t.Helper()
	for w := range 3 {
		lo, hi := 1e18, -1.0
		for _, r := range merged {
			if r.Shape == results.ShapeBurst && r.Wave == w && r.Attempt == 1 {
				lo, hi = min(lo, r.SentMS), max(hi, r.SentMS)
			}
		}
		due := start.Add(time.Duration(w) * fleetGap)
		var first, last time.Duration = time.Hour, -time.Hour
		arrivals.mu.Lock()
		for _, at := range arrivals.at {
			if d := at.Sub(due); d > -50*time.Millisecond && d < fleetGap-50*time.Millisecond {
				first, last = min(first, d), max(last, d)
			}
		}
		arrivals.mu.Unlock()
		t.Logf("wave %d: sent %.2f to %.2f ms after its instant (spread %.2f ms); arrived %.2f to %.2f ms after it",
			w, lo-float64(w)*msOf(fleetGap), hi-float64(w)*msOf(fleetGap), hi-lo, msOf(first), msOf(last))
	}
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func firstDiff(a, b []planRow) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestStartAtWaitsAndCtrlCLeavesAValidFile: a worker told to start an hour
// from now says it waits for the start, and a SIGINT during the wait ends
// it, exit 130, leaving a results file of the header alone.
func TestStartAtWaitsAndCtrlCLeavesAValidFile(t *testing.T) {
	t.Parallel()
	srv, arrivals, deployment := simOnLoopback(t)
	out := filepath.Join(t.TempDir(), "results.csv")
	start := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	r := runMain(t, []string{"burst", "--endpoint", srv.URL, "--deployment", deployment, "--burst-size", "4",
		"--shard", "1/2", "--start-at", start, "--progress-every", "100ms", "-o", out},
		syscall.SIGINT, func(stderr string) bool { return strings.Contains(stderr, "burst: waiting for the start (in ") })
	// The start is an hour away: only the signal ends the wait (a wait
	// that ignored it would hang, and fail at the hang guard).
	if r.code != ExitInterrupted {
		t.Fatalf("exit %d after %v; stderr %q", r.code, r.afterSignal, r.stderr)
	}
	if !strings.Contains(r.stderr, "burst plan: waiting for the start at "+strings.TrimSuffix(start, "Z")) ||
		!strings.Contains(r.stderr, "as worker 1/2") || !strings.Contains(r.stderr, "burst: waiting for the start (in ") {
		t.Errorf("stderr does not say it waits for the start: %q", r.stderr)
	}
	if recs := readResults(t, out); len(recs) != 0 {
		t.Errorf("%d rows before the start", len(recs))
	}
	b, err := os.ReadFile(out)
	if err != nil || string(b) != strings.Join(results.Columns, ",")+"\n" {
		t.Errorf("results file %q, %v; want the header alone", b, err)
	}
	if n := arrivals.count(); n != 0 {
		t.Errorf("%d requests reached the target before the start", n)
	}
}

// TestShardFromTheCompletionIndex: `--shard /N` takes the worker's index
// from JOB_COMPLETION_INDEX, as a Kubernetes Indexed Job sets it; unset,
// empty or not an index below N, it is one line and exit 2, and nothing is
// sent or written. Not parallel: it sets the environment.
func TestShardFromTheCompletionIndex(t *testing.T) {
	t.Setenv("AZURE_OPENAI_API_KEY", "test-key") // a named target's key
	srv, arrivals, deployment := simOnLoopback(t)
	dir := t.TempDir()
	args := func(out string) []string {
		return []string{"burst", "--endpoint", srv.URL, "--deployment", deployment, "--burst-size", "8", "--quiet",
			"--shard", "/4", "--start-at", time.Now().Add(200 * time.Millisecond).UTC().Format(time.RFC3339Nano), "-o", out}
	}
	for _, c := range []struct {
		index string // "-" for unset
		want  string
	}{
		{"-", "--shard /4 takes the worker's index from JOB_COMPLETION_INDEX, which is not set: give I/N"},
		{"", "which is not set"},
		{"4", `--shard /4 with JOB_COMPLETION_INDEX="4": the index 4 must be between 0 and 3`},
		{"x", `JOB_COMPLETION_INDEX="x": want I/N`},
		{"1/2", `JOB_COMPLETION_INDEX="1/2": want I/N`},
		{" 1", `JOB_COMPLETION_INDEX=" 1": want I/N`},
	} {
		t.Setenv(completionIndexEnv, c.index)
		if c.index == "-" {
			os.Unsetenv(completionIndexEnv)
		}
		out := filepath.Join(dir, "refused.csv")
		code, _, stderr := runCLI(context.Background(), args(out)...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s=%q: exit %d, stderr %q; want exit 2 and one line with %q", completionIndexEnv, c.index, code, stderr, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s=%q: a results file was written", completionIndexEnv, c.index)
		}
	}
	if n := arrivals.count(); n != 0 {
		t.Fatalf("%d requests sent by refused runs", n)
	}

	t.Setenv(completionIndexEnv, "2")
	out := filepath.Join(dir, "worker-2.csv")
	if code, _, stderr := runCLI(context.Background(), args(out)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var seqs []int
	for _, r := range readResults(t, out) {
		if r.Worker != "2/4" {
			t.Errorf("row of worker %q", r.Worker)
		}
		seqs = append(seqs, r.Seq)
	}
	slices.Sort(seqs)
	if !slices.Equal(seqs, []int{2, 6}) {
		t.Fatalf("worker 2/4 of 8 sent seqs %v, want [2 6]", seqs)
	}
}
