package analyze

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/results"
)

func TestUpstreamNumbers(t *testing.T) {
	t.Parallel()
	labels := Labels{"task013": "Burst-shaped source", "task019": "Scheduled-shaped source"}
	a, err := analyzeFiles(t, ForeignColumns{Group: "source"}, labels, DefaultMinGroup, filepath.Join("testdata", "upstream", "retry_after_ms_events.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		label                string
		count                int
		p50, p90, p99, maxMS float64
	}{
		{OverallLabel, 193, 43, 50.8, 16921.12, 17258},
		{"Burst-shaped source", 167, 43, 49, 16983.26, 17258},
		{"Scheduled-shaped source", 26, 3, 60, 60, 60},
	}
	for _, w := range want {
		g := a.GroupByLabel(w.label)
		if g == nil {
			t.Fatalf("no group %q", w.label)
		}
		if g.Count() != w.count {
			t.Errorf("%s: count %d, want %d", w.label, g.Count(), w.count)
		}
		for name, v := range map[string]float64{"p50_ms": w.p50, "p90_ms": w.p90, "p99_ms": w.p99, "max_ms": w.maxMS} {
			if got := g.Stats[name]; math.Abs(got-v) > 0.005 {
				t.Errorf("%s %s = %v, want %v", w.label, name, got, v)
			}
		}
	}
	if a.ForeignFiles != 1 || a.ResultsFiles != 0 {
		t.Errorf("inputs: %d foreign, %d results", a.ForeignFiles, a.ResultsFiles)
	}
	flags := map[string]string{}
	for _, f := range a.Flags {
		flags[f.Name+"/"+f.Group] = f.Detail
	}
	if _, ok := flags["sparse/Scheduled-shaped source"]; !ok {
		t.Errorf("scheduled group (n=26) not flagged sparse: %v", a.Flags)
	}
	if _, ok := flags["imbalanced/Burst-shaped source"]; !ok {
		t.Errorf("burst group (86%%) not flagged imbalanced: %v", a.Flags)
	}
	if tail, ok := TailOf(&a.Overall); !ok || !tail.Long {
		t.Errorf("overall tail %+v, want long", tail)
	}
}

func TestResultsCounts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	late := attempt("burst-shaped", "burst", 200, -1, results.WaitNone)
	late.SentMS = late.IntendedMS + 10.5
	onTime := attempt("burst-shaped", "burst", 200, -1, results.WaitNone)
	onTime.SentMS = onTime.IntendedMS + 10
	refused := attempt("", "burst", 0, -1, results.WaitNone)
	refused.Error = results.ClassRefused
	odd := attempt("scheduled-shaped", "scheduled", 0, -1, results.WaitNone)
	odd.Error = "dial tcp secret.example.com" // hand-edited: must not be published
	recs := []results.Record{
		attempt("burst-shaped", "burst", 429, 43, results.WaitRetryAfterMS),
		attempt("burst-shaped", "burst", 429, 2000, results.WaitRetryAfterSeconds),
		attempt("burst-shaped", "burst", 429, -1, results.WaitNone),
		attempt("burst-shaped", "burst", 429, -1, results.WaitInvalid),
		late, onTime, refused,
		attempt("scheduled-shaped", "scheduled", 429, 3, results.WaitRetryAfterMS),
		attempt("scheduled-shaped", "scheduled", 200, -1, results.WaitNone),
		odd,
	}
	path := resultsFile(t, dir, "r.csv", recs)
	a, err := analyzeFiles(t, ForeignColumns{}, nil, 1, path)
	if err != nil {
		t.Fatal(err)
	}
	b := a.GroupByLabel("Burst-shaped source")
	s := a.GroupByLabel("Scheduled-shaped source")
	if b == nil || s == nil {
		t.Fatalf("groups %+v", a.Groups)
	}
	checks := []struct {
		name      string
		got, want int
	}{
		{"burst attempts", b.Attempts, 7},
		{"burst 429s", b.Total429(), 4},
		{"burst count", b.Count(), 2},
		{"burst none", b.NoWait.None, 1},
		{"burst invalid", b.NoWait.Invalid, 1},
		{"burst late", b.Late, 1},
		{"burst errors", b.Errors, 1},
		{"scheduled attempts", s.Attempts, 3},
		{"scheduled errors", s.Errors, 1},
		{"total attempts", a.Totals.Attempts, 10},
		{"total 429", a.Totals.Total429, 5},
		{"status 429", a.Totals.ByStatus[429], 5},
		{"status 0", a.Totals.ByStatus[0], 2},
		{"class refused", a.Totals.ByErrorClass[results.ClassRefused], 1},
		{"class other", a.Totals.ByErrorClass[results.ClassOther], 1},
		{"classes", len(a.Totals.ByErrorClass), 2},
		{"timeline", len(a.Timeline), 3},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if share, ok := b.Share429(); !ok || math.Abs(share-4.0/7) > 1e-12 {
		t.Errorf("burst share %v %v", share, ok)
	}
	if b.Shape != results.ShapeBurst || s.Shape != results.ShapeScheduled {
		t.Errorf("shapes %q %q", b.Shape, s.Shape)
	}
}

func TestMergeAndMinGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var day1, day2 []results.Record
	for i := 0; i < 4; i++ {
		day1 = append(day1, attempt("burst-shaped", "burst", 429, float64(10*i), results.WaitRetryAfterMS))
		day2 = append(day2, attempt("scheduled-shaped", "scheduled", 429, float64(i), results.WaitRetryAfterMS))
	}
	day2 = append(day2, attempt("burst-shaped", "burst", 429, 100, results.WaitRetryAfterMS))
	p1 := resultsFile(t, dir, "day1.csv", day1)
	p2 := resultsFile(t, dir, "day2.csv", day2)
	a, err := analyzeFiles(t, ForeignColumns{}, Labels{"scheduled-shaped": "Sched"}, DefaultMinGroup, p1, p2)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Groups) != 2 || a.Groups[0].Label != "Burst-shaped source" || a.Groups[1].Label != "Sched" {
		t.Fatalf("groups: %+v", a.Groups)
	}
	if b := a.Groups[0]; b.Count() != 5 || b.BelowMinGroup() || b.Stats["max_ms"] != 100 {
		t.Errorf("merged burst: n=%d stats=%v", b.Count(), b.Stats)
	}
	if s := a.Groups[1]; s.Count() != 4 || !s.BelowMinGroup() {
		t.Errorf("sched: n=%d withheld=%v", s.Count(), s.BelowMinGroup())
	}
	if a.Overall.Count() != 9 || a.ResultsFiles != 2 {
		t.Errorf("overall n=%d files=%d", a.Overall.Count(), a.ResultsFiles)
	}
}

func TestForeignInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		content   string
		cols      ForeignColumns
		wantErr   string // substring of a BadInputError
		wantGroup string
		count     int
		none      int
		invalid   int
		invLines  []int
	}{
		{name: "auto value column, no group", content: lines("x,retry_after_ms", "a,5", "b,7"),
			wantGroup: "events", count: 2},
		{name: "source_group read back", content: lines("source_group,retry_after_ms", "Burst-shaped source,5"),
			wantGroup: "Burst-shaped source", count: 1},
		{name: "named columns", content: lines("src,wait", "g1,5", "g1,6"), cols: ForeignColumns{Value: "wait", Group: "src"},
			wantGroup: "g1", count: 2},
		{name: "bom and crlf", content: "\ufeffretry_after_ms\r\n5\r\n6\r\n", wantGroup: "events", count: 2},
		{name: "invalid and empty values", content: lines("retry_after_ms", "5", "abc", "", "-3", "NaN", "Inf", "7", "1e400"),
			wantGroup: "events", count: 2, none: 0, invalid: 5, invLines: []int{3, 5, 6, 7, 9}},
		{name: "empty cell is none", content: lines("g,retry_after_ms", "a,", "a,4"), cols: ForeignColumns{Group: "g"},
			wantGroup: "a", count: 1, none: 1},
		{name: "no value column", content: lines("source,benchmark_id,wait"), wantErr: `no column "retry_after_ms" (its columns: "source", "benchmark_id", "wait")`},
		{name: "named value column missing", content: lines("a,b"), cols: ForeignColumns{Value: "v"}, wantErr: `no column "v"`},
		{name: "named group column missing", content: lines("retry_after_ms"), cols: ForeignColumns{Group: "g"}, wantErr: `no column "g"`},
		{name: "empty file", content: "", wantErr: "empty file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, t.TempDir(), "events.csv", c.content)
			a, err := analyzeFiles(t, c.cols, nil, 1, path)
			if c.wantErr != "" {
				var bad *BadInputError
				if !errors.As(err, &bad) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want a BadInputError with %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			g := a.GroupByLabel(c.wantGroup)
			if g == nil {
				t.Fatalf("no group %q in %+v", c.wantGroup, a.Groups)
			}
			if g.Count() != c.count || g.NoWait.None != c.none || g.NoWait.Invalid != c.invalid {
				t.Errorf("count %d none %d invalid %d; want %d %d %d", g.Count(), g.NoWait.None, g.NoWait.Invalid, c.count, c.none, c.invalid)
			}
			var got []int
			for _, r := range a.InvalidValues.First {
				got = append(got, r.Line)
			}
			if len(c.invLines) > 0 && (a.InvalidValues.Count != c.invalid || !equalInts(got, c.invLines)) {
				t.Errorf("invalid lines %v (count %d), want %v", got, a.InvalidValues.Count, c.invLines)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestUnpublishableGroup: a group label from the data goes through
// results.ValidateGroup, the rule --group is held to before any traffic.
func TestUnpublishableGroup(t *testing.T) {
	t.Parallel()
	cases := []struct{ raw, content, reason string }{
		{"a,b", lines("source,retry_after_ms", `"a,b",5`), "label must fit one CSV cell: it contains a comma at character 2"},
		{"night\u00a0run", lines("source,retry_after_ms", "night\u00a0run,5"), "label must be printable: character 6 is U+00A0"},
	}
	for _, c := range cases {
		t.Run(c.raw, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, t.TempDir(), "e.csv", c.content)
			_, err := analyzeFiles(t, ForeignColumns{Group: "source"}, nil, 1, path)
			var bad *BadInputError
			if !errors.As(err, &bad) || !strings.Contains(err.Error(), c.reason) || bad.Setting != "Labels" {
				t.Fatalf("err = %v, want a BadInputError saying %q and pointing at the Labels setting", err, c.reason)
			}
			if _, err := analyzeFiles(t, ForeignColumns{Group: "source"}, Labels{c.raw: "renamed"}, 1, path); err != nil {
				t.Errorf("renamed: %v", err)
			}
		})
	}
}

func TestTruncatedAndUnreadableRows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recs := []results.Record{attempt("burst-shaped", "burst", 429, 5, results.WaitRetryAfterMS)}
	path := resultsFile(t, dir, "r.csv", recs)
	content := readAll(t, path) + "x,burst,burst-shaped,notanumber,1,,0,0,0,0,429,,,,,none,0,,,,,,,\n" + "partial,bur"
	path = writeFile(t, dir, "r2.csv", content)
	a, err := analyzeFiles(t, ForeignColumns{}, nil, 1, path)
	if err != nil {
		t.Fatal(err)
	}
	if a.Overall.Count() != 1 || a.UnreadableRows.Count != 1 || len(a.TruncatedLines) != 1 {
		t.Errorf("count %d unreadable %+v truncated %+v", a.Overall.Count(), a.UnreadableRows, a.TruncatedLines)
	}
	if a.UnreadableRows.First[0].Line != 3 || a.TruncatedLines[0].Line != 4 {
		t.Errorf("lines: unreadable %+v truncated %+v", a.UnreadableRows.First, a.TruncatedLines)
	}
	if len(a.Warnings) != 2 {
		t.Errorf("warnings: %q", a.Warnings)
	}
}

func TestNoUsable429(t *testing.T) {
	t.Parallel()
	path := resultsFile(t, t.TempDir(), "r.csv", []results.Record{attempt("burst-shaped", "burst", 200, -1, results.WaitNone)})
	a, err := analyzeFiles(t, ForeignColumns{}, nil, DefaultMinGroup, path)
	if err != nil {
		t.Fatal(err)
	}
	if a.Overall.Count() != 0 || !a.Overall.BelowMinGroup() || len(a.Warnings) != 1 {
		t.Errorf("n=%d warnings=%q", a.Overall.Count(), a.Warnings)
	}
}

func TestECDF(t *testing.T) {
	t.Parallel()
	got := ECDF([]float64{1, 2, 2, 5}, 100)
	want := []Step{{1, 0}, {1, 0.25}, {2, 0.75}, {5, 1}}
	if len(got) != len(want) {
		t.Fatalf("ECDF = %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d = %v, want %v", i, got[i], want[i])
		}
	}
	many := make([]float64, 10000)
	for i := range many {
		many[i] = float64(i)
	}
	thin := ECDF(many, 100)
	if len(thin) > 101 || thin[len(thin)-1] != (Step{9999, 1}) || thin[0] != (Step{0, 0}) {
		t.Errorf("thinned ECDF: %d steps, first %v, last %v", len(thin), thin[0], thin[len(thin)-1])
	}
	if ECDF(nil, 10) != nil {
		t.Error("ECDF of nothing")
	}
}

