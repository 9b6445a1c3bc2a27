package publish

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/results"
)

// TestGroupByDialect: a Job with GroupBy dialect publishes one group per
// dialect of the results, under the labels given.
func TestGroupByDialect(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "results.csv")
	recs := make([]results.Record, 12)
	for i := range recs {
		r := &recs[i]
		*r = results.Blank()
		r.RunID, r.Shape, r.Group, r.Seq, r.Attempt, r.Status = "0123abcd", results.ShapeBurst, results.GroupBurst, i, 1, 429
		r.IntendedMS, r.SentMS, r.LatencyMS = float64(i), float64(i), 5
		r.WaitMS, r.WaitSource, r.Dialect = float64(100+i), results.WaitRetryAfterMS, results.DialectAzure
		if i%3 == 0 {
			r.WaitSource, r.Dialect = results.WaitGeminiRetryDelay, results.DialectGemini
		}
	}
	testkit.WriteResults(t, path, recs...)
	res, err := Run(context.Background(), Job{Paths: []string{path}, OutDir: filepath.Join(dir, "out"), MinGroup: 1,
		GroupBy: analyze.GroupByDialect, Labels: analyze.Labels{results.DialectAzure: "Azure PTU"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range res.Analysis.Groups {
		got = append(got, g.Label)
	}
	if !slices.Equal(got, []string{"Azure PTU", results.DialectGemini}) || res.Analysis.GroupByLabel("Azure PTU").Count() != 8 {
		t.Fatalf("groups %v", got)
	}
}
