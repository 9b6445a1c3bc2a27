package fit

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/internal/charplan"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/schedule"
	"github.com/ptuprobe/ptuprobe/sim"
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
	// seq and attempt are the recorded row's: with At and Refused they
	// order a plan's sends canonically, whatever the file's row order.
	seq, attempt int
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
	// Tested: it holds enough usable waits (MinWaits) for its KS to
	// test a distribution; set by the fit, whose threshold decides it.
	Tested bool
	// Waits are the usable advised waits of its 429s in ms, sorted.
	Waits []float64
	// Refused counts its 429s, usable wait or not; Sends its sends (0
	// when only published waits are known).
	Refused, Sends int
}

// Sends is what a fit replays and what it compares the replay with.
type Sends struct {
	Runs   []Timeline
	Groups []Recorded // by name (a plan's: in the plan's order)
	// Replay is true for a recorded run's sends, whose refusals are known
	// send by send; false for a plan fitted to published waits.
	Replay bool
	// Latency is the latency model read from the recorded 2xx answers
	// (least squares of latency on completion tokens, each latency taken
	// back to a 1,000-token prompt at the prefill rate of the PTU tried:
	// Latency.At); LatencyOK is false when there were too few to read it.
	Latency   LatencyLine
	LatencyOK bool
	// Duplicates counts the rows that repeat one already read (the same
	// run, shape, group, worker, seq and attempt, in any file): each is
	// replayed as a send of its own, and the command warns of them.
	Duplicates int
}

// Input is one results file to replay.
type Input struct {
	Name string
	R    io.Reader
}

// minLatencyRows is the fewest 2xx answers the latency model is read from.
const minLatencyRows = 10

// The bounds of a recorded row's cells the replay reads. A results file's
// numbers go to 10^15 (results' cells); past these no row ptuprobe writes
// lies, and a replay of them would ask for unbounded memory (a prompt is
// a body of 4 bytes a token) or overflow the latency model.
const (
	// MaxPromptTokens and MaxCompletionTokens are client's bounds on a
	// request (client.MaxPromptTokens, client.MaxCompletionTokens; a test
	// checks they agree): prompt_tokens, max_tokens and completion_tokens.
	MaxPromptTokens     = 1_000_000
	MaxCompletionTokens = 1_000_000
	// MaxLatency bounds latency_ms: client.MaxTimeout, the longest an
	// attempt may last.
	MaxLatency = time.Hour
	// MaxSentAt bounds sent_ms: a plan's length (burst.MaxSpan,
	// schedule.MaxSpan: 7 days) and its last retries.
	MaxSentAt = 8 * 24 * time.Hour
)

// ErrTooMuchWork is returned (wrapped, naming the estimate) when a fit
// would replay more than Job.MaxWork sends in all.
var ErrTooMuchWork = errors.New("too much work")

// FromResults reads recorded runs: every sent attempt of every file (a
// run is one run_id of one file; its plans are its (shape, group)
// timelines), at its sent_ms with its prompt (the tool's own count of what
// it sent, prompt_tokens_sent, else the target's prompt_tokens; a refused
// attempt of an older file has neither: its run's mean prompt, else
// defaultPrompt) and max_tokens (a missing one is defaultMax).
// results.ReadTimelines reads each file.
//
// A row past the bounds above is refused, naming its file and row. With
// maxSends > 0, reading stops with ErrTooMuchWork once the sent attempts
// pass it, so a file's size never takes unbounded memory. rows, when not
// nil, counts the rows read as they are.
func FromResults(ctx context.Context, inputs []Input, defaultPrompt, defaultMax, maxSends int, rows *atomic.Int64) (Sends, error) {
	var b recordedRuns
	b.init()
	limit := maxSends
	if limit <= 0 {
		limit = maxReplayRows
	}
	for _, in := range inputs {
		tl, err := b.readFile(ctx, in, limit-b.sent, rows)
		if errors.Is(err, results.ErrNotResults) {
			return Sends{}, valid.Errorf("Inputs", "%s is not a ptuprobe results file: a replay needs each send's time (sent_ms); to fit published waits, give them with --events under --plan characterize", in.Name)
		}
		if errors.Is(err, results.ErrTooManyRows) {
			return Sends{}, fmt.Errorf("%w: more than %d sent attempts", ErrTooMuchWork, limit)
		}
		if err != nil {
			return Sends{}, err
		}
		b.addFile(in.Name, tl)
	}
	return b.sends(defaultPrompt, defaultMax)
}