// TestWaitCap: an advised wait beyond results.MaxWaitMS, in a foreign CSV
// or in a results file's wait_ms, is counted as invalid with its line and
// never published; no statistic is NaN or infinite.
func TestWaitCap(t *testing.T) {
	t.Parallel()
	over := attempt("g", "burst", 429, 1e13, results.WaitRetryAfterMS)
	cases := []struct {
		name     string
		content  string
		count    int
		maxMS    float64
		invLines []int
	}{
		{name: "foreign values at and over the cap",
			content: lines("g,retry_after_ms", "g,5", "g,1e12", "g,1000000000000.5", "g,1e16", "g,1e308", "g,7"),
			count:   3, maxMS: 1e12, invLines: []int{4, 5, 6}},
		{name: "results wait_ms over the cap",
			content: resultsContent(t, attempt("g", "burst", 429, 5, results.WaitRetryAfterMS), over, attempt("g", "burst", 429, 7, results.WaitRetryAfterMS)),
			count:   2, maxMS: 7, invLines: []int{3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, t.TempDir(), "in.csv", c.content)
			a, err := analyzeFiles(t, ForeignColumns{Group: "g"}, nil, 1, path)
			if err != nil {
				t.Fatal(err)
			}
			g := a.GroupByLabel("g")
			if g == nil || g.Count() != c.count || g.NoWait.Invalid != len(c.invLines) || g.Stats["max_ms"] != c.maxMS {
				t.Fatalf("group g = %+v; want %d waits, max %v, %d invalid", g, c.count, c.maxMS, len(c.invLines))
			}
			var got []int
			for _, r := range a.InvalidValues.First {
				got = append(got, r.Line)
			}
			if !equalInts(got, c.invLines) || a.InvalidValues.Count != len(c.invLines) {
				t.Errorf("invalid lines %v (count %d), want %v", got, a.InvalidValues.Count, c.invLines)
			}
			for _, grp := range append([]Group{a.Overall}, a.Groups...) {
				for name, v := range grp.Stats {
					if math.IsNaN(v) || math.IsInf(v, 0) || v > results.MaxWaitMS {
						t.Errorf("%s %s = %v", grp.Label, name, v)
					}
				}
			}
		})
	}
}

