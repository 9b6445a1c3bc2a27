package policylab

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/policy"
	"github.com/ptuprobe/ptuprobe/results"
)

// coordinatedSweep is a coordinated lab's sweep of one policy: alone, and
// coordinated with the numbers given.
func coordinatedSweep(alone, shared Row) Sweep {
	for _, r := range []*Row{&alone, &shared} {
		r.Load, r.Clients, r.Repeats, r.MaxAttempts = "3x", 4, 1, 20
	}
	alone.Policy, shared.Policy, shared.Coordinated = "slots", "slots"+coordinatedSuffix, true
	alone.Name, shared.Name = "slots", "slots"
	return Sweep{Rows: []Row{alone, shared}, Coordinated: true, Limiter: "ptu", Capacity: 6}
}

// TestComparisonClaim: the claim holds only when the 429s per success
// halve, the successes do not fall and no client trails by more than
// starvedPoints; each failure is named.
func TestComparisonClaim(t *testing.T) {
	t.Parallel()
	alone := Row{Succeeded: 300, HTTP429PerSuccess: 6, ClientSuccessPctMin: 40, ClientSuccessPctMax: 90, ClientSpreadPts: 50}
	for _, tt := range []struct {
		name   string
		shared Row
		want   string
	}{
		{"holds", Row{Succeeded: 300, HTTP429PerSuccess: 3, ClientSpreadPts: 10}, "holds"},
		{"apart over the repeats", Row{Succeeded: 300, HTTP429PerSuccess: 3, ClientSuccessPctMin: 40, ClientSuccessPctMax: 70, ClientSpreadPts: 8}, "holds"},
		{"not halved", Row{Succeeded: 310, HTTP429PerSuccess: 3.01, ClientSpreadPts: 10}, "fails: 429s per success not halved"},
		{"fewer", Row{Succeeded: 299, HTTP429PerSuccess: 2, ClientSpreadPts: 10}, "fails: fewer successes"},
		{"starved", Row{Succeeded: 300, HTTP429PerSuccess: 2, ClientSpreadPts: 10.1}, "fails: a client starved"},
		{"no success", Row{HTTP429PerSuccess: -1, ClientSpreadPts: 0}, "fails: 429s per success not halved, fewer successes"},
	} {
		cs := comparisons(coordinatedSweep(alone, tt.shared))
		if len(cs) != 1 {
			t.Fatalf("%s: %d comparisons, want 1", tt.name, len(cs))
		}
		if got := cs[0].Verdict(); got != tt.want {
			t.Errorf("%s: verdict %q, want %q", tt.name, got, tt.want)
		}
		if cs[0].Holds() != (tt.want == "holds") {
			t.Errorf("%s: Holds() = %v", tt.name, cs[0].Holds())
		}
	}
}

// TestCoordinatedOutputs: a coordinated sweep's policies.csv closes each
// line with the coordinated columns, and policies.md compares the rows
// against the claim and says the runs were on the wall clock; a sweep
// that is not coordinated has neither.
func TestCoordinatedOutputs(t *testing.T) {
	t.Parallel()
	sw := coordinatedSweep(Row{Succeeded: 300, HTTP429PerSuccess: 6, ClientSuccessPctMin: 40, ClientSuccessPctMax: 90, ClientSpreadPts: 50},
		Row{Succeeded: 300, HTTP429PerSuccess: 2, ClientSuccessPctMin: 60, ClientSuccessPctMax: 66.5, ClientSpreadPts: 6.5, Fallbacks: 3, CoordinatorCalls: 1200})
	var b bytes.Buffer
	if err := writeCSV(&b, sw); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("policies.csv: %v %v", rows, err)
	}
	n := len(CSVColumns())
	if got := strings.Join(rows[0][n:], ","); got != "client_success_pct_min,client_success_pct_max,client_spread_pts,coordinator_calls,fallbacks" {
		t.Errorf("coordinated columns %q", got)
	}
	if got := strings.Join(rows[2][n:], ","); rows[2][0] != "slots (coordinated)" || got != "60,66.5,6.5,1200,3" {
		t.Errorf("coordinated row %q: %q", rows[2][0], got)
	}
	if c := slices.Index(rows[0], "coordinated"); c < 0 || rows[1][c] != "false" || rows[2][c] != "true" {
		t.Errorf("the coordinated column: %v", rows[0])
	}
	var md bytes.Buffer
	if err := writeMarkdown(&md, sw); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Coordinated against alone", "- slots, 3x, 4 clients — holds: 429s per success 6 alone, 2 coordinated",
		"client success 40–90% and 60–66.5%, the widest gap in one repeat 50 and 6.5 points; 3 of 1,200 shared decisions (0.3%) fell back to a client's own state.", "not byte-reproducible", "A row marked (coordinated) ran with the same caps"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("policies.md lacks %q:\n%s", want, md.String())
		}
	}

	sw.Coordinated, sw.Rows = false, sw.Rows[:1]
	b.Reset()
	md.Reset()
	if err := writeCSV(&b, sw); err != nil {
		t.Fatal(err)
	}
	if err := writeMarkdown(&md, sw); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "client_spread_pts") || strings.Contains(md.String(), "oordinated") {
		t.Errorf("a sweep that is not coordinated speaks of coordination:\n%s\n%s", b.String(), md.String())
	}
}

