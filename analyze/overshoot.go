package analyze

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// The overshoot picture: did the advised wait grow with how hard the
// client pushed? Each usable 429 of ptuprobe results is placed against the
// load the client offered in the window just before it, and each group's
// waits are described against that load (Trend).
//
// Offered load counts every row the client intended — every status, every
// attempt (a retry at its own intended_ms: when its wait ended) — whose
// intended_ms lies in (t − window, t], t being the 429's own intended_ms:
// the 429 itself and everything meant for the same instant (a whole burst
// wave) are in it. Requests per second is that count over the window;
// tokens per second is the sum of each row's prompt_tokens + max_tokens
// over the window. prompt_tokens + max_tokens is what the client asked the
// target to take on, known before the answer: the estimate a per-minute
// token limiter charges (Azure's standard deployments, the simulator's
// gateway and standard deployment). It is unweighted — a provisioned
// deployment weighs output tokens by a factor the client does not know —
// and it counts cached prompt tokens, which only some targets discount. A
// refused request reports no usage, so a row without prompt_tokens counts
// the mean prompt_tokens of its timeline's rows that reported one; a
// timeline with a row without max_tokens (a raw request), or with no
// prompt_tokens at all, has no tokens per second.
//
// intended_ms counts from the start of a plan, so the rows offered on one
// clock — a timeline — are those of one run (run_id), group (as recorded)
// and shape: characterize's burst and schedule, and runs appended to one
// file, are apart. The workers of a fleet (worker I/N) share one start
// (--start-at), so their rows are one timeline per group, shape and N
// whatever their run ids: the fleet's offered load, not one worker's share.
//
// A results file is written in completion order, so intended_ms is only
// nearly sorted: a block's rows (blocks.go) are cut per timeline and
// sorted by the worker that counted them, the blocks merged in file order,
// and at the analysis a block that reaches back into the ones before it is
// merged into their tail (a request's latency of rows), so a window that
// spans blocks, or files, is counted whole.
//
// Memory: one placed 429 (32 bytes) per usable 429, and the Analysis's
// LoadPoints (32 bytes each); and one arrival (16 bytes) per row with an
// intended time, up to MaxKeptArrivals rows of inputs that can be read
// again (regular files, Input.At). Past that no more are kept, and the
// analysis reads the rest of those inputs a second time, counting each
// row into the windows of its timeline's 429s (reread.go): the same sums,
// and memory that grows with the 429s (32 bytes more each while
// counting), not the file. The rows of an input that cannot be read again
// (a pipe) are kept whatever their number.

// Settings and limits of the overshoot picture.
const (
	// DefaultLoadWindow is the trailing window of offered load: long enough
	// to hold several arrivals at the rates where 429s begin, short enough
	// to follow a ramp (characterize's rises by 1.75 requests/s each
	// second) and a burst.
	DefaultLoadWindow = time.Second
	// MinLoadWindow and MaxLoadWindow bound the window (publish checks).
	MinLoadWindow = time.Millisecond
	MaxLoadWindow = time.Hour
	// MaxLoadTimelines bounds the timelines (run × group × shape) kept;
	// past it (a run_id per row: a hand-made file) the picture is left
	// out, with a warning, and nothing more is kept.
	MaxLoadTimelines = 10_000
	// MinTrend429s is the fewest 429s a Trend describes.
	MinTrend429s = 10
	// MinLoadSpread: an offered load (requests or tokens per second) whose
	// range over a group's 429s is at most this share of its largest value
	// did not vary (TrendMeasureConstant). A steady schedule's windows hold
	// λ or λ ± 1 arrivals, and a burst's tokens differ by a few prompt
	// tokens: ranks of such a load would only order that noise. The
	// reported utilization is taken as it is: its few points over 100%
	// are what matters.
	MinLoadSpread = 0.01
	// LineFitsRho is the least |Spearman's ρ| for which a line is said to
	// fit: a strong monotone relation (Cohen's "large", 0.5). Below it a
	// line would describe a cloud.
	LineFitsRho = 0.5
	// MaxSlopePairs bounds the pairs a Theil–Sen slope is the median of:
	// every pair up to 447 429s, a seeded sample of this many beyond (the
	// sample's median lies within a few thousandths of the rank of the
	// whole's).
	MaxSlopePairs = 100_000
)

// Reasons a Trend has no correlation (Trend.Reason).
const (
	TrendTooFew          = "too-few"          // fewer than MinTrend429s 429s
	TrendMeasureConstant = "measure-constant" // the load (MinLoadSpread) or the utilization did not vary
	TrendWaitsConstant   = "waits-constant"   // every wait was the same
)

