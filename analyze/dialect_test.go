package analyze

import (
	"context"
	"maps"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/results"
)

// dialectRows are 429s and successes of several dialects, and rows a
// reader must not publish as they are.
func dialectRows() []results.Record {
	row := func(group string, status int, wait float64, source, dialect string) results.Record {
		r := attempt(group, results.ShapeBurst, status, wait, source)
		r.Dialect = dialect
		return r
	}
	return []results.Record{
		row("east", 429, 40, results.WaitRetryAfterMS, results.DialectAzure),
		row("east", 429, 50, results.WaitRetryAfterMS, results.DialectAzure),
		row("east", 429, -1, results.WaitInvalid, results.DialectAzure),
		row("east", 200, -1, results.WaitNone, results.DialectAzure),
		row("west", 429, 90500, results.WaitOpenAIReset, results.DialectOpenAI),
		row("west", 429, -1, results.WaitNone, results.DialectOpenAI),
		row("west", 429, 2500, results.WaitGeminiRetryDelay, results.DialectGemini),
		row("west", 429, 1000, results.WaitRetryAfterSeconds, ""),                // a file before the dialect column
		row("west", 429, 7, results.WaitRetryAfterSeconds, "<b>hand-edited</b>"), // a name no version writes
		row("west", 429, 8, "made-up-source", results.DialectRFC9110),
		row("west", 0, -1, results.WaitNone, ""), // no response
	}
}

func TestParseGroupBy(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]GroupBy{"": GroupByGroup, "group": GroupByGroup, "dialect": GroupByDialect} {
		if got, err := ParseGroupBy(in); err != nil || got != want {
			t.Errorf("ParseGroupBy(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"Dialect", "shape", "wait_source", strings.Repeat("x", 100)} {
		if got, err := ParseGroupBy(in); err == nil || len(err.Error()) > 120 {
			t.Errorf("ParseGroupBy(%q) = %q, %v; want a short error", in, got, err)
		}
	}
}

// TestCountsPerDialectAndSource: whatever the grouping, the 429s are
// counted per dialect and per wait source, names no version writes as
// other, a file before the column as unknown.
func TestCountsPerDialectAndSource(t *testing.T) {
	t.Parallel()
	path := resultsFile(t, t.TempDir(), "results.csv", dialectRows())
	wantSources := map[string]int{
		results.WaitRetryAfterMS: 2, results.WaitInvalid: 1, results.WaitOpenAIReset: 1, results.WaitNone: 1,
		results.WaitGeminiRetryDelay: 1, results.WaitRetryAfterSeconds: 2, SourceOther: 1,
	}
	wantDialects := []DialectCount{
		{results.DialectAzure, 3, 2, map[string]int{results.WaitRetryAfterMS: 2, results.WaitInvalid: 1}},
		{results.DialectOpenAI, 2, 1, map[string]int{results.WaitOpenAIReset: 1, results.WaitNone: 1}},
		{results.DialectGemini, 1, 1, map[string]int{results.WaitGeminiRetryDelay: 1}},
		{results.DialectRFC9110, 1, 1, map[string]int{SourceOther: 1}},
		{DialectUnknown, 1, 1, map[string]int{results.WaitRetryAfterSeconds: 1}},
		{DialectOther, 1, 1, map[string]int{results.WaitRetryAfterSeconds: 1}},
	}
	for _, by := range []GroupBy{GroupByGroup, GroupByDialect} {
		t.Run(string(by), func(t *testing.T) {
			t.Parallel()
			a := analyzeWith(t, path, Labels{"azure": "Azure PTU"}, GroupedBy(by))
			if !maps.Equal(a.Totals.WaitSources, wantSources) {
				t.Errorf("wait sources %v, want %v", a.Totals.WaitSources, wantSources)
			}
			if !reflect.DeepEqual(a.Totals.Dialects, wantDialects) {
				t.Errorf("dialects %+v\nwant %+v", a.Totals.Dialects, wantDialects)
			}
			var labels []string
			for _, g := range a.Groups {
				labels = append(labels, g.Label)
			}
			want := []string{"east", "west"}
			if by == GroupByDialect {
				want = []string{"Azure PTU", results.DialectGemini, results.DialectOpenAI, DialectOther, results.DialectRFC9110, DialectUnknown}
			}
			if !reflect.DeepEqual(labels, want) {
				t.Fatalf("groups %v, want %v", labels, want)
			}
			if by != GroupByDialect {
				return
			}
			az := a.GroupByLabel("Azure PTU")
			if az.Attempts != 4 || az.Refused != 3 || az.Count() != 2 || az.NoWait.Invalid != 1 {
				t.Errorf("azure group %+v", az)
			}
			// The attempt without a response has no dialect.
			if u := a.GroupByLabel(DialectUnknown); u.Attempts != 2 || u.Errors != 1 || u.Count() != 1 {
				t.Errorf("unknown group %+v", u)
			}
		})
	}
}

// TestForeignCSVHasNoDialect: foreign events are grouped by their own
// column whatever GroupBy says, and carry no dialect or source.
func TestForeignCSVHasNoDialect(t *testing.T) {
	t.Parallel()
	path := writeFile(t, t.TempDir(), "events.csv", lines("source_group,retry_after_ms", "a,10", "b,20"))
	a := analyzeWith(t, path, nil, GroupedBy(GroupByDialect))
	if len(a.Groups) != 2 || a.Groups[0].Label != "a" || len(a.Totals.Dialects) != 0 || len(a.Totals.WaitSources) != 0 {
		t.Fatalf("groups %+v, totals %+v", a.Groups, a.Totals)
	}
}

// analyzeWith reads one file into a Tally set up by opts, and analyzes it
// with labels and a minimum group of 1.
func analyzeWith(t *testing.T, path string, labels Labels, opts ...TallyOption) *Analysis {
	t.Helper()
	tally := NewTally(false, opts...)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := tally.Read(context.Background(), f, Input{Name: path, Ordinal: 1}, ForeignColumns{}); err != nil {
		t.Fatal(err)
	}
	a, err := tally.Analysis(labels, 1)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
