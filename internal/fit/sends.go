package fit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/internal/charplan"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/schedule"
)

// Send is one attempt the twin is sent: at At after its plan's start,
// with a prompt and an output cap, and (replaying a recorded run) whether
// the recorded target refused it.
type Send struct {
	Group        string
	At           time.Duration
	PromptTokens int
	MaxTokens    int
	Refused      bool
}

// Plan is sends that share a start. A run's next plan starts once every
// send of this one is answered, as characterize's second plan starts when
// its first is done.
type Plan struct{ Sends []Send }

// Timeline is the plans one simulator receives, in order: a recorded run (one
// run_id), or the main job's plan.
type Timeline struct{ Plans []Plan }

// Recorded is what the twin is compared against in one source group.
type Recorded struct {
	Group string
	// Waits are the usable advised waits of its 429s in ms, sorted.
	Waits []float64
	// Refused counts its 429s, usable wait or not; Sends its sends (0
	// when only published waits are known).
	Refused, Sends int
}

// Sends is what a fit replays and what it compares the replay with.
type Sends struct {
	Runs   []Timeline
	Groups []Recorded // in the order the sends first name them
	// Replay is true for a recorded run's sends, whose refusals are known
	// send by send; false for a plan fitted to published waits.
	Replay bool
	// TTFT and TPOT are the latency model read from the recorded 2xx
	// answers (least squares of latency on completion tokens); LatencyOK
	// is false when there were too few to read it.
	TTFT, TPOT time.Duration
	LatencyOK  bool
}

// Input is one results file to replay.
type Input struct {
	Name string
	R    io.Reader
}

// minLatencyRows is the fewest 2xx answers the latency model is read from.
const minLatencyRows = 10

// maxSends bounds the sent attempts read from recorded runs, so a file
// never takes unbounded memory.
const maxSends = 10_000_000

// FromResults reads recorded runs: every sent attempt of every file (a
// run is one run_id of one file; its plans are its (shape, group)
// timelines in the order of their first row), at its sent_ms with its
// prompt_tokens and max_tokens (a refused attempt's prompt is unknown:
// its run's mean prompt, else defaultPrompt; a missing max_tokens is
// defaultMax). results.ReadTimelines reads each file.
func FromResults(ctx context.Context, inputs []Input, defaultPrompt, defaultMax int) (Sends, error) {
	var b recordedRuns
	b.init()
	for _, in := range inputs {
		tl, err := results.ReadTimelines(ctx, in.R, in.Name, sentAttempt, maxSends)
		if errors.Is(err, results.ErrNotResults) {
			return Sends{}, valid.Errorf("Inputs", "%s is not a ptuprobe results file: a replay needs each send's time (sent_ms); to fit published waits, give them with --events under --plan characterize", in.Name)
		}
		if err != nil {
			return Sends{}, err
		}
		b.addFile(in.Name, tl)
	}
	return b.sends(defaultPrompt, defaultMax)
}

// sentAttempt keeps the rows of attempts that were sent.
func sentAttempt(rec *results.Record) bool { return !rec.NotSent() && rec.SentMS >= 0 }

// recordedRuns gathers the rows of recorded runs.
type recordedRuns struct {
	runs    map[string]*recordedRun
	order   []string
	groups  map[string]*Recorded
	gorder  []string
	lat     latencyFit
	rows    int
	anySent bool
}

type recordedRun struct {
	plans    map[string]int // (shape, group) → index in sends
	sends    [][]Send
	prompts  float64
	prompted int
}

func (b *recordedRuns) init() {
	b.runs, b.groups = map[string]*recordedRun{}, map[string]*Recorded{}
}