// OfferedLoad makes a Tally keep the intended time and token budget of
// the rows of ptuprobe results (16 bytes a row; past MaxKeptArrivals rows
// of inputs that can be read again, the rest of those are read again
// instead: reread.go), so that its Analysis places each usable 429
// against the load offered in the window before it (Analysis.Overshoot).
// A window ≤ 0 means DefaultLoadWindow. A live Tally (Observe) is not
// given it: it would grow with every request.
func OfferedLoad(window time.Duration) TallyOption {
	if window <= 0 {
		window = DefaultLoadWindow
	}
	return func(t *Tally) {
		t.load = &loadTally{window: window, byKey: map[timelineKey]*loadTimeline{}, maxKept: MaxKeptArrivals}
	}
}

// Overshoot is the overshoot picture of an Analysis: each usable 429 of
// ptuprobe results against the load offered just before it, and per group
// how the waits moved with it. It describes the runs analyzed, not the
// service.
type Overshoot struct {
	// Window is the trailing window of offered load.
	Window time.Duration
	// Groups are the groups with at least one placed 429, in label order.
	Groups []GroupLoad
	// Unplaced counts usable 429s of ptuprobe results without an
	// intended_ms (a hand-edited file): they are in no picture.
	Unplaced int
}

// LoadPoint is one usable 429 placed against the load offered in the
// window before it.
type LoadPoint struct {
	RequestsPerSec float64 // rows intended in the window, per second
	TokensPerSec   float64 // their prompt_tokens + max_tokens per second; −1 when unknown
	WaitMS         float64 // the advised wait
	UtilizationPct float64 // the 429's utilization_pct; −1 when the target reported none
}

// GroupLoad is one group's placed 429s and how their advised waits moved
// with three measures of load: the requests and tokens per second offered
// before each 429, and the utilization the target reported with it.
type GroupLoad struct {
	Label string
	// Points are the group's placed 429s: by timeline, in the order the
	// inputs first show each (one run of one group and shape; a fleet's
	// workers share one), then by intended time, then wait and
	// utilization — the same however the inputs were cut into blocks.
	Points      []LoadPoint
	Requests    Trend // wait against offered requests per second
	Tokens      Trend // wait against offered tokens per second
	Utilization Trend // wait against utilization_pct (percentage points)
}

// Trend describes advised waits against one measure, over the N 429s
// that carry it: Spearman's rank correlation, and the Theil–Sen line when
// one fits.
type Trend struct {
	// N is the number of 429s with the measure: the n behind Rho.
	N int
	// Min and Max are the measure's range over them.
	Min, Max float64
	// Rho is Spearman's ρ of wait against the measure (ties share their
	// average rank), from −1 to 1; 0 with a Reason when it is undefined.
	Rho float64
	// Reason is why there is no Rho: TrendTooFew, TrendMeasureConstant or
	// TrendWaitsConstant; empty when there is one.
	Reason string
	// Line is the Theil–Sen line of wait against the measure when one fits
	// (|Rho| ≥ LineFitsRho); nil otherwise.
	Line *Line
}

// Line is a fitted line: wait (ms) = Intercept + Slope × measure. Slope is
// the median of the slopes between pairs of 429s with different measures
// (Theil–Sen), Intercept the median of wait − Slope × measure.
type Line struct {
	Slope, Intercept float64
	// Pairs is how many pairs the slope is the median of; Sampled says
	// they are a seeded sample of all pairs (more than MaxSlopePairs).
	Pairs   int
	Sampled bool
}

// timelineKey names the rows offered on one clock: a run's plan, or a
// fleet's (fleet holds N of worker I/N, and run is then empty).
type timelineKey struct{ group, shape, run, fleet string }

// arrival is a row on its timeline.
type arrival struct {
	at float64 // intended_ms
	// budget is prompt_tokens (else prompt_tokens_sent) + max_tokens,
	// either counted as 0 when absent; unprompted is 1 when both prompt
	// counts are absent (the window
	// counts the timeline's mean prompt for it), else 0. Kept apart as
	// integers, the window's sums need no branch.
	budget, unprompted int32
}

// placed is a usable 429 on its timeline.
type placed struct {
	at, waitMS, utilPct float64
	group               int32 // the group's number in its Tally (groupTally.id)
}

func byArrival(a, b arrival) int { return cmp.Compare(a.at, b.at) }

// byPlaced orders placed 429s by every field a LoadPoint publishes, so
// that their order on a timeline is the same however the rows were cut
// into blocks (the group is left out: each group's points are taken apart
// in the end, and its number in a block's Tally is not the file's).
func byPlaced(a, b placed) int {
	return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.waitMS, b.waitMS), cmp.Compare(a.utilPct, b.utilPct))
}

