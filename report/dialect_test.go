package report

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/results"
)

// TestDialectsInTheSummary: the summary and analysis.json count the 429s
// per dialect and per wait source, grouped by dialect when asked; a cell
// no version writes is published as "other", never as it is.
func TestDialectsInTheSummary(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w, err := results.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct{ dialect, source string }{
		{results.DialectGemini, results.WaitGeminiRetryDelay},
		{results.DialectOpenAI, results.WaitOpenAIReset},
		{results.DialectOpenAI, results.WaitOpenAIReset},
		{"", results.WaitRetryAfterMS},
		{"<img src=x>", "`rm -rf`"},
	} {
		r := results.Blank()
		r.RunID, r.Shape, r.Group, r.Seq, r.Attempt, r.Status = "abcd0123", results.ShapeBurst, results.GroupBurst, i, 1, 429
		r.IntendedMS, r.SentMS, r.LatencyMS = 0, 0, 10
		r.WaitMS, r.WaitSource, r.Dialect = float64(1000*(i+1)), c.source, c.dialect
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	tally := analyze.NewTally(false, analyze.GroupedBy(analyze.GroupByDialect))
	if err := tally.Read(context.Background(), &buf, analyze.Input{Name: "in.csv", Ordinal: 1}, analyze.ForeignColumns{}); err != nil {
		t.Fatal(err)
	}
	a, err := tally.Analysis(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	var md, js bytes.Buffer
	if err := WriteSummary(&md, a, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, a, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| gemini | 1 | 1 | `gemini-retry-delay` 1 |",
		"| openai | 2 | 2 | `openai-reset` 2 |",
		"| unknown | 1 | 1 | `retry-after-ms` 1 |",
		"| other | 1 | 1 | `other` 1 |",
		"| `openai-reset` | 2 |",
		"`unknown`: a file written before ptuprobe recorded the dialect.",
		"| openai | 2 |", // a group of the percentile table
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md.String())
		}
	}
	for _, bad := range []string{"<img", "rm -rf"} {
		if strings.Contains(md.String(), bad) || strings.Contains(js.String(), bad) {
			t.Errorf("a hand-edited cell %q was published", bad)
		}
	}
	var doc struct {
		Totals struct {
			WaitSources map[string]int         `json:"wait_sources"`
			Dialects    []analyze.DialectCount `json:"dialects"`
		} `json:"totals"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Totals.Dialects) != 4 || doc.Totals.Dialects[0].Dialect != results.DialectOpenAI || doc.Totals.WaitSources[results.WaitOpenAIReset] != 2 {
		t.Fatalf("analysis.json totals %+v", doc.Totals)
	}
}
