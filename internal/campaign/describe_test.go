package campaign

import (
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/internal/trace"
	"github.com/ptuprobe/ptuprobe/schedule"
)

// TestPlansDescribeThemselves: each plan's Description says its shape as
// configured and what it needs, from the plan's own numbers.
func TestPlansDescribeThemselves(t *testing.T) {
	t.Parallel()
	b, err := BurstPlan(burst.Config{Size: 5, Waves: 3, Gap: 2 * time.Second, Spread: time.Second}, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := "burst plan: 3 waves of 5 requests, 2s apart, each spread over 1s, each waiting for the last to finish: 15 requests, peak 5/s, spans 4.8s"; b.Description != want {
		t.Errorf("burst: %q, want %q", b.Description, want)
	}
	s, err := SchedulePlan(schedule.Config{Phases: []schedule.Phase{{Name: "up", Duration: 10 * time.Second, From: 1, To: 3}, {Name: "hold", Duration: 5 * time.Second, From: 4, To: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "scheduled plan (constant arrivals): up 10s from 1/s to 3/s, hold 5s at 4/s: 40 requests, peak 4/s, spans 15s"; s.Description != want {
		t.Errorf("schedule: %q, want %q", s.Description, want)
	}
	tr := &trace.Trace{Source: "t.csv", Format: trace.FormatAzure, Rows: []trace.Row{
		{Offset: 0, InputTokens: 10, OutputTokens: 5}, {Offset: time.Second, InputTokens: 10, OutputTokens: 5}}, Span: 2 * time.Second}
	r, err := ReplayPlan(tr, Replay{Factor: 1.5, Window: "0s-30s", Scale: "0.5"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "replayed plan (t.csv, azure format, 2 rows, window 0s-30s, time × 0.5): 2 requests, max_tokens the output × 1.5, spans 1s"; r.Description != want {
		t.Errorf("replay: %q, want %q", r.Description, want)
	}
	if got := OpenFiles(100, false); got != 164 {
		t.Errorf("OpenFiles(100, named target) = %d, want 164", got)
	}
	if got := OpenFiles(100, true); got != 264 {
		t.Errorf("OpenFiles(100, embedded) = %d, want 264", got)
	}
}
