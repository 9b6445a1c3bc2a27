package campaign

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/lengths"
	"github.com/ptuprobe/ptuprobe/internal/trace"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/schedule"
)

func constantPlan(t *testing.T, rate float64, d time.Duration) Plan {
	t.Helper()
	p, err := SchedulePlan(schedule.Config{Phases: []schedule.Phase{{Name: "c", Duration: d, From: rate, To: rate}}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func namedTarget(prompt, maxTokens string) Target {
	p, _ := lengths.Parse(prompt, nil)
	m, _ := lengths.Parse(maxTokens, nil)
	return Target{
		Spec:    client.Spec{URL: "http://127.0.0.1:9/v1/chat/completions", KeyOptional: true, Timeout: time.Second, PromptTokens: p.Largest(), MaxTokens: m.Largest()},
		Lengths: Lengths{Prompt: p, MaxTokens: m, Seed: 3},
	}
}

// What a plan offers per minute: a fixed size at a constant rate is its
// arithmetic; drawn sizes are their mean within a few percent, their
// clipped tails counted; a plan under a minute offers its total.
func TestOfferedTokens(t *testing.T) {
	t.Parallel()
	tg := namedTarget("1000", "100")
	o, err := tg.OfferedTokens(constantPlan(t, 10, 3*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if want := 600.0 * (1000 + 7 + 100); math.Abs(o.Mean-want) > 1 || math.Abs(o.P99-want) > 0.002*want || o.Clipped != 0 || o.Requests != 1800 {
		t.Errorf("fixed: %+v, want mean and p99 %v", o, want)
	}
	tg = namedTarget("lognormal:800,0.5", "uniform:50-150")
	o, _ = tg.OfferedTokens(constantPlan(t, 20, 3*time.Minute))
	if want := 1200 * (800*math.Exp(0.125) + 7 + 100); math.Abs(o.Mean/want-1) > 0.04 || o.P99 < o.Mean {
		t.Errorf("drawn: %+v, want mean about %.0f", o, want)
	}
	tg = namedTarget("normal:10,20", "100")
	o, _ = tg.OfferedTokens(constantPlan(t, 10, 2*time.Minute))
	if f := float64(o.Clipped) / float64(o.Requests); f < 0.27 || f > 0.36 || !strings.Contains(describeOffered(o), "clipped") {
		t.Errorf("normal:10,20 clipped %d of %d: %s", o.Clipped, o.Requests, describeOffered(o))
	}
	tg = namedTarget("1000", "100")
	o, _ = tg.OfferedTokens(constantPlan(t, 10, 30*time.Second))
	if o.Mean != 300*1107 || o.P99 != o.Mean {
		t.Errorf("30 s plan: %+v, want its total", o)
	}
}

// A trace's rows size its plan: max_tokens the output × the factor,
// rounded, at least 1; the hash ids its blocks; a factor out of range
// refused.
func TestTraceShapes(t *testing.T) {
	t.Parallel()
	tr := &trace.Trace{Rows: []trace.Row{
		{Offset: 0, InputTokens: 700, OutputTokens: 3, HashIDs: []int{5, 6}},
		{Offset: time.Second, InputTokens: 20, OutputTokens: 1},
	}, Span: 2 * time.Second}
	s, err := TraceShapes(tr, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.Shape(0), s.Shape(1)
	if a.PromptTokens != 700 || a.MaxTokens != 2 || len(a.Blocks) != 2 || a.Blocks[1] != 6 || b.MaxTokens != 1 || s.LargestPrompt() != 700 {
		t.Errorf("shapes %+v %+v", a, b)
	}
	for _, f := range []float64{0, -1, 101, math.NaN()} {
		var ve *valid.Error
		if _, err := TraceShapes(tr, f); !errors.As(err, &ve) || ve.Name != "MaxTokensFactor" {
			t.Errorf("factor %v: %v", f, err)
		}
	}
	p, err := ReplayPlan(tr, Replay{Factor: 1})
	if err != nil || p.Planned != 2 || p.Span != time.Second || p.Shapes == nil {
		t.Errorf("plan %+v: %v", p, err)
	}
	if p, err = ReplayPlan(tr, Replay{Cut: 500 * time.Millisecond, Factor: 1}); err != nil || p.Planned != 1 {
		t.Errorf("cut at 500 ms: %+v, %v", p, err)
	}
}

// A prompts file goes with neither a replayed trace nor a raw body, and
// its order needs it.
func TestTokenSettingsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prompts := filepath.Join(dir, "p.jsonl")
	os.WriteFile(prompts, []byte(`{"prompt":"hi"}`+"\n"), 0o644)
	tr := &trace.Trace{Rows: []trace.Row{{InputTokens: 5, OutputTokens: 5}}, Span: time.Second}
	replay, _ := ReplayPlan(tr, Replay{Factor: 1})
	base := namedTarget("10", "10")
	cases := []struct {
		field string
		edit  func(*Job)
	}{
		{"Prompts", func(j *Job) { j.Plans, j.Target.Prompts = []Plan{replay}, prompts }},
		{"Body", func(j *Job) { j.Plans, j.Target.Spec.API, j.Target.Spec.Body = []Plan{replay}, client.APIRaw, "{}" }},
		{"PromptsOrder", func(j *Job) { j.Target.PromptsOrder = PromptsRandom }},
		{"PromptsOrder", func(j *Job) { j.Target.Prompts, j.Target.PromptsOrder = prompts, "shuffled" }},
		{"Tokenizer", func(j *Job) { j.Target.Tokenizer = "p50k_base" }},
		{"Prompts", func(j *Job) { j.Target.Prompts = filepath.Join(dir, "missing.jsonl") }},
		{"Prompts", func(j *Job) { j.Target.Prompts = dir }},
		{"SharedPrefixTokens", func(j *Job) { j.Target.Prompts, j.Target.Spec.SharedPrefixTokens = prompts, 5 }},
	}
	for _, c := range cases {
		j := Job{Plans: []Plan{constantPlan(t, 1, time.Second)}, Target: base, Output: filepath.Join(dir, "r.csv"),
			Options: Options{MaxInFlight: 1, MaxRequests: 10}}
		c.edit(&j)
		var ve *valid.Error
		if err := j.Validate(); !errors.As(err, &ve) || ve.Name != c.field {
			t.Errorf("want %s refused, got %v", c.field, err)
		}
	}
}