// loadTimeline is what a Tally keeps of one timeline: its rows as sorted
// runs (a block's, sorted by the worker that counted it), in the order
// they were counted.
type loadTimeline struct {
	key   timelineKey
	index int32 // its position in its loadTally's timelines
	// arrivals are the kept rows of inputs that can be read again (up to
	// the block that took the second pass: none after), pinned those of
	// inputs that cannot (a pipe), always kept.
	arrivals, pinned [][]arrival
	// reread counts the rows with an intended time of inputs that can be
	// read again that were not kept: what the second pass must find.
	reread    int64
	counted   int64 // rows a block's Tally counted without keeping them (loadCounting)
	placed    [][]placed
	promptSum int64 // prompt_tokens of the rows that reported one
	promptN   int
	noBudget  int // rows without max_tokens
}

// loadTally is a Tally's part of the overshoot picture (OfferedLoad).
// Rows are first gathered in scratch, whatever their timeline, and cut
// into one exact run per timeline when sealed: a block's rows spread over
// a few timelines in shares no one knows beforehand, and growing a slice
// per timeline copied and wasted more than the rows themselves.
//
// Where it stands is two states: its phase, over all its inputs
// (loadPhase), and the state of the input it reads (inputState), which
// readResults moves through begin, absorbed, readWhole and end.
type loadTally struct {
	window  time.Duration
	maxKept int        // MaxKeptArrivals, or a test's
	phase   loadPhase  // over all inputs
	input   inputState // of the input being read
	kept    int        // rows of arrivals (inputs that can be read again)
	// partial: the read of an input that can be read again failed, or
	// took the second pass at a line not known; the second pass cannot
	// find its rows.
	partial bool
	// spilled, while an input that can be read again is read, is set once
	// the second pass is taken, for the workers: the Tallies of the blocks
	// they count from then on only count their rows (loadCounting).
	spilled   *atomic.Bool
	from      int // once the input is inputReread, its first line the second pass reads
	inputs    []rereadInput
	timelines []*loadTimeline // in the order first seen
	byKey     map[timelineKey]*loadTimeline
	recent    recentTimelines
	scratch   *loadScratch // rows counted since the last seal
	unplaced  int
}

// loadPhase is where a loadTally's picture stands over all its inputs. It
// only moves forward: from loadKeeping to loadSpilled (spill), and from
// either to loadDropped (drop). A block's Tally counted once the file's
// Tally has spilled is loadCounting from its start (onlyCount).
type loadPhase uint8

const (
	loadKeeping  loadPhase = iota // every row is kept; the windows are counted from memory
	loadSpilled                   // past maxKept: the windows of rows of inputs that can be read again are counted by a second pass (reread.go)
	loadCounting                  // a block's Tally after the spill: its rows are only counted, for the second pass to find
	loadDropped                   // past MaxLoadTimelines: nothing is kept, there is no picture
)

// inputState is where the input a loadTally reads stands.
type inputState uint8

const (
	noInput       inputState = iota // none is read (between inputs; a live Tally, a block's)
	inputPinned                     // it cannot be read again (a pipe): its rows are kept whatever their number
	inputKept                       // it can be read again, and its rows are kept so far
	inputSpilling                   // the last block absorbed took the second pass: the line after it is still to be noted (absorbed)
	inputReread                     // its rows from line from on are counted by the second pass
)

// rereadable reports whether the input being read can be read again.
func (l *loadTally) rereadable() bool { return l.input >= inputKept }

// begin starts reading in: its rows are pinned if it cannot be read
// again, else kept, or read again whole once the picture has spilled. It
// returns the signal the workers read (spilled), nil when there is none.
func (l *loadTally) begin(in Input) *atomic.Bool {
	switch {
	case l.phase == loadDropped:
		l.input = noInput
	case in.At == nil:
		l.input = inputPinned
	case l.phase == loadSpilled:
		l.input, l.from = inputReread, 1
	default:
		l.input, l.from = inputKept, 0
	}
	if l.rereadable() {
		l.spilled = new(atomic.Bool)
		l.spilled.Store(l.phase == loadSpilled)
	}
	return l.spilled
}

// onlyCount makes a block's loadTally count its rows without keeping
// them: the file's Tally has spilled.
func (l *loadTally) onlyCount() {
	if l.phase == loadKeeping {
		l.phase = loadCounting
	}
}

// absorbed notes that block b was absorbed: if it took the second pass,
// the lines after it are the ones to read again.
func (l *loadTally) absorbed(b *block) {
	if l.input == inputSpilling {
		l.input, l.from = inputReread, b.Line+bytes.Count(b.Text, []byte{'\n'})
	}
}

// readWhole notes that the input was read to its end: one that is read
// again from a line is listed for the second pass (size: the bytes read,
// as a file may grow; readable: no row of it was unreadable).
func (l *loadTally) readWhole(in Input, size int64, readable bool) {
	if !l.rereadable() {
		return
	}
	l.seal()
	switch l.input {
	case inputSpilling:
		// Taken by rows counted again into the file's Tally (blocks.go's
		// merge), past a block: which line to read from is not known.
		l.partial = true
	case inputReread:
		l.inputs = append(l.inputs, rereadInput{at: in.At, size: size, name: in.Name, from: l.from, readable: readable})
	}
}

