package results_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/results"
)

func timelineFile(t *testing.T, extra string, cells []string, recs ...results.Record) string {
	t.Helper()
	text := testkit.ResultsText(t, recs...)
	if extra == "" {
		return text
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	lines[0] += "," + extra
	for i := range cells {
		lines[i+1] += "," + cells[i]
	}
	return strings.Join(lines, "\n") + "\n"
}

func trow(run, shape, group string, attempt int, intended float64) results.Record {
	r := results.Blank()
	r.RunID, r.Shape, r.Group, r.Attempt, r.IntendedMS, r.SentMS, r.Status = run, shape, group, attempt, intended, intended+1, 200
	return r
}

// TestReadTimelines: rows grouped by run, shape and group in the order
// of their first kept rows, each row's line, the rows keep passes over
// counted, and prompt_tokens_sent read where the file has it.
func TestReadTimelines(t *testing.T) {
	t.Parallel()
	recs := []results.Record{
		trow("a", "burst", "burst-shaped", 2, 0), // passed over: the timeline starts at its next row
		trow("b", "scheduled", "s", 1, 5),
		trow("a", "burst", "burst-shaped", 1, 0),
		trow("b", "scheduled", "s", 1, 7),
	}
	recs[1].PromptTokens = 40
	recs[2].PromptTokensSent = 33
	file := timelineFile(t, "", nil, recs...)
	first := func(r *results.Record) bool { return r.Attempt == 1 }
	tl, err := results.ReadTimelines(context.Background(), strings.NewReader(file), "f", first, 10)
	if err != nil {
		t.Fatal(err)
	}
	if tl.Rows != 4 || len(tl.List) != 2 || tl.List[0].RunID != "b" || tl.List[1].RunID != "a" {
		t.Fatalf("%+v", tl)
	}
	b, a := tl.List[0].Rows, tl.List[1].Rows
	if len(b) != 2 || b[0].Line != 3 || b[1].Line != 5 || b[0].SentMS != 6 || b[0].Prompt() != 40 || b[1].Prompt() != results.None {
		t.Errorf("timeline b: %+v", b)
	}
	if len(a) != 1 || a[0].PromptTokensSent != 33 || a[0].Prompt() != 33 || a[0].Line != 4 {
		t.Errorf("timeline a: %+v", a)
	}
	if _, err := results.ReadTimelines(context.Background(), strings.NewReader(file), "f", nil, 3); !errors.Is(err, results.ErrTooManyRows) {
		t.Errorf("past the bound: %v", err)
	}
	sent := recs[0]
	sent.PromptTokensSent = 7
	bad := strings.Replace(timelineFile(t, "", nil, sent), ",7,,,,\n", ",-3,,,,\n", 1) // prompt_tokens_sent, then the four stream timings
	if _, err := results.ReadTimelines(context.Background(), strings.NewReader(bad), "f", nil, 3); err == nil || !strings.Contains(err.Error(), "f line 2: column prompt_tokens_sent") {
		t.Errorf("a bad count: %v", err)
	}
	if _, err := results.ReadTimelines(context.Background(), strings.NewReader("a,b\n"), "f", nil, 3); !errors.Is(err, results.ErrNotResults) {
		t.Errorf("a foreign file: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := results.ReadTimelines(ctx, strings.NewReader(file), "f", nil, 3); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}