// maxReplayRows bounds the sent attempts read when no work cap is given,
// so a file never takes unbounded memory.
const maxReplayRows = 10_000_000

// readFile reads one file's sent attempts, each checked against the
// bounds (the first row past them ends the read with its error) and
// hashed to count the duplicates.
func (b *recordedRuns) readFile(ctx context.Context, in Input, limit int, rows *atomic.Int64) (results.Timelines, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n, sent := 0, 0
	var bad error
	keep := func(rec *results.Record) bool {
		if n++; rows != nil {
			rows.Add(1)
		}
		if bad != nil || rec.NotSent() || rec.SentMS < 0 {
			return false
		}
		if err := checkRow(rec); err != nil {
			bad = fmt.Errorf("%s row %d: %w", in.Name, n, err)
			cancel() // the reader looks at ctx every 4,096 rows
			return false
		}
		sent++
		id := b.rowKey(rec)
		if _, dup := b.seen[id]; dup {
			b.duplicates++
		}
		b.seen[id] = struct{}{}
		return true
	}
	tl, err := results.ReadTimelines(ctx, in.R, in.Name, keep, max(limit, 0))
	if bad != nil {
		return results.Timelines{}, bad
	}
	b.sent += sent
	return tl, err
}

// recordedRuns gathers the rows of recorded runs.
type recordedRuns struct {
	runs    map[string]*recordedRun
	groups  map[string]*Recorded
	lat     latencyFit
	rows    int
	sent    int
	anySent bool
	// seen holds a hash of every sent row's identity (rowKey), to count
	// the duplicates: 8 bytes a row, not its strings.
	seen       map[uint64]struct{}
	seed       maphash.Seed
	duplicates int
}

// rowKey hashes what tells one recorded attempt from another: its run
// (a run_id is random: two files that share one hold the same run), shape,
// group, worker, seq and attempt. Two attempts whose hashes
// collide (one chance in 2^64 a pair) would count as one repeat: the
// count is a warning's, and decides nothing.
func (b *recordedRuns) rowKey(rec *results.Record) uint64 {
	var h maphash.Hash
	h.SetSeed(b.seed)
	for _, s := range []string{rec.RunID, rec.Shape, rec.Group, rec.Worker} {
		h.WriteString(s)
		h.WriteByte(0)
	}
	var n [16]byte
	binary.LittleEndian.PutUint64(n[:8], uint64(rec.Seq))
	binary.LittleEndian.PutUint64(n[8:], uint64(rec.Attempt))
	h.Write(n[:])
	return h.Sum64()
}

type recordedRun struct {
	plans    map[planKey][]Send
	prompts  float64
	prompted int
}

// planKey names a plan of a run: its (shape, group) timeline.
type planKey struct{ shape, group string }

func (b *recordedRuns) init() {
	b.runs, b.groups, b.seen, b.seed = map[string]*recordedRun{}, map[string]*Recorded{}, map[uint64]struct{}{}, maphash.MakeSeed()
}

// checkRow refuses a sent row's cells past the replay's bounds.
func checkRow(rec *results.Record) error {
	switch {
	case rec.SentMS > float64(MaxSentAt/time.Millisecond):
		return fmt.Errorf("sent_ms %v: a replay reads at most %v (%v) after a plan's start", rec.SentMS, float64(MaxSentAt/time.Millisecond), MaxSentAt)
	case rec.PromptTokens > MaxPromptTokens:
		return fmt.Errorf("prompt_tokens %d: at most %d", rec.PromptTokens, MaxPromptTokens)
	case rec.MaxTokens > MaxCompletionTokens:
		return fmt.Errorf("max_tokens %d: at most %d", rec.MaxTokens, MaxCompletionTokens)
	case rec.CompletionTokens > MaxCompletionTokens:
		return fmt.Errorf("completion_tokens %d: at most %d", rec.CompletionTokens, MaxCompletionTokens)
	case rec.LatencyMS > float64(MaxLatency/time.Millisecond):
		return fmt.Errorf("latency_ms %v: an attempt lasts at most %v ms (%v)", rec.LatencyMS, float64(MaxLatency/time.Millisecond), MaxLatency)
	}
	return nil
}