// addFile adds a file's timelines (in the order of their first rows: a
// run's, a plan's and a group's first appearances keep the file's order).
func (b *recordedRuns) addFile(file string, tl results.Timelines) {
	b.rows += tl.Rows
	var lat []results.TimelineRow
	for _, t := range tl.List {
		for i := range t.Rows {
			b.add(file, &t, &t.Rows[i])
			if r := &t.Rows[i]; r.Status >= 200 && r.Status < 300 && r.CompletionTokens >= 0 && r.LatencyMS >= 0 {
				lat = append(lat, *r)
			}
		}
	}
	// The latency model's sums run in the file's order.
	slices.SortFunc(lat, func(x, y results.TimelineRow) int { return cmp.Compare(x.Line, y.Line) })
	for _, r := range lat {
		b.lat.add(float64(r.CompletionTokens), r.LatencyMS)
	}
}

func (b *recordedRuns) add(file string, t *results.Timeline, rec *results.TimelineRow) {
	b.anySent = true
	key := file + "\x00" + t.RunID
	run := b.runs[key]
	if run == nil {
		run = &recordedRun{plans: map[string]int{}}
		b.runs[key] = run
		b.order = append(b.order, key)
	}
	pk := t.Shape + "\x00" + t.Group
	i, ok := run.plans[pk]
	if !ok {
		i = len(run.sends)
		run.plans[pk] = i
		run.sends = append(run.sends, nil)
	}
	refused := rec.Status == 429
	run.sends[i] = append(run.sends[i], Send{Group: t.Group, At: time.Duration(rec.SentMS * float64(time.Millisecond)),
		PromptTokens: rec.PromptTokens, MaxTokens: rec.MaxTokens, Refused: refused})
	if rec.PromptTokens >= 0 {
		run.prompts += float64(rec.PromptTokens)
		run.prompted++
	}
	g := b.groups[t.Group]
	if g == nil {
		g = &Recorded{Group: t.Group}
		b.groups[t.Group] = g
		b.gorder = append(b.gorder, t.Group)
	}
	g.Sends++
	if refused {
		g.Refused++
		if rec.WaitMS >= 0 {
			g.Waits = append(g.Waits, rec.WaitMS)
		}
	}
}

// sends orders what was read: every plan's sends by time, the unknown
// prompts and caps filled in.
func (b *recordedRuns) sends(defaultPrompt, defaultMax int) (Sends, error) {
	if !b.anySent {
		return Sends{}, valid.Errorf("Inputs", "hold no sent attempt (%d rows): nothing to replay", b.rows)
	}
	out := Sends{Replay: true}
	for _, key := range b.order {
		run := b.runs[key]
		prompt := defaultPrompt
		if run.prompted > 0 {
			prompt = int(run.prompts/float64(run.prompted) + 0.5)
		}
		var r Timeline
		for _, s := range run.sends {
			for i := range s {
				if s[i].PromptTokens < 0 {
					s[i].PromptTokens = prompt
				}
				if s[i].MaxTokens < 0 {
					s[i].MaxTokens = defaultMax
				}
			}
			// Sends recorded at one instant (a wave, on a clock that reads
			// the same for all of it) arrived in an order the file does not
			// keep (its rows are in completion order): a limiter admits the
			// first arrivals, so the admitted ones go first.
			slices.SortStableFunc(s, func(a, b Send) int {
				return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(b01(a.Refused), b01(b.Refused)))
			})
			r.Plans = append(r.Plans, Plan{Sends: s})
		}
		out.Runs = append(out.Runs, r)
	}
	for _, g := range b.gorder {
		rec := b.groups[g]
		slices.Sort(rec.Waits)
		out.Groups = append(out.Groups, *rec)
	}
	out.TTFT, out.TPOT, out.LatencyOK = b.lat.model()
	return out, nil
}

func b01(b bool) int {
	if b {
		return 1
	}
	return 0
}

// latencyFit is the least-squares line of latency (ms) on completion
// tokens over the recorded 2xx answers: TTFT + completion × TPOT, the
// simulator's latency model.
type latencyFit struct{ n, sx, sy, sxx, sxy float64 }

func (l *latencyFit) add(x, y float64) {
	l.n++
	l.sx += x
	l.sy += y
	l.sxx += x * x
	l.sxy += x * y
}