// end ends the input's read, whole or not (err): a second pass could
// not find the rows of a read that failed.
func (l *loadTally) end(err error) {
	l.spilled = nil
	l.seal()
	l.partial = l.partial || (l.rereadable() && err != nil)
	l.input = noInput
}

// loadScratch holds rows not yet sealed, each with its timeline's index.
// Scratches are reused from block to block (scratchPool).
type loadScratch struct {
	arrivals   []arrival
	arrivalsTL []int32
	placed     []placed
	placedTL   []int32
	// Room for sorting a run by its intended times (sortByAt).
	keys, tmpKeys []uint64
	tmpArrivals   []arrival
	tmpPlaced     []placed
}

var scratchPool = sync.Pool{New: func() any { return new(loadScratch) }}

// recentTimeline is a timeline with the cells that named it, so that a row
// of one of the last few timelines finds it without building a key: rows
// come in long stretches of a few timelines. The cells are kept as the
// row had them (a decoder's strings are never overwritten, and a
// decoder hands out one string for a text that repeats, which compares at
// once).
type recentTimeline struct {
	group, shape, run, worker string
	tl                        *loadTimeline
}

// add counts one row (addRecord); group is its group's number.
func (l *loadTally) add(rec *results.Record, group int32) {
	if l.phase == loadDropped {
		return
	}
	usable := rec.Is429() && rec.HasWait() && usableWait(rec.WaitMS)
	if rec.IntendedMS < 0 {
		if usable {
			l.unplaced++
		}
		return
	}
	tl := l.timeline(rec)
	if tl == nil {
		return
	}
	sc := l.scratch
	if sc == nil {
		sc = scratchPool.Get().(*loadScratch)
		l.scratch = sc
	}
	if l.phase == loadCounting {
		tl.counted++
	} else {
		sc.arrivals = append(sc.arrivals, arrivalOf(rec))
		sc.arrivalsTL = append(sc.arrivalsTL, tl.index)
	}
	if p := promptOf(rec); p >= 0 {
		tl.promptSum += int64(tokens32(p))
		tl.promptN++
	}
	if rec.MaxTokens < 0 {
		tl.noBudget++
	}
	if usable {
		sc.placed = append(sc.placed, placed{at: rec.IntendedMS, waitMS: rec.WaitMS, utilPct: rec.UtilizationPct, group: group})
		sc.placedTL = append(sc.placedTL, tl.index)
	}
}

// arrivalOf is rec's arrival (rec has an intended time).
func arrivalOf(rec *results.Record) arrival {
	p := promptOf(rec)
	a := arrival{at: rec.IntendedMS, budget: int32(min(int64(tokens32(p))+int64(tokens32(rec.MaxTokens)), math.MaxInt32))}
	if p < 0 {
		a.unprompted = 1
	}
	return a
}

// promptOf is rec's prompt in tokens: the target's count (prompt_tokens)
// when it reported one, else the sender's (prompt_tokens_sent: a refused
// request reports no usage but was sent), else None.
func promptOf(rec *results.Record) int {
	if rec.PromptTokens >= 0 {
		return rec.PromptTokens
	}
	return rec.PromptTokensSent
}

// tokens32 keeps a token count in an int32: None is 0, and a hand-edited
// count beyond an int32 is taken as its largest value.
func tokens32(n int) int32 { return int32(min(max(n, 0), math.MaxInt32)) }

// timeline returns the timeline of rec, made if need be; nil once the
// picture is dropped.
func (l *loadTally) timeline(rec *results.Record) *loadTimeline {
	if tl := l.recent.find(rec); tl != nil {
		return tl
	}
	key := keyOf(rec)
	tl := l.byKey[key]
	if tl == nil {
		if len(l.timelines) >= MaxLoadTimelines {
			l.drop()
			return nil
		}
		// Clones: the cells may be slices of a whole row.
		key = timelineKey{strings.Clone(key.group), strings.Clone(key.shape), strings.Clone(key.run), strings.Clone(key.fleet)}
		tl = &loadTimeline{key: key}
		l.adopt(tl)
	}
	l.recent.note(rec, tl)
	return tl
}

// keyOf is the key of rec's timeline.
func keyOf(rec *results.Record) timelineKey {
	key := timelineKey{group: rec.Group, shape: rec.Shape, run: rec.RunID}
	if n, ok := fleetSize(rec.Worker); ok {
		key.run, key.fleet = "", n
	}
	return key
}