// addFile adds a file's timelines: every row a sent attempt.
func (b *recordedRuns) addFile(file string, tl results.Timelines) {
	b.rows += tl.Rows
	for i := range tl.List {
		t := &tl.List[i]
		for j := range t.Rows {
			b.add(file, t, &t.Rows[j])
		}
	}
}

func (b *recordedRuns) add(file string, t *results.Timeline, rec *results.TimelineRow) {
	b.anySent = true
	g := b.groups[t.Group]
	if g == nil {
		g = &Recorded{Group: t.Group}
		b.groups[t.Group] = g
	}
	key := file + "\x00" + t.RunID
	run := b.runs[key]
	if run == nil {
		run = &recordedRun{plans: map[planKey][]Send{}}
		b.runs[key] = run
	}
	refused := rec.Status == 429
	prompt := rec.Prompt()
	pk := planKey{t.Shape, g.Group}
	run.plans[pk] = append(run.plans[pk], Send{Group: g.Group, At: time.Duration(rec.SentMS * float64(time.Millisecond)),
		PromptTokens: prompt, MaxTokens: rec.MaxTokens, Refused: refused, seq: rec.Seq, attempt: rec.Attempt})
	if prompt >= 0 {
		run.prompts += float64(prompt)
		run.prompted++
	}
	g.Sends++
	if refused {
		g.Refused++
		if rec.WaitMS >= 0 {
			g.Waits = append(g.Waits, rec.WaitMS)
		}
	}
	if rec.Status >= 200 && rec.Status < 300 && rec.CompletionTokens >= 0 && rec.LatencyMS >= 0 {
		b.lat.add(float64(rec.CompletionTokens), rec.LatencyMS, float64(prompt))
	}
}

// sends orders what was read, canonically, so that a fit is a function
// of the rows and not of their order in the file: the runs by file and
// run_id, a run's plans by shape (burst before scheduled, as
// characterize runs them; others by name) and group, a plan's sends by
// time (the admitted first at one instant), seq and attempt, and the
// groups by name; the unknown prompts and caps filled in.
func (b *recordedRuns) sends(defaultPrompt, defaultMax int) (Sends, error) {
	if !b.anySent {
		return Sends{}, valid.Errorf("Inputs", "hold no sent attempt (%d rows): nothing to replay", b.rows)
	}
	out := Sends{Replay: true, Duplicates: b.duplicates}
	for _, key := range slices.Sorted(maps.Keys(b.runs)) {
		run := b.runs[key]
		prompt := defaultPrompt
		if run.prompted > 0 {
			prompt = int(run.prompts/float64(run.prompted) + 0.5)
		}
		var r Timeline
		for _, pk := range slices.SortedFunc(maps.Keys(run.plans), comparePlans) {
			s := run.plans[pk]
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
			slices.SortFunc(s, compareSends)
			r.Plans = append(r.Plans, Plan{Sends: s})
		}
		out.Runs = append(out.Runs, r)
	}
	for _, g := range slices.Sorted(maps.Keys(b.groups)) {
		rec := b.groups[g]
		slices.Sort(rec.Waits)
		out.Groups = append(out.Groups, *rec)
	}
	out.Latency, out.LatencyOK = b.lat.line()
	return out, nil
}

// comparePlans orders a run's plans: burst, then scheduled, then any
// other shape by name; then by group.
func comparePlans(a, b planKey) int {
	rank := func(shape string) int {
		switch shape {
		case results.ShapeBurst:
			return 0
		case results.ShapeScheduled:
			return 1
		}
		return 2
	}
	return cmp.Or(cmp.Compare(rank(a.shape), rank(b.shape)), cmp.Compare(a.shape, b.shape), cmp.Compare(a.group, b.group))
}

