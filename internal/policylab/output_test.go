package policylab

import (
	"bytes"
	"encoding/csv"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ptuprobe/ptuprobe/report"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// long runs the whole runs kept out of go test ./... (issue 38: the
// package's tests in a second): a whole fit (--from) and the findings on
// the model at full size. .ci/run's long stage runs them.
var long = flag.Bool("long", false, "run the lab's whole runs: a fit of --from's twin, the findings at full size")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -run %s -update rewrites it):\n%s", name, t.Name(), got)
	}
}

// TestCSVGolden: policies.csv of a realistic sweep, byte for byte; the
// same sweep writes the same bytes.
func TestCSVGolden(t *testing.T) {
	t.Parallel()
	var a, b bytes.Buffer
	if err := writeCSV(&a, fixtureSweep()); err != nil {
		t.Fatal(err)
	}
	if err := writeCSV(&b, fixtureSweep()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two writes of one sweep differ")
	}
	golden(t, "policies.csv.golden", a.Bytes())
}

// TestCSVColumns: the columns issue 19 names, in its order, first; one
// line per row; an unknown value is an empty cell; a text a spreadsheet
// would run is neutralised.
func TestCSVColumns(t *testing.T) {
	t.Parallel()
	want := "policy,load_x,clients,max_attempts,budget_ms,repeats,requests,succeeded,success_pct,success_pct_min,success_pct_max,gave_up,redirected,attempts,attempts_per_success,http_429,http_429_per_success,goodput_per_s,capacity_share_pct,e2e_p50_ms,e2e_p99_ms,e2e_max_ms,over_budget,early_retries"
	if got := strings.Join(CSVColumns(), ","); !strings.HasPrefix(got, want+",") {
		t.Fatalf("columns %s", got)
	}
	// Issue 29's columns, after round 3's, then issue 38's (sdk_cap: the
	// cap whose group a line's verdict is).
	issue29 := "offered,success_in_slo_pct,ci_low,ci_high,attempts_per_request,http_429_per_request,gave_up_local,success_p50_ms,success_p99_ms,drift_pts,steady,coordinated,recommended,eligible,holds_in,worst_regret_pct,sdk_cap"
	if got := strings.Join(CSVColumns(), ","); !strings.HasSuffix(got, ","+issue29) {
		t.Fatalf("columns %s", got)
	}
	s := Sweep{Rows: []Row{
		{Policy: "x", Load: "=1+1", Models: "a, \"b\"", LoadX: -1, Clients: 1, MaxAttempts: 1, Repeats: 1, Requests: 5,
			SuccessPct: 0, SuccessPctMin: 0, SuccessPctMax: 0, AttemptsPerSuccess: -1, HTTP429PerSuccess: -1,
			CapacitySharePct: -1, E2EP50MS: -1, E2EP99MS: -1, E2EMaxMS: -1, RatePerS: 2,
			SuccessInSLOPct: -1, CILow: -1, CIHigh: -1, AttemptsPerRequest: -1, HTTP429PerRequest: -1, SuccessP50MS: -1, SuccessP99MS: -1},
	}}
	var b bytes.Buffer
	if err := writeCSV(&b, s); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("%v %v", rows, err)
	}
	got := map[string]string{}
	for i, name := range rows[0] {
		got[name] = rows[1][i]
	}
	for name, want := range map[string]string{
		"load_x": "", "budget_ms": "", "attempts_per_success": "", "capacity_share_pct": "", "e2e_p99_ms": "",
		"success_pct": "0", "load": "'=1+1", "models": `a, "b"`, "rate_per_s": "2",
		"success_in_slo_pct": "", "recommended": "false", "coordinated": "false",
		"eligible": "true", "holds_in": "", "worst_regret_pct": "", "sdk_cap": "false",
	} {
		if got[name] != want {
			t.Errorf("%s = %q, want %q", name, got[name], want)
		}
	}
}

// TestMarkdownGolden: policies.md of a realistic sweep, byte for byte.
func TestMarkdownGolden(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := writeMarkdown(&b, fixtureSweep()); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if !strings.HasPrefix(md, "# "+pageTitle+"\n\n"+lead+"\n\n## Recommendation\n") {
		t.Errorf("policies.md does not open with the Recommendation:\n%s", md[:200])
	}
	golden(t, "policies.md.golden", b.Bytes())
}