// recentTimelines are the timelines of the last rows that named a new
// one, a few, with the cells that named them.
type recentTimelines struct {
	entries [8]recentTimeline
	evict   int // the entry a new timeline replaces
	last    int // the entry that held the last row's cells
}

// find returns the timeline of rec if it is one of r's, else nil. It
// looks from the entry of the last row on: a run's rows mostly name the
// last row's timeline, and a fleet's take turns by worker, whose entries
// were noted in turn (the next row's is the next entry). The entries
// hold different cells (note is called after a miss), so where the look
// starts changes only how soon it ends. The worker is compared first.
func (r *recentTimelines) find(rec *results.Record) *loadTimeline {
	for k := range len(r.entries) {
		i := (r.last + k) % len(r.entries)
		if c := &r.entries[i]; c.tl != nil && c.worker == rec.Worker && c.group == rec.Group && c.shape == rec.Shape && c.run == rec.RunID {
			r.last = i
			return c.tl
		}
	}
	return nil
}

// note makes tl, the timeline of rec, one of r's.
func (r *recentTimelines) note(rec *results.Record, tl *loadTimeline) {
	r.entries[r.evict] = recentTimeline{rec.Group, rec.Shape, rec.RunID, rec.Worker, tl}
	r.last, r.evict = r.evict, (r.evict+1)%len(r.entries)
}

// adopt adds tl to l's timelines.
func (l *loadTally) adopt(tl *loadTimeline) {
	tl.index = int32(len(l.timelines))
	l.timelines = append(l.timelines, tl)
	l.byKey[tl.key] = tl
}

// fleetSize returns N of a worker cell I/N as ptuprobe writes it.
func fleetSize(cell string) (string, bool) {
	if cell == "" || workerOf(cell) == WorkerOther {
		return "", false
	}
	_, n, _ := strings.Cut(cell, "/")
	return n, true
}

// drop leaves the picture out: past MaxLoadTimelines nothing is kept.
func (l *loadTally) drop() {
	if l.scratch != nil {
		l.scratch.reset()
		scratchPool.Put(l.scratch)
	}
	*l = loadTally{window: l.window, maxKept: l.maxKept, phase: loadDropped}
}

func (sc *loadScratch) reset() {
	sc.arrivals, sc.arrivalsTL = sc.arrivals[:0], sc.arrivalsTL[:0]
	sc.placed, sc.placedTL = sc.placed[:0], sc.placedTL[:0]
}

// seal cuts the rows counted since the last seal into one sorted run per
// timeline, on the goroutine that counted them (a block's worker), and
// gives the scratch back for the next block.
func (l *loadTally) seal() {
	sc := l.scratch
	if sc == nil {
		return
	}
	l.scratch = nil
	n := len(l.timelines)
	for i, run := range cut(sc.arrivals, sc.arrivalsTL, n) {
		if len(run) > 0 {
			if !arrivalsSorted(run) {
				sortByAt(run, func(a *arrival) float64 { return a.at }, &sc.tmpArrivals, sc)
			}
			l.keep(l.timelines[i], run)
		}
	}
	l.spill()
	for i, run := range cut(sc.placed, sc.placedTL, n) {
		if len(run) > 0 {
			if !slices.IsSortedFunc(run, byPlaced) {
				sortByAt(run, func(p *placed) float64 { return p.at }, &sc.tmpPlaced, sc)
				sortTies(run)
			}
			l.timelines[i].placed = append(l.timelines[i].placed, run)
		}
	}
	sc.reset()
	scratchPool.Put(sc)
}

// sortByAt sorts run by the intended time at gives of each (no NaN),
// stably: by a radix sort of their sort keys (radix.go) in the room of
// sc and *tmp, or by slices.SortStableFunc when run is short. A block of
// a real run holds its rows in the order they completed, not in the
// order they were intended (latencies differ, retries come later): a
// comparison sort of each block was a tenth of an analysis.
func sortByAt[E any](run []E, at func(*E) float64, tmp *[]E, sc *loadScratch) {
	n := len(run)
	if n < radixFrom {
		slices.SortStableFunc(run, func(a, b E) int { return cmp.Compare(sortKey(at(&a)), sortKey(at(&b))) })
		return
	}
	if cap(sc.keys) < n {
		sc.keys, sc.tmpKeys = make([]uint64, n), make([]uint64, n)
	}
	if cap(*tmp) < n {
		*tmp = make([]E, n)
	}
	keys := sc.keys[:n]
	for i := range run {
		keys[i] = sortKey(at(&run[i]))
	}
	sortByKeys(run, keys, (*tmp)[:n], sc.tmpKeys[:n])
}

// sortTies orders the placed 429s of each run of equal intended times
// (run sorted by them) by byPlaced: the whole then is in byPlaced order.
func sortTies(run []placed) {
	for i := 0; i < len(run); {
		j := i + 1
		for j < len(run) && run[j].at == run[i].at {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(run[i:j], byPlaced)
		}
		i = j
	}
}