// compareSends orders a plan's sends: by time, the admitted first at one
// instant, then by seq and attempt, then by their shape of request (two
// rows alike in all of these are the same send, in either order).
func compareSends(a, b Send) int {
	return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(b01(a.Refused), b01(b.Refused)),
		cmp.Compare(a.seq, b.seq), cmp.Compare(a.attempt, b.attempt),
		cmp.Compare(a.PromptTokens, b.PromptTokens), cmp.Compare(a.MaxTokens, b.MaxTokens))
}

func b01(b bool) int {
	if b {
		return 1
	}
	return 0
}

// latencyFit is the least-squares line of latency (ms) on completion
// tokens over the recorded 2xx answers: TTFT + completion × TPOT, the
// simulator's latency model, each answer's latency first taken back to a
// prompt of sim.PrefillRefTokens (the prompt TTFT is the time to first
// token of): a prompt of p tokens took (p − 1,000) ÷ R longer to read, R
// the prefill rate of the deployment's size (sim.PrefillRate), so the
// line depends on the PTU the fit tries (LatencyLine.At). It keeps the
// points and sums them in order (sorted), so that the line, to its last
// bit, does not depend on the order of the rows.
type latencyFit struct{ pts [][3]float64 } // completion, latency ms, prompt − PrefillRefTokens

func (l *latencyFit) add(x, y, prompt float64) {
	d := 0.0
	if prompt >= 0 {
		d = prompt - sim.PrefillRefTokens
	}
	l.pts = append(l.pts, [3]float64{x, y, d})
}

// LatencyLine is the sums of a latencyFit's points: the line at any
// prefill rate is a function of them.
type LatencyLine struct{ n, sx, sy, sxx, sxy, sd, sxd float64 }

func (l *latencyFit) line() (LatencyLine, bool) {
	if len(l.pts) < minLatencyRows {
		return LatencyLine{}, false
	}
	slices.SortFunc(l.pts, func(a, b [3]float64) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]), cmp.Compare(a[2], b[2]))
	})
	var s LatencyLine
	for _, p := range l.pts {
		s.n++
		s.sx += p[0]
		s.sy += p[1]
		s.sxx += p[0] * p[0]
		s.sxy += p[0] * p[1]
		s.sd += p[2]
		s.sxd += p[0] * p[2]
	}
	return s, true
}

// At is the line for a deployment of ptu PTU: each recorded latency less
// its prompt's extra prefill, (prompt − 1,000) ÷ sim.PrefillRate(ptu).
func (s LatencyLine) At(ptu float64) (ttft, tpot time.Duration) {
	k := 1000 / sim.PrefillRate(ptu) // ms a prompt token
	sy, sxy := s.sy-k*s.sd, s.sxy-k*s.sxd
	den := s.n*s.sxx - s.sx*s.sx
	slope := 0.0
	if den > 0 {
		slope = max(0, (s.n*sxy-s.sx*sy)/den)
	}
	icept := max(0, (sy-slope*s.sx)/s.n)
	// A line steeper or higher than the simulator takes (a few slow
	// answers of one token) is held at its bounds.
	ms := func(v float64, limit time.Duration) time.Duration {
		return time.Duration(min(v, float64(limit/time.Millisecond)) * float64(time.Millisecond)).Round(time.Microsecond)
	}
	return ms(icept, sim.MaxTTFT), ms(slope, sim.MaxTPOT)
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
// scheduled-shaped), every send of promptTokens (and the chat format's
// overhead, sim.ChatOverhead) and maxTokens, and reads
// the targets from ev: each events group (after its labels) must be one
// of the plan's groups.
func FromPlan(ctx context.Context, plan string, ev Events, promptTokens, maxTokens int) (Sends, error) {
	if plan != PlanCharacterize {
		return Sends{}, valid.Errorf("Plan", "%q: the plan known is %s (the main job's)", clip(plan), PlanCharacterize)
	}
	// The deployment counts the chat format's overhead around the
	// prompt's one message, as the main job's sends are counted on the
	// wire (prompt_tokens_sent).
	counted := promptTokens + sim.ChatOverhead(1)
	run := Timeline{Plans: []Plan{
		offsets(burst.NewPlan(charplan.Burst()), results.GroupBurst, counted, maxTokens),
		offsets(schedule.NewPlan(schedule.Config{Phases: charplan.Phases()}), results.GroupScheduled, counted, maxTokens),
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