// TestWallTallyCountsUnsentRequests: a request its owner refused before
// its first send has no row; the tally still counts it, given up, in its
// client's share (it once counted only the requests with a row, so a
// pace that refused locally looked 99% successful).
func TestWallTallyCountsUnsentRequests(t *testing.T) {
	t.Parallel()
	w := &wallTally{budgetMS: 1000, planMS: 10_000, clients: 2, reqs: map[int]*wallRequest{}}
	for seq := range 4 {
		w.dispatch(seq, time.Duration(100*seq)*time.Millisecond)
	}
	for _, seq := range []int{0, 1} {
		r := results.Blank()
		r.Seq, r.Attempt, r.SentMS, r.LatencyMS, r.Status = seq, 1, float64(100*seq), 50, 200
		w.observe(&r)
	}
	out := w.outcome()
	if out.Requests != 4 || out.Succeeded != 2 || out.GaveUp != 2 || out.Attempts != 2 {
		t.Errorf("requests %d, succeeded %d, gave up %d, attempts %d; want 4, 2, 2, 2", out.Requests, out.Succeeded, out.GaveUp, out.Attempts)
	}
	if len(out.ClientSuccessPct) != 2 || out.ClientSuccessPct[0] != 50 || out.ClientSuccessPct[1] != 50 {
		t.Errorf("client success %v; want 50%% each", out.ClientSuccessPct)
	}
	// The measure reads every request, in arrival order: the two
	// answered at their arrival's 50 ms, the two never sent as failures.
	if len(out.Each) != 4 || !out.Each[0].ok || !out.Each[1].ok || out.Each[2].ok || out.Each[3].ok ||
		out.Each[1].at != 100*time.Millisecond || out.Each[1].e2e != 50*time.Millisecond || out.Each[1].attempts != 1 {
		t.Errorf("each request: %+v", out.Each)
	}
}

// TestCoordinatedLabCounts: a coordinated lab runs each policy with state
// to share twice and the others once, and offers a named target the
// twins' requests too (what --max-requests is checked against).
func TestCoordinatedLabCounts(t *testing.T) {
	t.Parallel()
	var specs []policy.Spec
	for _, n := range []string{"slots", "honor", "pace"} {
		s, err := policy.Parse(n)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	l := Lab{Policies: specs, Loads: []Load{{Text: "4/s", Rate: 4}}, Clients: []int{4}, Repeat: 2, SLO: DefaultSLO,
		Budget: policy.DefaultBudget, MaxAttempts: policy.DefaultMaxAttempts, Duration: 10 * time.Second, PromptTokens: 100, MaxTokens: 100}
	// Alone, each fair policy also runs under the SDKs' cap; a coordinated
	// lab runs on the wall clock under the lab's cap only, slots and pace
	// twice.
	if l.Runs() != 12 {
		t.Errorf("alone: %d runs, want 12", l.Runs())
	}
	planned := l.Planned(0)
	l.Coordinate = &Coordination{}
	if l.Runs() != 10 || l.Planned(0) != planned*5/3 {
		t.Errorf("coordinated: %d runs, %d requests; want 10 and %d", l.Runs(), l.Planned(0), planned*5/3)
	}
	l.Policies = specs[1:2]
	if err := l.Validate(); err == nil || !strings.Contains(err.Error(), "none of the policies") {
		t.Errorf("a coordinated lab of honor alone: %v", err)
	}
}