// arrivalsSorted is slices.IsSortedFunc(as, byArrival), without a call
// per row: a block's rows are mostly in order already.
func arrivalsSorted(as []arrival) bool {
	for i := 1; i < len(as); i++ {
		if as[i].at < as[i-1].at {
			return false
		}
	}
	return true
}

// cut returns es split by their timeline (tls, the same length) into n
// runs of exactly their size, each in the order counted.
func cut[E any](es []E, tls []int32, n int) [][]E {
	if len(es) == 0 {
		return nil
	}
	counts := make([]int, n)
	for _, tl := range tls {
		counts[tl]++
	}
	runs := make([][]E, n)
	if one := tls[0]; counts[one] == len(es) {
		// A block of one timeline, the common case: one copy (es is
		// scratch, reused), not an append per row.
		runs[one] = append(make([]E, 0, len(es)), es...)
		return runs
	}
	for i, c := range counts {
		if c > 0 {
			runs[i] = make([]E, 0, c)
		}
	}
	for i, e := range es {
		runs[tls[i]] = append(runs[tls[i]], e)
	}
	return runs
}

// absorb adds o's timelines to l's, o's rows after l's; remap renumbers
// o's groups (o's number to l's Tally's). o is not used afterwards.
func (l *loadTally) absorb(o *loadTally, remap []int32) {
	if l.phase == loadDropped {
		return
	}
	if o.phase == loadDropped {
		l.drop()
		return
	}
	l.seal()
	o.seal()
	l.unplaced += o.unplaced
	for _, ot := range o.timelines {
		for _, ps := range ot.placed {
			for i := range ps {
				ps[i].group = remap[ps[i].group]
			}
		}
		// o's rows are a block's (o has no input of its own: they are
		// pinned) or another Tally's: they are kept as l keeps the rows of
		// the input it reads.
		runs, counted := append(ot.arrivals, ot.pinned...), ot.counted
		tl := l.byKey[ot.key]
		if tl == nil {
			if len(l.timelines) >= MaxLoadTimelines {
				l.drop()
				return
			}
			ot.arrivals, ot.pinned, ot.reread, ot.counted = nil, nil, 0, 0
			l.adopt(ot)
			tl = ot
		} else {
			tl.placed = append(tl.placed, ot.placed...)
			tl.promptSum += ot.promptSum
			tl.promptN += ot.promptN
			tl.noBudget += ot.noBudget
		}
		for _, run := range runs {
			l.keep(tl, run)
		}
		// Rows counted but not kept: o counted a block after the second
		// pass was taken (spilled), which only an input that can be read
		// again sets, and only while it is read.
		tl.reread += counted
	}
	l.spill()
}

// keep keeps a sorted run of tl's rows, of the input being read: pinned
// when it cannot be read again, else kept until the second pass counts
// its windows instead.
func (l *loadTally) keep(tl *loadTimeline, run []arrival) {
	switch {
	case !l.rereadable():
		tl.pinned = append(tl.pinned, run)
	case l.phase == loadSpilled:
		tl.reread += int64(len(run))
	default:
		tl.arrivals = append(tl.arrivals, run)
		l.kept += len(run)
	}
}

// spill stops keeping the rows of inputs that can be read again once more
// than maxKept are kept: from then on their windows are counted by a
// second pass (reread.go), which reads the input being read from the
// block after the one that brought them past (readResults notes its line:
// inputSpilling), and the inputs after it whole. The rows kept stay, and
// are counted from memory: at most maxKept and a block's.
func (l *loadTally) spill() {
	if l.phase != loadKeeping || l.kept <= l.maxKept {
		return
	}
	l.phase = loadSpilled
	if l.input == inputKept {
		l.input = inputSpilling
	}
	if l.spilled != nil {
		l.spilled.Store(true)
	}
}

// warning says why the picture was left out, if it was.
func (l *loadTally) warning() string {
	if l == nil || l.phase != loadDropped {
		return ""
	}
	return fmt.Sprintf("the inputs hold more than %d timelines (run × group × shape); the picture of advised waits against offered load is left out", MaxLoadTimelines)
}