// TestPrintTable: the terminal table opens with a recommendation per
// group, two lines each, and no line is wider than 100 columns.
func TestPrintTable(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := PrintTable(&b, fixtureSweep()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	for i, line := range lines {
		if n := utf8.RuneCountInString(line); n > 100 {
			t.Errorf("line %d is %d columns: %s", i+1, n, line)
		}
	}
	if lines[0] != "Recommendation (see policies.md for the reasons)" || !strings.HasPrefix(lines[1], "  0.8x, 16 clients: ") ||
		!strings.HasPrefix(lines[3], "  1.5x, 16 clients: ") || !strings.HasPrefix(lines[5], "  3x, 16 clients: ") {
		t.Errorf("the table does not open with the recommendations:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "\nrank policy") {
		t.Errorf("no ranked table:\n%s", b.String())
	}
	t.Log("\n" + b.String())
}

// TestPrintTableSaysNothingNotNone: a group that recommends nothing says
// "nothing recommended" on the terminal, never "none", which since
// round 6 is a policy that can be recommended (round 10's audit: with
// --repeat 1 the table read "0.8x, 16 clients: none: 1 repeat: …").
func TestPrintTableSaysNothingNotNone(t *testing.T) {
	t.Parallel()
	s := fixtureSweep()
	for i := range s.Rows {
		s.Rows[i].Repeats = 1
	}
	var b bytes.Buffer
	if err := PrintTable(&b, s); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	for _, line := range lines[1:4] {
		if !strings.Contains(line, " clients: nothing recommended: 1 repeat: a recommendation needs at least 3") || strings.Contains(line, ": none:") {
			t.Errorf("a group without a recommendation: %q", line)
		}
	}
}

// TestRealTarget: against a real target without a capacity, the shares
// are empty, the frontier plots goodput, and the method says wall clock.
func TestRealTarget(t *testing.T) {
	t.Parallel()
	s := fixtureSweep()
	s.Capacity, s.CapacityFormula, s.Deterministic, s.Limiter = 0, "no --capacity given", false, "the named target"
	for i := range s.Rows {
		s.Rows[i].CapacitySharePct, s.Rows[i].LoadX = -1, -1
	}
	var md bytes.Buffer
	if err := writeMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Capacity: unknown (no --capacity given)", "Clock: wall clock", "Limiter: the named target."} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("policies.md lacks %q", want)
		}
	}
	if strings.Contains(md.String(), "Past capacity no policy can answer more") {
		t.Error("a ceiling without a capacity")
	}
	var svg bytes.Buffer
	files := chartFiles(s, judge(s))
	if err := files[0].draw(&svg, report.SVG); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), "offered requests answered within the SLO") {
		t.Error("the frontier does not plot the measure")
	}
}

// TestFairness: the line states the one set of fair caps, or each set
// when a custom policy has its own, and the modelled clients' caps.
func TestFairness(t *testing.T) {
	t.Parallel()
	s := fixtureSweep()
	got := fairness(s)
	for _, want := range []string{"The comparison is fair", "(30,000 ms)", "(20 attempts, the first included)",
		"Each of none, sdk, stacked, sdk-one-owner models a named client", "sdk (the OpenAI SDKs, 2 retries: 3 attempts, no budget)", "sdk-one-owner (the OpenAI SDKs alone, with stacked's attempts: 12 attempts, no budget)"} {
		if !strings.Contains(got, want) {
			t.Errorf("fairness lacks %q: %s", want, got)
		}
	}
	s.Rows[len(s.Rows)-1].MaxAttempts = 5 // a custom spec with its own cap
	got = fairness(s)
	if strings.Contains(got, "The comparison is fair") || !strings.Contains(got, "sre-throttle had 5 attempts and 30,000 ms budget.") {
		t.Errorf("unequal caps not said: %s", got)
	}
}

// twoCapSweep is fixtureSweep with the SDKs' cap too: each retrying
// policy run again under 3 attempts, answering what none answers (so
// that, under that cap, none is the recommendation wherever retrying
// gained nothing).
func twoCapSweep() Sweep {
	s := fixtureSweep()
	s.SDKMaxAttempts = sdkMaxAttempts
	noneAt := map[string]float64{}
	for _, r := range s.Rows {
		if r.Policy == "none" {
			noneAt[r.Load] = r.SuccessPct
		}
	}
	var rows []Row
	for _, l := range fixtureLoads {
		for _, o := range l.outcomes {
			if models[o.policy] != "" || o.redirected > 0 {
				continue
			}
			o.share, o.load = noneAt[l.load], 1.2
			r := fixtureRow(l.load, l.x, 16, o)
			r.SDKCap, r.MaxAttempts = true, sdkMaxAttempts
			rows = append(rows, r)
		}
	}
	s.Rows = append(s.Rows, rows...)
	return s
}

// TestCSVMarksEachCapsRecommendation: policies.csv has one line per
// policy, load, fleet size and cap, and each group's recommendation is
// exactly one line marked recommended under that group's cap — none
// included, whose one measurement is in both caps' groups (before
// sdk_cap, none's line could carry only the lab's cap's verdict: under
// the SDKs' cap its recommendation was in no line).
func TestCSVMarksEachCapsRecommendation(t *testing.T) {
	t.Parallel()
	s := twoCapSweep()
	var b bytes.Buffer
	if err := writeCSV(&b, s); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	type groupKey struct{ load, clients, sdkCap string }
	lines := map[string]int{}
	recommended := map[groupKey][]string{}
	for _, r := range rows[1:] {
		k := groupKey{r[col["load"]], r[col["clients"]], r[col["sdk_cap"]]}
		lines[r[col["policy"]]+"\x00"+k.load+"\x00"+k.clients+"\x00"+k.sdkCap]++
		if r[col["recommended"]] == "true" {
			recommended[k] = append(recommended[k], r[col["policy"]])
			if r[col["holds_in"]] == "" || r[col["worst_regret_pct"]] == "" || r[col["eligible"]] != "true" {
				t.Errorf("recommended %s at %v without its grade: %v", r[col["policy"]], k, r)
			}
		}
	}
	for line, n := range lines {
		if n != 1 {
			t.Errorf("%d lines for %q (policy, load, clients, sdk_cap)", n, line)
		}
	}
	noneUnderSDK := 0
	for _, g := range judge(s) {
		k := groupKey{g.Load, "16", strconv.FormatBool(g.SDKCap)}
		var want []string
		for _, i := range g.Recommended {
			want = append(want, g.Ranked[i].Policy)
		}
		if !slices.Equal(recommended[k], want) {
			t.Errorf("group %v recommends %v; policies.csv marks %v", k, want, recommended[k])
		}
		if g.SDKCap && slices.Contains(want, "none") {
			noneUnderSDK++
		}
	}
	if noneUnderSDK == 0 {
		t.Errorf("the fixture recommends none under the SDKs' cap nowhere: the test tests nothing")
	}
}
