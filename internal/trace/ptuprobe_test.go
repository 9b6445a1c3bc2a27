package trace

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/results"
)

func rec(group string, attempt int, intended float64, prompt, maxTokens int) results.Record {
	r := results.Blank()
	r.RunID, r.Shape, r.Group, r.Attempt, r.IntendedMS, r.SentMS, r.Status = "r1", "burst", group, attempt, intended, intended, 200
	r.PromptTokens, r.MaxTokens = prompt, maxTokens
	return r
}

func resultsFile(t *testing.T, recs []results.Record) string { return testkit.ResultsText(t, recs...) }

// TestPtuprobe: a results file's first attempts at their intended times
// (retries passed over), its timelines end to end one mean gap apart,
// each row's sizes from the row, a refused row's prompt the mean.
func TestPtuprobe(t *testing.T) {
	t.Parallel()
	recs := []results.Record{
		rec("burst-shaped", 1, 1000, 100, 10), // rows are in completion order
		rec("burst-shaped", 1, 0, 300, 10),
		rec("burst-shaped", 2, 500, 100, 10), // a retry: not an arrival
		rec("burst-shaped", 1, 0, results.None, 20),
		rec("scheduled-shaped", 1, 40, 50, 5),
		rec("scheduled-shaped", 1, 90, 50, 0),
	}
	recs[4].Shape, recs[5].Shape = "scheduled", "scheduled"
	tr := mustRead(t, resultsFile(t, recs), FormatAuto)
	if tr.Format != FormatPtuprobe || tr.Unsized != 1 || tr.ZeroOutput != 1 {
		t.Fatalf("format %s, unsized %d, zero %d", tr.Format, tr.Unsized, tr.ZeroOutput)
	}
	// The burst spans 1 s over 3 arrivals (mean gap 0.5 s): the schedule
	// starts at 1.5 s, spans 50 ms, and its mean gap ends the trace.
	var at []time.Duration
	var in, out []int
	for _, r := range tr.Rows {
		at, in, out = append(at, r.Offset), append(in, r.InputTokens), append(out, r.OutputTokens)
	}
	ms := time.Millisecond
	if !slices.Equal(at, []time.Duration{0, 0, 1000 * ms, 1500 * ms, 1550 * ms}) || tr.Span != 1600*ms {
		t.Errorf("offsets %v over %v", at, tr.Span)
	}
	// The unknown prompt is the mean of the known (100, 300, 50, 50).
	if !slices.Equal(in, []int{300, 125, 100, 50, 50}) || !slices.Equal(out, []int{10, 20, 10, 5, 1}) {
		t.Errorf("prompts %v, outputs %v", in, out)
	}
}

// TestPtuprobeSentCount: prompt_tokens_sent, where the file has it, is
// the prompt (the target's count aside; a refused row has one too).
func TestPtuprobeSentCount(t *testing.T) {
	t.Parallel()
	recs := []results.Record{rec("g", 1, 0, 90, 10), rec("g", 1, 5, results.None, 10)}
	recs[0].PromptTokensSent, recs[1].PromptTokensSent = 100, 120
	file := resultsFile(t, recs)
	lines := strings.Split(strings.TrimSuffix(file, "\n"), "\n")
	tr := mustRead(t, strings.Join(lines, "\r\n")+"\r\n", FormatPtuprobe)
	if tr.Rows[0].InputTokens != 100 || tr.Rows[1].InputTokens != 120 || tr.Unsized != 0 {
		t.Errorf("rows %+v, unsized %d", tr.Rows, tr.Unsized)
	}
	i := strings.LastIndex(lines[2], ",120,") // prompt_tokens_sent, then the four stream timings
	lines[2] = lines[2][:i] + ",x1," + lines[2][i+len(",120,"):]
	_, err := read(t, "\uFEFF"+strings.Join(lines, "\n")+"\n", FormatAuto)
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Error(), "f line 3: column prompt_tokens_sent") {
		t.Errorf("a bad count: %v", err)
	}
	// A file that records no size at all takes ptuprobe's defaults.
	tr = mustRead(t, resultsFile(t, []results.Record{rec("g", 1, 0, results.None, results.None)}), FormatAuto)
	if r := tr.Rows[0]; r.InputTokens != FallbackPromptTokens || r.OutputTokens != FallbackOutputTokens || tr.Unsized != 1 {
		t.Errorf("unsized row %+v", r)
	}
	// Retries alone are no arrival.
	if _, err := read(t, resultsFile(t, []results.Record{rec("g", 2, 0, 1, 1)}), FormatAuto); !errors.As(err, &e) || !strings.Contains(e.Reason, "no first attempt") {
		t.Errorf("retries only: %v", err)
	}
}

func TestWindowAndScale(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Window{
		"1h-1h30m": {time.Hour, 90 * time.Minute}, "10s-": {From: 10 * time.Second}, "-2m": {To: 2 * time.Minute}, " 0s - 1s ": {0, time.Second},
	} {
		if w, err := ParseWindow(in); err != nil || w != want {
			t.Errorf("%q: %+v %v; want %+v", in, w, err, want)
		}
	}
	for _, bad := range []string{"", "-", "1h", "2m-1m", "1m-1m", "x-1m", "1m-y", "-1m-2m"} {
		if _, err := ParseWindow(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	for _, bad := range []string{"0", "-1", "NaN", "inf", "1001", "x", "0.0001"} {
		if _, err := ParseScale(bad); err == nil {
			t.Errorf("scale %q: no error", bad)
		}
	}
	if v, err := ParseScale("0.5"); err != nil || v != 0.5 {
		t.Errorf("0.5: %v %v", v, err)
	}
	tr := mustRead(t, "Timestamp,Request tokens,Response tokens\n0,1,1\n1,2,2\n2,3,3\n3,4,4\n", FormatAuto)
	if err := tr.Cut(Window{From: 500 * time.Millisecond, To: 2500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if got := tr.Offsets(); !slices.Equal(got, []time.Duration{500 * time.Millisecond, 1500 * time.Millisecond}) || tr.Span != 2*time.Second || tr.Rows[0].InputTokens != 2 {
		t.Errorf("cut: %v over %v", got, tr.Span)
	}
	if err := tr.Scale(2); err != nil {
		t.Fatal(err)
	}
	if got := tr.Offsets(); !slices.Equal(got, []time.Duration{time.Second, 3 * time.Second}) || tr.Span != 4*time.Second {
		t.Errorf("scaled: %v over %v", got, tr.Span)
	}
	if err := tr.Cut(Window{From: time.Hour}); !errors.Is(err, ErrEmptyWindow) {
		t.Errorf("an empty window: %v", err)
	}
	if err := tr.Scale(1000); err != nil {
		t.Fatal(err)
	}
	long := mustRead(t, "Timestamp,Request tokens,Response tokens\n0,1,1\n3000000,2,2\n", FormatAuto)
	if err := long.Scale(1000); err == nil {
		t.Error("a scale past MaxSpan: no error")
	}
}

func TestCutThenReadIsCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Read(ctx, strings.NewReader(resultsFile(t, nil)), "f", FormatPtuprobe); !errors.Is(err, context.Canceled) {
		t.Errorf("%v", err)
	}
}