// resultsContent is recs as the text of a results file.
func resultsContent(t testing.TB, recs ...results.Record) string {
	t.Helper()
	return testkit.ResultsText(t, recs...)
}

// TestTooManyGroups: reading stops at the first group past MaxRawGroups,
// having read little more than the lines before it, with an error naming
// the line and the setting that fixes it.
func TestTooManyGroups(t *testing.T) {
	t.Parallel()
	// More rows than a foreign file's read buffers and than a results
	// file's read-ahead (a few blocks per core) hold past the limit's line
	// (a results row here is some 90 bytes).
	const groups = 150_000
	resultsGroups := MaxRawGroups + 2 + (2*workers()*blockSize()+2*csvReadBuffer+256<<10)/60
	var foreign, res strings.Builder
	foreign.WriteString("source,retry_after_ms\n")
	w, err := results.NewWriter(&res)
	if err != nil {
		t.Fatal(err)
	}
	for i := range groups {
		fmt.Fprintf(&foreign, "g%d,%d\n", i, i%2000)
		if i < resultsGroups {
			r := attempt(fmt.Sprintf("g%d", i), "burst", 429, float64(i%2000), results.WaitRetryAfterMS)
			w.Write(&r)
		}
	}
	cases := []struct {
		name, content string
		groups        int
		cols          ForeignColumns
		setting       string
	}{
		{"foreign group column", foreign.String(), groups, ForeignColumns{Group: "source"}, "Group"},
		{"results file", res.String(), resultsGroups, ForeignColumns{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src := &countingReader{r: strings.NewReader(c.content)}
			start := time.Now()
			err := NewTally(false).Read(context.Background(), src, Input{Name: "in.csv", Ordinal: 1}, c.cols)
			t.Logf("%d groups refused after %v, %d of %d bytes read", c.groups, time.Since(start), src.n, len(c.content))
			var bad *BadInputError
			want := fmt.Sprintf("in.csv line %d", MaxRawGroups+2) // the header is line 1
			if !errors.As(err, &bad) || bad.Setting != c.setting || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "more than 10000 distinct groups") {
				t.Fatalf("err = %v (setting %q), want a BadInputError with setting %q naming %s", err, settingOf(bad), c.setting, want)
			}
			// Bounded work: the lines up to the refused one, and the buffers;
			// a results file is read ahead, a few blocks per core.
			perLine := len(c.content) / c.groups
			limit := (MaxRawGroups+2)*perLine + 2*csvReadBuffer + 256<<10
			if c.setting == "" {
				limit += 2 * workers() * blockSize()
			}
			if limit >= len(c.content) {
				t.Fatalf("the limit %d is not under the %d bytes of the input", limit, len(c.content))
			}
			if src.n > limit {
				t.Errorf("read %d bytes before failing, more than %d", src.n, limit)
			}
		})
	}
}

