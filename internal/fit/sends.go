package fit

import (
	"cmp"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"maps"
	"math"
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

// send is one attempt the twin is sent: at At after its plan's start,
// with a prompt and an output cap, and (replaying a recorded run) whether
// the recorded target refused it.
type send struct {
	Group        string
	At           time.Duration
	PromptTokens int
	MaxTokens    int
	Refused      bool
	// seq and attempt are the recorded row's: with At and Refused they
	// order a plan's sends canonically, whatever the file's row order.
	seq, attempt int
	// completion is an admitted send's recorded completion (tokens; 0
	// when refused or unknown): the twin, admitting it too, answers as
	// many, so its correction on completion is the recorded one's (a
	// drawn length put the served target c's level a request's cost
	// apart by its last wave).
	completion int
	// answered is a refusal's recorded latency (ms; 0 when unknown): its
	// time to first byte, the deployment answering a refusal as soon as
	// it decides it (arrivals).
	answered float64
	// wait is a refusal's recorded usable advised wait (ms; -1 when
	// admitted or unusable), took an admitted send's recorded latency
	// (ms; 0 when unknown): the first refusal's line reads them
	// (readFirstRefusal).
	wait, took float64
}

// sendPlan is sends that share a start. A run's next plan starts once every
// send of this one is answered, as characterize's second plan starts when
// its first is done.
type sendPlan struct{ Sends []send }

// timeline is the plans one simulator receives, in order: a recorded run (one
// run_id), or the main job's plan.
type timeline struct{ Plans []sendPlan }

// recordedGroup is what the twin is compared against in one source group.
type recordedGroup struct {
	Group string
	// Tested: it holds enough usable waits (minWaitsAt) for its KS to
	// test a distribution; set by the fit, whose threshold decides it.
	Tested bool
	// Waits are the usable advised waits of its 429s in ms, sorted.
	Waits []float64
	// Refused counts its 429s, usable wait or not; Sends its sends (0
	// when only published waits are known).
	Refused, Sends int
}

// workload is what a fit replays and what it compares the replay with.
type workload struct {
	Runs   []timeline
	Groups []recordedGroup // by name (a plan's: in the plan's order)
	// Replay is true for a recorded run's sends, whose refusals are known
	// send by send; false for a plan fitted to published waits.
	Replay bool
	// Latency is the latency model read from the recorded 2xx answers
	// (least squares of latency on completion tokens, each latency taken
	// back to a 1,000-token prompt at the prefill rate of the PTU tried:
	// Latency.At); LatencyOK is false when there were too few to read it.
	Latency   latencyLine
	LatencyOK bool
	// Duplicates counts the rows that repeat one already read (the same
	// run, shape, group, worker, seq and attempt, in any file): each is
	// replayed as a send of its own, and the command warns of them.
	Duplicates int
}

// input is one results file to replay.
type input struct {
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
	// maxPromptTokens and maxCompletionTokens are client's bounds on a
	// request (client.MaxPromptTokens, client.MaxCompletionTokens; a test
	// checks they agree): prompt_tokens, max_tokens and completion_tokens.
	maxPromptTokens     = 1_000_000
	maxCompletionTokens = 1_000_000
	// maxLatency bounds latency_ms: client.MaxTimeout, the longest an
	// attempt may last.
	maxLatency = time.Hour
	// maxSentAt bounds sent_ms: a plan's length (burst.MaxSpan,
	// schedule.MaxSpan: 7 days) and its last retries.
	maxSentAt = 8 * 24 * time.Hour
)

// errTooMuchWork is returned (wrapped, naming the estimate) when a fit
// would replay more than Job.MaxWork sends in all.
var errTooMuchWork = errors.New("too much work")

// fromResults reads recorded runs: every sent attempt of every file (a
// run is one run_id of one file; its plans are its (shape, group)
// timelines), at its sent_ms with its prompt (the tool's own count of what
// it sent, prompt_tokens_sent, else the target's prompt_tokens; a refused
// attempt of an older file has neither: its run's mean prompt, else
// defaultPrompt) and max_tokens (a missing one is defaultMax).
// results.ReadTimelines reads each file.
//
// A row past the bounds above is refused, naming its file and row. With
// maxSends > 0, reading stops with errTooMuchWork once the sent attempts
// pass it, so a file's size never takes unbounded memory. rows, when not
// nil, counts the rows read as they are.
func fromResults(ctx context.Context, inputs []input, defaultPrompt, defaultMax, maxSends int, rows *atomic.Int64) (workload, error) {
	var b recordedRuns
	b.init()
	limit := maxSends
	if limit <= 0 {
		limit = maxReplayRows
	}
	for _, in := range inputs {
		tl, err := b.readFile(ctx, in, limit-b.sent, rows)
		if errors.Is(err, results.ErrNotResults) {
			return workload{}, valid.Wrapf(err, "Inputs", "%s is not a ptuprobe results file: a replay needs each send's time (sent_ms)", in.Name)
		}
		if errors.Is(err, results.ErrTooManyRows) {
			return workload{}, fmt.Errorf("%w: more than %d sent attempts", errTooMuchWork, limit)
		}
		if err != nil {
			return workload{}, err
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
func (b *recordedRuns) readFile(ctx context.Context, in input, limit int, rows *atomic.Int64) (results.Timelines, error) {
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
	groups  map[string]*recordedGroup
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
	plans    map[planKey][]send
	prompts  float64
	prompted int
}

// planKey names a plan of a run: its (shape, group) timeline.
type planKey struct{ shape, group string }

func (b *recordedRuns) init() {
	b.runs, b.groups, b.seen, b.seed = map[string]*recordedRun{}, map[string]*recordedGroup{}, map[uint64]struct{}{}, maphash.MakeSeed()
}

// checkRow refuses a sent row's cells past the replay's bounds.
func checkRow(rec *results.Record) error {
	switch {
	case rec.SentMS > float64(maxSentAt/time.Millisecond):
		return fmt.Errorf("sent_ms %v: a replay reads at most %v (%v) after a plan's start", rec.SentMS, float64(maxSentAt/time.Millisecond), maxSentAt)
	case rec.PromptTokens > maxPromptTokens:
		return fmt.Errorf("prompt_tokens %d: at most %d", rec.PromptTokens, maxPromptTokens)
	case rec.MaxTokens > maxCompletionTokens:
		return fmt.Errorf("max_tokens %d: at most %d", rec.MaxTokens, maxCompletionTokens)
	case rec.CompletionTokens > maxCompletionTokens:
		return fmt.Errorf("completion_tokens %d: at most %d", rec.CompletionTokens, maxCompletionTokens)
	case rec.LatencyMS > float64(maxLatency/time.Millisecond):
		return fmt.Errorf("latency_ms %v: an attempt lasts at most %v ms (%v)", rec.LatencyMS, float64(maxLatency/time.Millisecond), maxLatency)
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
		g = &recordedGroup{Group: t.Group}
		b.groups[t.Group] = g
	}
	key := file + "\x00" + t.RunID
	run := b.runs[key]
	if run == nil {
		run = &recordedRun{plans: map[planKey][]send{}}
		b.runs[key] = run
	}
	refused := rec.Status == 429
	prompt := rec.Prompt()
	pk := planKey{t.Shape, g.Group}
	snd := send{Group: g.Group, At: time.Duration(rec.SentMS * float64(time.Millisecond)),
		PromptTokens: prompt, MaxTokens: rec.MaxTokens, Refused: refused, seq: rec.Seq, attempt: rec.Attempt, wait: -1}
	if refused && rec.WaitMS >= 0 {
		snd.wait = rec.WaitMS
	}
	if refused && rec.LatencyMS > 0 {
		snd.answered = rec.LatencyMS
	}
	if rec.Status >= 200 && rec.Status < 300 && rec.CompletionTokens > 0 {
		snd.completion = rec.CompletionTokens
		snd.took = max(rec.LatencyMS, 0)
	}
	run.plans[pk] = append(run.plans[pk], snd)
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
		b.lat.add(key+"\x00"+pk.shape+"\x00"+pk.group, latencyPoint{sent: rec.SentMS, latency: rec.LatencyMS, completion: float64(rec.CompletionTokens), prompt: float64(prompt)})
	}
}

// sends orders what was read, canonically, so that a fit is a function
// of the rows and not of their order in the file: the runs by file and
// run_id, a run's plans by shape and group as characterize runs them
// (comparePlans), a plan's sends by
// time (the admitted first at one instant), seq and attempt, and the
// groups by name; the unknown prompts and caps filled in.
func (b *recordedRuns) sends(defaultPrompt, defaultMax int) (workload, error) {
	if !b.anySent {
		return workload{}, valid.Errorf("Inputs", "hold no sent attempt (%d rows): nothing to replay", b.rows)
	}
	out := workload{Replay: true, Duplicates: b.duplicates}
	for _, key := range slices.Sorted(maps.Keys(b.runs)) {
		run := b.runs[key]
		prompt := defaultPrompt
		if run.prompted > 0 {
			prompt = int(run.prompts/float64(run.prompted) + 0.5)
		}
		var r timeline
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
			arrivals(s)
			exchange(s)
			r.Plans = append(r.Plans, sendPlan{Sends: s})
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

// arrivals moves a plan's sends, ordered canonically, from when the
// client sent them to when the deployment decided them, and orders them
// again: a refusal at its recorded latency after its send (a refusal is
// answered as soon as it is decided, so its time to first byte is when
// the deployment decided it, give or take its way back), an admitted
// send by the median of the refusals' latencies of its second of the
// plan (agreementBin; none: not moved). The deployment sees a wave later
// and wider than the client sent it: a served simulator of 250 PTU on a
// busy two-core machine answered a wave sent over 3 ms 5 to 15 ms after
// each send, so the level it drained under 100% mid-wave admitted one
// send more, and seven refusals after it advised 125 ms, not 5. Replayed
// at their sends, the served target's own settings scored 0.56 against
// that run (the burst group's p50 9 ms against 124); replayed at its
// decisions, 0.03. A run on the virtual clock answers a refusal in no
// time: nothing moves.
func arrivals(s []send) {
	lags := map[time.Duration][]float64{}
	for _, snd := range s {
		if snd.Refused {
			bin := snd.At / agreementBin
			lags[bin] = append(lags[bin], snd.answered)
		}
	}
	median := map[time.Duration]float64{}
	for bin, l := range lags {
		slices.Sort(l)
		median[bin] = l[len(l)/2]
	}
	for i := range s {
		lag := s[i].answered
		if !s[i].Refused {
			lag = median[s[i].At/agreementBin]
		}
		s[i].At += time.Duration(lag * float64(time.Millisecond))
	}
	slices.SortFunc(s, compareSends)
}

// exchange gives the admitted sends of each instant of a plan (sends
// recorded at one time, ordered canonically) their recorded completions
// in ascending order: which of them the target read first, and so drew
// which length for, the file does not say (the tests' in-process run of
// the hidden target gave a wave's lengths to other seqs from one process
// to the next, with the same waits), so the replay is a function of each
// instant's lengths, not of who got which.
func exchange(s []send) {
	for i := 0; i < len(s); {
		j := i
		var lengths []int
		for ; j < len(s) && s[j].At == s[i].At; j++ {
			if !s[j].Refused {
				lengths = append(lengths, s[j].completion)
			}
		}
		slices.Sort(lengths)
		for k := i; k < j; k++ {
			if !s[k].Refused {
				s[k].completion, lengths = lengths[0], lengths[1:]
			}
		}
		i = j
	}
}

// comparePlans orders a run's plans as characterize runs them: burst,
// then scheduled, then the refill probe (burst-shaped sends in a group of
// their own, after a rest: campaign.RefillProbe), then any other shape
// by name; then by group.
func comparePlans(a, b planKey) int {
	rank := func(k planKey) int {
		switch {
		case k.shape == results.ShapeBurst && k.group == results.GroupRefillProbe:
			return 2
		case k.shape == results.ShapeBurst:
			return 0
		case k.shape == results.ShapeScheduled:
			return 1
		}
		return 3
	}
	return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a.shape, b.shape), cmp.Compare(a.group, b.group))
}

// compareSends orders a plan's sends: by time, the admitted first at one
// instant, then by seq and attempt, then by their shape of request (two
// rows alike in all of these are the same send, in either order).
func compareSends(a, b send) int {
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

// latencyFit gathers the recorded 2xx answers the latency model is read
// from (latencyLine), each under its plan: a plan's answers shared the
// deployment's prefill and decode with each other.
type latencyFit struct {
	plans map[string][]latencyPoint // by run and plan
}

// latencyPoint is one recorded 2xx answer: when it was sent (ms after
// its plan's start), how long it took (ms), its completion and its
// prompt (tokens).
type latencyPoint struct{ sent, latency, completion, prompt float64 }

func (l *latencyFit) add(plan string, p latencyPoint) {
	if l.plans == nil {
		l.plans = map[string][]latencyPoint{}
	}
	l.plans[plan] = append(l.plans[plan], p)
}

// latencyLine is the latency model read from a recorded run's answers:
// the simulator's TTFT and TPOT (its serving model, sim's serving.go)
// at any size of deployment (At). Each answer took
//
//	TTFT + (prompt − 1,000) ÷ R + Q + completion × max(TPOT, n ÷ D)
//
// R the deployment's prefill rate, Q the wait behind the prompts of its
// plan admitted before it and not yet read at R, n the answers of its
// plan in flight when it was admitted (itself included, each in flight
// until its recorded end) and D the deployment's decode rate: R, Q and D
// depend on the size tried. The twin's simulator adds the queue and the
// shared decode itself, so the line is read net of them: read as a plain
// line of latency on completion, the main job's answers to a served
// target of 250 PTU and TTFT 200 ms read a TTFT of 432 ms (its burst
// waves' queues), and the twin, which queued them again, forecast the
// second wave's waits 60 ms long.
type latencyLine struct {
	plans [][]latencyPoint // each plan's answers, by time sent
	n     [][]int          // each answer's n: the answers in flight at its admission
}

// line orders the points canonically (so that the model, to its last
// bit, does not depend on the order of the rows) and counts each
// answer's answers in flight.
func (l *latencyFit) line() (latencyLine, bool) {
	total := 0
	for _, p := range l.plans {
		total += len(p)
	}
	if total < minLatencyRows {
		return latencyLine{}, false
	}
	var out latencyLine
	for _, k := range slices.Sorted(maps.Keys(l.plans)) {
		pts := l.plans[k]
		slices.SortFunc(pts, func(a, b latencyPoint) int {
			return cmp.Or(cmp.Compare(a.sent, b.sent), cmp.Compare(a.latency, b.latency), cmp.Compare(a.completion, b.completion), cmp.Compare(a.prompt, b.prompt))
		})
		n := make([]int, len(pts))
		var ends endHeap
		for i, p := range pts {
			for len(ends) > 0 && ends[0] <= p.sent {
				heap.Pop(&ends)
			}
			heap.Push(&ends, p.sent+p.latency)
			n[i] = len(ends)
		}
		out.plans, out.n = append(out.plans, pts), append(out.n, n)
	}
	return out, true
}

// count is how many of v are true.
func count(v []bool) int {
	n := 0
	for _, b := range v {
		if b {
			n++
		}
	}
	return n
}

// endHeap is a min-heap of answers' ends (ms).
type endHeap []float64

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h endHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *endHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// At is the TTFT and TPOT of a deployment of c's size (its PTU, and the
// TokensPerPTU and OutputWeight its decode rate is read from) that give
// the recorded latencies, least squares: each latency less its prompt's
// prefill and its queue, TTFT + completion × TPOT where its decode was
// not shared past TPOT (n ÷ D ≤ TPOT), TTFT + completion × n ÷ D where it
// was (which answers were is decided by the TPOT found: a few rounds).
func (s latencyLine) At(c sim.Config) (ttft, tpot time.Duration) {
	rate := sim.PrefillRate(c.PTU) / 1000 // prompt tokens a ms
	decode := sim.DecodeRate(c) / 1000    // output tokens a ms, all answers together; 0: unbounded
	var ys []float64                      // each latency less its prefill and its queue
	var xs, shared []float64
	var alone []bool // queued behind no other prompt, and none behind it
	for k, pts := range s.plans {
		backlog, last := 0.0, 0.0
		for i, p := range pts {
			backlog = max(0, backlog-rate*(p.sent-last))
			last = p.sent
			queue := backlog / rate
			alone = append(alone, backlog == 0 && (i+1 == len(pts) || pts[i+1].sent-p.sent >= max(p.prompt, 0)/rate))
			backlog += max(p.prompt, 0)
			ys = append(ys, p.latency-(p.prompt-sim.PrefillRefTokens)/rate-queue)
			xs = append(xs, p.completion)
			ms := 0.0 // the answer's time a token with its decode shared
			if decode > 0 {
				ms = float64(s.n[k][i]) / decode
			}
			shared = append(shared, ms)
		}
	}
	// The answers that queued behind no other prompt, when there are
	// enough of them, alone: which of a wave's answers the deployment
	// read first is not the order they were sent in (a served target on
	// a busy machine read the last-sent first: its first-sent answers
	// took 1.6–3.3 s, its last 0.7–1.4 s), so their queues are not known
	// one by one; a lone answer's is 0 whatever the order.
	if n := count(alone); n >= minLatencyRows {
		keep := func(v []float64) []float64 {
			out := make([]float64, 0, n)
			for i, x := range v {
				if alone[i] {
					out = append(out, x)
				}
			}
			return out
		}
		ys, xs, shared = keep(ys), keep(xs), keep(shared)
	}
	icept, slope := 0.0, math.Inf(1)
	for range 8 {
		var n, sx, sxx, sy, sxy float64
		for i, y := range ys {
			n++
			if shared[i] > slope { // decoded at n ÷ D: only its TTFT is unknown
				sy += y - xs[i]*shared[i]
				continue
			}
			sx += xs[i]
			sxx += xs[i] * xs[i]
			sy += y
			sxy += xs[i] * y
		}
		a, b := sy/n, 0.0
		if den := n*sxx - sx*sx; den > 0 {
			b = max(0, (n*sxy-sx*sy)/den)
			a = (sy - b*sx) / n
		}
		a = max(0, a)
		if b == slope && a == icept {
			break
		}
		icept, slope = a, b
	}
	// A line steeper or higher than the simulator takes (a few slow
	// answers of one token) is held at its bounds.
	ms := func(v float64, limit time.Duration) time.Duration {
		return time.Duration(min(v, float64(limit/time.Millisecond)) * float64(time.Millisecond)).Round(time.Microsecond)
	}
	return ms(icept, sim.MaxTTFT), ms(slope, sim.MaxTPOT)
}

// planCharacterize names the one plan fromPlan knows: the main job's.
const planCharacterize = "characterize"

// events are published waits to fit a plan to: a foreign CSV of 429
// events, read as `ptuprobe analyze` reads it.
type events struct {
	Name    string
	R       io.Reader
	Columns analyze.ForeignColumns
	Labels  analyze.Labels
}

// fromPlan makes the sends of the main job's default plan (charplan:
// the burst waves, group burst-shaped, then the scheduled phases, group
// scheduled-shaped), every send of promptTokens (and the chat format's
// overhead, sim.ChatOverhead) and maxTokens, and reads
// the targets from ev: each events group (after its labels) must be one
// of the plan's groups.
func fromPlan(ctx context.Context, plan string, ev events, promptTokens, maxTokens int) (workload, error) {
	if plan != planCharacterize {
		return workload{}, valid.Errorf("Plan", "%q: the plan known is %s (the main job's)", clip(plan), planCharacterize)
	}
	// The deployment counts the chat format's overhead around the
	// prompt's one message, as the main job's sends are counted on the
	// wire (prompt_tokens_sent).
	counted := promptTokens + sim.ChatOverhead(1)
	run := timeline{Plans: []sendPlan{
		offsets(burst.NewPlan(charplan.Burst()), results.GroupBurst, counted, maxTokens),
		offsets(schedule.NewPlan(schedule.Config{Phases: charplan.Phases()}), results.GroupScheduled, counted, maxTokens),
	}}
	tally := analyze.NewTally(false)
	if err := tally.Read(ctx, ev.R, analyze.Input{Name: ev.Name, Ordinal: 1}, ev.Columns); err != nil {
		return workload{}, err
	}
	a, err := tally.Analysis(ev.Labels, 1)
	if err != nil {
		return workload{}, err
	}
	out := workload{Runs: []timeline{run}}
	planned := map[string]int{results.GroupBurst: len(run.Plans[0].Sends), results.GroupScheduled: len(run.Plans[1].Sends)}
	for _, g := range []string{results.GroupBurst, results.GroupScheduled} {
		out.Groups = append(out.Groups, recordedGroup{Group: g, Sends: planned[g]})
	}
	for _, g := range a.Groups {
		i := slices.IndexFunc(out.Groups, func(r recordedGroup) bool {
			return strings.EqualFold(r.Group, g.Label) || strings.EqualFold(analyze.DefaultLabels[r.Group], g.Label)
		})
		if i < 0 {
			return workload{}, valid.Errorf("Events", "%s: group %q is none of the plan's (%s, %s): map it with --label FROM=TO", ev.Name, clip(g.Label), results.GroupBurst, results.GroupScheduled)
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

func offsets(p pacer, group string, prompt, maxTokens int) sendPlan {
	var out sendPlan
	for {
		at, _, ok := p.Next()
		if !ok {
			return out
		}
		out.Sends = append(out.Sends, send{Group: group, At: at, PromptTokens: prompt, MaxTokens: maxTokens})
	}
}

// clip bounds a user's string in an error.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return fmt.Sprint(s)
}