func (l *latencyFit) model() (ttft, tpot time.Duration, ok bool) {
	if l.n < minLatencyRows {
		return 0, 0, false
	}
	den := l.n*l.sxx - l.sx*l.sx
	slope := 0.0
	if den > 0 {
		slope = max(0, (l.n*l.sxy-l.sx*l.sy)/den)
	}
	icept := max(0, (l.sy-slope*l.sx)/l.n)
	ms := func(v float64) time.Duration {
		return time.Duration(v * float64(time.Millisecond)).Round(time.Microsecond)
	}
	return ms(icept), ms(slope), true
}

// PlanCharacterize names the one plan FromPlan knows: the main job's.
const PlanCharacterize = "characterize"

// Events are published waits to fit a plan to: a foreign CSV of 429
// events, read as `ptuprobe analyze` reads it.
type Events struct {
	Name    string
	R       io.Reader
	Columns analyze.ForeignColumns
	Labels  analyze.Labels
}

// FromPlan makes the sends of the main job's default plan (charplan:
// the burst waves, group burst-shaped, then the scheduled phases, group
// scheduled-shaped), every send of promptTokens and maxTokens, and reads
// the targets from ev: each events group (after its labels) must be one
// of the plan's groups.
func FromPlan(ctx context.Context, plan string, ev Events, promptTokens, maxTokens int) (Sends, error) {
	if plan != PlanCharacterize {
		return Sends{}, valid.Errorf("Plan", "%q: the plan known is %s (the main job's)", clip(plan), PlanCharacterize)
	}
	run := Timeline{Plans: []Plan{
		offsets(burst.NewPlan(charplan.Burst()), results.GroupBurst, promptTokens, maxTokens),
		offsets(schedule.NewPlan(schedule.Config{Phases: charplan.Phases()}), results.GroupScheduled, promptTokens, maxTokens),
	}}
	tally := analyze.NewTally(false)
	if err := tally.Read(ctx, ev.R, analyze.Input{Name: ev.Name, Ordinal: 1}, ev.Columns); err != nil {
		return Sends{}, err
	}
	a, err := tally.Analysis(ev.Labels, 1)
	if err != nil {
		return Sends{}, err
	}
	out := Sends{Runs: []Timeline{run}}
	planned := map[string]int{results.GroupBurst: len(run.Plans[0].Sends), results.GroupScheduled: len(run.Plans[1].Sends)}
	for _, g := range []string{results.GroupBurst, results.GroupScheduled} {
		out.Groups = append(out.Groups, Recorded{Group: g, Sends: planned[g]})
	}
	for _, g := range a.Groups {
		i := slices.IndexFunc(out.Groups, func(r Recorded) bool {
			return strings.EqualFold(r.Group, g.Label) || strings.EqualFold(analyze.DefaultLabels[r.Group], g.Label)
		})
		if i < 0 {
			return Sends{}, valid.Errorf("Events", "%s: group %q is none of the plan's (%s, %s): map it with --label FROM=TO", ev.Name, clip(g.Label), results.GroupBurst, results.GroupScheduled)
		}
		out.Groups[i].Waits = append(out.Groups[i].Waits, g.Waits...)
		out.Groups[i].Refused += g.Total429()
	}
	for i := range out.Groups {
		slices.Sort(out.Groups[i].Waits)
	}
	return out, nil
}

// pacer is a plan's offsets (burst.Plan and schedule.Plan).
type pacer interface {
	Next() (offset time.Duration, wave int, ok bool)
}

func offsets(p pacer, group string, prompt, maxTokens int) Plan {
	var out Plan
	for {
		at, _, ok := p.Next()
		if !ok {
			return out
		}
		out.Sends = append(out.Sends, Send{Group: group, At: at, PromptTokens: prompt, MaxTokens: maxTokens})
	}
}

// clip bounds a user's string in an error.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return fmt.Sprint(s)
}