// inOrder returns the elements of rs, each run sorted by by, as runs
// that follow each other in that order: rs itself when each run starts
// at or after the end of the one before (a file whose blocks do not
// overlap), else one merged run. A run that starts before the end of the
// ones before it is merged into their tail (for a results file, the rows
// of a request's latency); a tail longer than a few runs (files whose
// times are far from sorted) makes it sort the whole instead, so the work
// stays O(n log n) at worst and O(n) for a results file.
func inOrder[E any](rs [][]E, by func(a, b E) int) [][]E {
	ordered, n := true, 0
	var last *E
	for _, r := range rs {
		if len(r) == 0 {
			continue
		}
		if last != nil && by(*last, r[0]) > 0 {
			ordered = false
		}
		last = &r[len(r)-1]
		n += len(r)
	}
	if ordered {
		return rs
	}
	out := make([]E, 0, n)
	var tail []E
	resort := false
	for _, r := range rs {
		switch {
		case len(r) == 0:
			continue
		case resort || len(out) == 0 || by(out[len(out)-1], r[0]) <= 0:
			out = append(out, r...)
			continue
		}
		p := sort.Search(len(out), func(i int) bool { return by(out[i], r[0]) > 0 })
		if len(out)-p > 4*len(r)+1024 {
			out = append(out, r...)
			resort = true
			continue
		}
		tail = append(tail[:0], out[p:]...)
		out = out[:p]
		i, j := 0, 0
		for i < len(tail) && j < len(r) {
			if by(r[j], tail[i]) < 0 {
				out = append(out, r[j])
				j++
			} else {
				out = append(out, tail[i])
				i++
			}
		}
		out = append(append(out, tail[i:]...), r[j:]...)
	}
	if resort {
		slices.SortFunc(out, by)
	}
	return [][]E{out}
}

// cursor walks runs in order, element by element.
type cursor[E any] struct {
	runs   [][]E // the runs after the current one
	cur    []E   // the rest of the current run
	passed int   // elements walked past
}

// at returns the element under c, or nil at the end.
func (c *cursor[E]) at() *E {
	for len(c.cur) == 0 {
		if len(c.runs) == 0 {
			return nil
		}
		c.cur, c.runs = c.runs[0], c.runs[1:]
	}
	return &c.cur[0]
}

// next moves c past the element under it (at must have returned it).
func (c *cursor[E]) next() { c.cur = c.cur[1:]; c.passed++ }

// overshoot computes Analysis.Overshoot (t.mu held): published maps raw
// group names to labels, labels are the Analysis's groups' labels, in
// order. It only reads the Tally, so it runs while the rest of the
// Analysis is made. Its error is the second pass's (reread.go): an input
// that can no longer be read, or that changed.
func (t *Tally) overshoot(published map[string]string, labels []string) (*Overshoot, error) {
	l := t.load
	if l == nil || l.phase == loadDropped || t.resultsFiles == 0 {
		return nil, nil
	}
	l.seal() // rows counted by this Tally itself (a live Tally, a block counted again)
	// A group's position in label order, by its number in the Tally.
	order := make(map[string]int, len(labels))
	for i, label := range labels {
		order[label] = i
	}
	rank := make([]int, len(t.byID))
	for i, g := range t.byID {
		rank[i] = order[published[g.raw]]
	}

	// Points go by group in label order, and within a group by timeline
	// in the order first read, then in byPlaced order — the same however
	// the inputs were cut into blocks. Counting each timeline's points per
	// group first lets every timeline write its own at their places, on
	// every core.
	G := len(labels)
	placedRuns := make([][][]placed, len(l.timelines))
	counts := make([]int, len(l.timelines)*G)
	perGroup := make([]int, G)
	for ti, tl := range l.timelines {
		placedRuns[ti] = inOrder(tl.placed, byPlaced)
		for _, run := range placedRuns[ti] {
			for _, p := range run {
				counts[ti*G+rank[p.group]]++
				perGroup[rank[p.group]]++
			}
		}
	}
	o := &Overshoot{Window: l.window, Unplaced: l.unplaced}
	var spans [][2]int
	pos := 0
	for g, n := range perGroup {
		if n == 0 {
			continue
		}
		o.Groups = append(o.Groups, GroupLoad{Label: labels[g]})
		spans = append(spans, [2]int{pos, pos + n})
		for ti := range l.timelines {
			c := counts[ti*G+g]
			counts[ti*G+g] = pos // from now on, where the timeline's next point of g goes
			pos += c
		}
	}
	window := float64(l.window) / float64(time.Millisecond)
	var sums [][]windowSum // with a second pass, each timeline's windows, in the order of its points
	if l.phase == loadSpilled {
		var err error
		if sums, err = l.windowSums(placedRuns, window); err != nil {
			return nil, err
		}
	}
	points := make([]LoadPoint, pos)
	parallel(len(l.timelines), func(ti int) {
		var ws []windowSum
		if sums != nil {
			ws = sums[ti]
		}
		tl := l.timelines[ti]
		tl.place(placedRuns[ti], ws, window, rank, counts[ti*G:(ti+1)*G], points)
		if t.final { // its rows are placed: let them go before the trends are ranked
			tl.arrivals, tl.pinned, tl.placed, placedRuns[ti] = nil, nil, nil, nil
		}
	})
	// Each group's trends apart, on every core: ranking and medians are
	// most of the work.
	parallel(len(spans), func(gi int) {
		g := &o.Groups[gi]
		g.Points = points[spans[gi][0]:spans[gi][1]:spans[gi][1]]
		g.trends()
	})
	return o, nil
}