func settingOf(e *BadInputError) string {
	if e == nil {
		return "(none)"
	}
	return e.Setting
}

// TestPublishedGroupLimit: MaxPublishedGroups groups publish, one more is
// refused with the Labels setting, and labels that merge groups bring the
// count back under the limit. A live Tally past MaxRawGroups cannot be
// analyzed either.
func TestPublishedGroupLimit(t *testing.T) {
	t.Parallel()
	tallyOf := func(n int) *Tally {
		tally := NewTally(false)
		for i := range n {
			r := attempt(fmt.Sprintf("g%03d", i), "burst", 429, float64(i), results.WaitRetryAfterMS)
			tally.Observe(&r)
		}
		return tally
	}
	merge := Labels{"g000": "merged", "g001": "merged"}
	cases := []struct {
		name    string
		tally   *Tally
		labels  Labels
		groups  int    // published groups when it succeeds
		setting string // of the BadInputError otherwise
	}{
		{"at the limit", tallyOf(MaxPublishedGroups), nil, MaxPublishedGroups, ""},
		{"one over", tallyOf(MaxPublishedGroups + 1), nil, 0, "Labels"},
		{"one over, two merged by a label", tallyOf(MaxPublishedGroups + 1), merge, MaxPublishedGroups, ""},
		{"past the raw limit", tallyOf(MaxRawGroups + 1), nil, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a, err := c.tally.Analysis(c.labels, 1)
			if c.groups == 0 {
				var bad *BadInputError
				if !errors.As(err, &bad) || bad.Setting != c.setting || !strings.Contains(err.Error(), "groups") {
					t.Fatalf("err = %v, want a BadInputError with setting %q", err, c.setting)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(a.Groups) != c.groups {
				t.Errorf("%d groups published, want %d", len(a.Groups), c.groups)
			}
		})
	}
}