// parallel calls do(0) … do(n−1), at most as many at once as there are
// cores, and returns when all have returned.
func parallel(n int, do func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			do(i)
		})
	}
	wg.Wait()
}

// place writes a LoadPoint for each usable 429 of tl (ps: its runs, in
// order): the rows intended in the window (ms) up to it, per second. A
// point of the group numbered p.group goes to points[next[rank[p.group]]],
// and next moves on. sums, when not nil, are the windows' sums counted by
// the second pass, one per point in order; else they are counted here
// from the kept rows.
func (tl *loadTimeline) place(ps [][]placed, sums []windowSum, window float64, rank, next []int, points []LoadPoint) {
	if len(ps) == 0 {
		return // no point: nothing to count
	}
	runs := tl.arrivals
	if len(tl.pinned) > 0 {
		runs = append(slices.Clip(runs), tl.pinned...)
	}
	if sums != nil {
		runs = nil
	}
	as := inOrder(runs, byArrival)
	budget := tl.noBudget == 0 && tl.promptN > 0
	meanPrompt := 0.0
	if tl.promptN > 0 {
		meanPrompt = float64(tl.promptSum) / float64(tl.promptN)
	}
	// The window (at − window, at] slides forward over the arrivals, its
	// sums kept in integers so that a long run adds and removes exactly.
	lo, hi := cursor[arrival]{runs: as}, cursor[arrival]{runs: as}
	var budgets, unprompted int64
	k := 0 // the point's number on tl
	for _, run := range ps {
		for _, p := range run {
			var n int64
			if sums != nil {
				n, budgets, unprompted = sums[k].n, sums[k].budgets, sums[k].unprompted
				k++
			} else {
				for a := hi.at(); a != nil && a.at <= p.at; a = hi.at() {
					budgets += int64(a.budget)
					unprompted += int64(a.unprompted)
					hi.next()
				}
				start := p.at - window
				for a := lo.at(); lo.passed < hi.passed && a.at <= start; a = lo.at() {
					budgets -= int64(a.budget)
					unprompted -= int64(a.unprompted)
					lo.next()
				}
				n = int64(hi.passed - lo.passed)
			}
			tokens := -1.0
			if budget {
				tokens = (float64(budgets) + float64(unprompted)*meanPrompt) * 1000 / window
			}
			g := rank[p.group]
			points[next[g]] = LoadPoint{RequestsPerSec: float64(n) * 1000 / window, TokensPerSec: tokens, WaitMS: p.waitMS, UtilizationPct: p.utilPct}
			next[g]++
		}
	}
}

// trends describes the group's placed 429s (its Points): the three
// measures at once, on every core, the ranks of the waits made once for
// the measures every point has (a group may hold millions of 429s).
func (g *GroupLoad) trends() {
	points := g.Points
	n := len(points)
	waits := make([]float64, n)
	for i := range points {
		waits[i] = points[i].WaitMS
	}
	var all []float64 // the ranks of every point's wait
	var once sync.Once
	measures := [...]struct {
		of     func(*LoadPoint) float64
		spread float64
		trend  *Trend
	}{
		{func(p *LoadPoint) float64 { return p.RequestsPerSec }, MinLoadSpread, &g.Requests},
		{func(p *LoadPoint) float64 { return p.TokensPerSec }, MinLoadSpread, &g.Tokens},
		{func(p *LoadPoint) float64 { return p.UtilizationPct }, 0, &g.Utilization},
	}
	parallel(len(measures), func(i int) {
		m := measures[i]
		x, w := make([]float64, 0, n), waits
		for k := range points {
			if v := m.of(&points[k]); v >= 0 {
				x = append(x, v)
			}
		}
		if len(x) < n { // the waits of the points with the measure
			w = make([]float64, 0, len(x))
			for k := range points {
				if m.of(&points[k]) >= 0 {
					w = append(w, points[k].WaitMS)
				}
			}
		}
		var rk ranker
		waitRanks := func() []float64 {
			if len(w) < n {
				r := make([]float64, len(w))
				rk.ranks(w, r)
				return r
			}
			once.Do(func() {
				all = make([]float64, n)
				rk.ranks(waits, all)
			})
			return all
		}
		*m.trend = trendOf(x, w, m.spread, waitRanks, make([]float64, len(x)), &rk)
	})
}

// sealLoad sorts what t counted of the overshoot picture since the last
// seal: a block's worker calls it, so the sorting is done on every core.
func (t *Tally) sealLoad() {
	if t.load != nil {
		t.load.seal()
	}
}
