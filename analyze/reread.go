package analyze

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"

	"github.com/ptuprobe/ptuprobe/internal/rowdecode"
	"github.com/ptuprobe/ptuprobe/results"
)

// The second pass of the overshoot picture (overshoot.go).
//
// Placing a 429 needs the rows of its window, and a results file is read
// once, in blocks, before the 429s of a timeline are all known: so the
// picture keeps every row's arrival (16 bytes) until the analysis. Past
// MaxKeptArrivals rows of inputs that can be read again (Input.At: a
// regular file), it keeps no more, only what the 429s need; the analysis
// then knows each timeline's points — their intended times, sorted — and
// reads those inputs again, on every core, block by block as the first
// read did: the one being read when it stopped from the block after the
// last it kept (rereadInput.from), those after it whole.
//
// Each row x of a timeline is in the windows of the points q with
// q − W < x ≤ q, which are consecutive: from the first point with x ≤ q to
// the last with q − W < x, the very comparisons the sliding window of
// place makes (q − W computed alike), found by searching out from the
// previous row's (rows are nearly sorted). Its count, token budget and
// missing prompt are added at the first of them and taken away after the
// last (a difference array; consecutive rows with the same points are
// summed first), and the prefix sums are each point's window: the same
// integers the sliding window sums, so the same Analysis, bit for bit.
// The rows kept — of inputs that cannot be read again (a pipe), whatever
// their number, and of the others up to the stop — are counted into the
// same sums.
//
// The second pass checks that it reads the bytes the first read read (a
// CRC-32C of them, firstRead) and finds, timeline by timeline, as many
// rows as the first read counted: a file rewritten in between — even in
// place, to the same size and row counts — is an error, not a wrong
// picture. A file that has only grown since is read to its old end.

// MaxKeptArrivals is how many rows of inputs that can be read again the
// overshoot picture keeps (16 bytes each: 32 MB, and a block's more)
// before it keeps no more and counts the windows of the others by a
// second read of those inputs at the analysis. The trade: below it one
// read is cheapest (a million rows' picture costs a few milliseconds on
// top of the read, where a second read would cost about 60 ms, and save
// 5 MB); above it the second read costs a little over half the first (it
// decodes 8 columns, and checks no other cell of a file whose rows all
// read), and memory stops growing with the file: it grows with the 429s
// kept, as the rest of an Analysis does, plus these 32 MB at most. At 4 M
// rows a 10 M-row file reads 0.1 s faster, for 35 MB more.
const MaxKeptArrivals = 2_000_000

// rereadColumns are the columns the second pass reads: a row's timeline,
// intended time and token budget, and whether it was sent (a row not sent
// offered no load).
var rereadColumns = []string{"shape", "group", "run_id", "worker", "intended_ms", "prompt_tokens", "prompt_tokens_sent", "max_tokens", "decision"}

// firstRead is an input's At as Tally.Read hands it on: the reader, and
// the first read's count and checksum of the bytes it read.
type firstRead struct {
	io.ReaderAt
	src *ioErrReader
}

// rereadInput is an input the second pass reads again: its first size
// bytes, which are what the first read read.
type rereadInput struct {
	at   io.ReaderAt
	size int64
	name string
	from int // the first line to count: the lines before were kept
	// readable: none of its rows failed to read, so the second read need
	// check only the columns it reads (rowdecode.NewReadableDecoder).
	readable bool
}

// windowSum is what the window before a point holds, or what rows add to
// the windows of a span of points: rows, their budgets (prompt_tokens +
// max_tokens, absent ones counted 0) and the rows without prompt_tokens.
type windowSum struct{ n, budgets, unprompted int64 }

func (w *windowSum) add(o windowSum) {
	w.n += o.n
	w.budgets += o.budgets
	w.unprompted += o.unprompted
}

func (w *windowSum) sub(o windowSum) {
	w.n -= o.n
	w.budgets -= o.budgets
	w.unprompted -= o.unprompted
}

// span is rows of timeline tl that are in the windows of its points i to
// j−1, summed.
type span struct {
	tl, i, j int32
	sum      windowSum
}

// secondPass is the state shared by the second pass's workers.
type secondPass struct {
	l      *loadTally
	at     [][]float64 // by timeline: its points' intended times, in order
	window float64
	mu     sync.Mutex
	diff   [][]windowSum // by timeline: len(at)+1 differences
	rows   []int64       // by timeline: rows found with an intended time
}

// windowSums counts the window before every point of every timeline of l
// (placedRuns: each timeline's points, in order) from the rows of the
// inputs read again and the rows kept in memory, one sum per point.
func (l *loadTally) windowSums(placedRuns [][][]placed, window float64) ([][]windowSum, error) {
	if l.partial {
		return nil, errors.New("an input of ptuprobe results was not read whole: the picture of advised waits against offered load cannot read it again")
	}
	s := &secondPass{l: l, window: window, at: make([][]float64, len(l.timelines)),
		diff: make([][]windowSum, len(l.timelines)), rows: make([]int64, len(l.timelines))}
	for ti, runs := range placedRuns {
		n := 0
		for _, run := range runs {
			n += len(run)
		}
		if n == 0 {
			continue
		}
		at := make([]float64, 0, n)
		for _, run := range runs {
			for i := range run {
				at = append(at, run[i].at)
			}
		}
		s.at[ti], s.diff[ti] = at, make([]windowSum, n+1)
	}
	// Rows kept, timeline by timeline: of inputs that cannot be read
	// again, and those of the others before the second pass was taken.
	parallel(len(l.timelines), func(ti int) {
		at, d := s.at[ti], s.diff[ti]
		if len(at) == 0 {
			return
		}
		hi, hs := 0, 0
		tl := l.timelines[ti]
		for _, run := range append(slices.Clip(tl.arrivals), tl.pinned...) {
			for _, a := range run {
				i, j := s.points(at, a.at, &hi, &hs)
				if i < j {
					one := windowSum{1, int64(a.budget), int64(a.unprompted)}
					d[i].add(one)
					d[j].sub(one)
				}
			}
		}
	})
	for _, in := range l.inputs {
		if err := s.read(in); err != nil {
			return nil, err
		}
	}
	for ti, tl := range l.timelines {
		if s.rows[ti] != tl.reread {
			return nil, fmt.Errorf("the inputs changed while they were analyzed: read again for the picture of advised waits against offered load, they hold %d rows of run %q, group %q, shape %q, not %d",
				s.rows[ti], clip(tl.key.run, 64), clip(tl.key.group, 64), tl.key.shape, tl.reread)
		}
	}
	sums := make([][]windowSum, len(l.timelines))
	for ti, d := range s.diff {
		if len(d) == 0 {
			continue
		}
		var w windowSum
		for k := range d[:len(d)-1] {
			w.add(d[k])
			d[k] = w
		}
		sums[ti] = d[:len(d)-1]
	}
	return sums, nil
}

// points returns the points of a timeline (at: their intended times,
// sorted) whose windows hold a row intended at x: i to j−1, the points
// with x ≤ q and q − window < x. hi and hs are where the search for each
// starts, and are moved to what it finds.
func (s *secondPass) points(at []float64, x float64, hi, hs *int) (i, j int) {
	*hi = firstAtLeast(at, x, 0, *hi)
	*hs = firstAtLeast(at, x, s.window, *hs)
	return *hi, *hs
}

// firstAtLeast returns the first k with at[k] − sub ≥ x, len(at) if none,
// looking out from hint (at is sorted; x and at are not NaN). With sub 0,
// at[k] − sub is at[k]; with the window, it is the start of point k's
// window as place computes it, and at[k] − sub ≥ x says x is not in it.
func firstAtLeast(at []float64, x, sub float64, hint int) int {
	n := len(at)
	hint = min(max(hint, 0), n)
	var lo, hi int // the answer is in [lo, hi], and hi is n or holds
	switch {
	case hint < n && at[hint]-sub < x: // after hint
		lo, hi = hint+1, n
		for d := 1; hint+d < n; d *= 2 {
			if at[hint+d]-sub >= x {
				hi = hint + d
				break
			}
			lo = hint + d + 1
		}
	case hint > 0 && at[hint-1]-sub >= x: // before hint
		lo, hi = 0, hint-1
		for d := 2; hint-d >= 0; d *= 2 {
			if at[hint-d]-sub < x {
				lo = hint - d + 1
				break
			}
			hi = hint - d
		}
	default:
		return hint
	}
	return lo + sort.Search(hi-lo, func(k int) bool { return at[lo+k]-sub >= x })
}

// read reads one input again and counts its rows into s.
func (s *secondPass) read(in rereadInput) error {
	fail := func(err error) error {
		return fmt.Errorf("read %s again for the picture of advised waits against offered load: %w", in.name, err)
	}
	src := &ioErrReader{r: io.NewSectionReader(in.at, 0, in.size)}
	first, _ := in.at.(*firstRead)
	src.summed = first != nil
	rd, err := results.NewReader(src, in.name)
	if err != nil {
		return fail(err)
	}
	decoder := rowdecode.NewDecoder[results.Record]
	if in.readable {
		decoder = rowdecode.NewReadableDecoder[results.Record]
	}
	dec, err := decoder(rd, rereadColumns...)
	if err != nil {
		return fail(err)
	}
	workers := workers()
	jobs := make(chan rowdecode.Block)
	free := make(chan []byte, 2*workers)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		w := s.worker(dec.Clone(), in.from)
		wg.Go(func() {
			var failed error
			for b := range jobs {
				if failed == nil {
					failed = w.count(b)
				}
				free <- b.Text[:cap(b.Text)]
			}
			w.done()
			errs <- failed
		})
	}
	for range 2 * workers {
		free <- make([]byte, blockSize())
	}
	var end error
	for {
		blk, err := rowdecode.ReadBlock(rd, <-free)
		if err != nil {
			end = err
			break
		}
		if rd.Line() < in.from { // every line of it was kept
			free <- blk.Text[:cap(blk.Text)]
			continue
		}
		jobs <- blk
	}
	close(jobs)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return fail(err)
		}
	}
	switch {
	case src.err != nil:
		return fail(src.err)
	case !errors.Is(end, io.EOF):
		return fail(end)
	case first != nil && (src.n != in.size || src.sum != first.src.sum):
		return fail(fmt.Errorf("the inputs changed while they were analyzed: its first %d bytes are not the ones read before (rewritten in place?)", in.size))
	}
	return nil
}

// passWorker counts blocks of rows into a secondPass: the spans of a
// block are summed apart and added to the differences at its end.
type passWorker struct {
	s       *secondPass
	dec     rowdecode.Decoder[results.Record]
	from    int // the first line to count
	recent  recentTimelines
	open    []span  // by timeline: the span its rows are summed into; tl −1 when none
	touched []int32 // the timelines of the block with a span
	hints   [][2]int
	rows    []int64
	spans   []span
}

func (s *secondPass) worker(dec rowdecode.Decoder[results.Record], from int) *passWorker {
	n := len(s.l.timelines)
	w := &passWorker{s: s, dec: dec, from: from, open: make([]span, n), hints: make([][2]int, n), rows: make([]int64, n)}
	for i := range w.open {
		w.open[i].tl = -1
	}
	return w
}

// count counts the rows of one block.
func (w *passWorker) count(b rowdecode.Block) error {
	s := w.s
	rec := results.Blank()
	for line, err := range w.dec.Rows(b, &rec) {
		if line < w.from {
			continue // kept
		}
		if err != nil {
			if errors.Is(err, results.ErrLineTooLong) {
				return err
			}
			continue // unreadable, as the first read found it
		}
		if rec.IntendedMS < 0 || rec.NotSent() {
			continue
		}
		ti := w.timeline(&rec)
		if ti < 0 {
			return fmt.Errorf("run %q, group %q, shape %q: a timeline the first read did not find (the file changed)", clip(rec.RunID, 64), clip(rec.Group, 64), clip(rec.Shape, 64))
		}
		w.rows[ti]++
		at := s.at[ti]
		if len(at) == 0 {
			continue
		}
		h := &w.hints[ti]
		i, j := s.points(at, rec.IntendedMS, &h[0], &h[1])
		if i == j {
			continue
		}
		a := arrivalOf(&rec)
		sp := &w.open[ti]
		switch {
		case sp.tl < 0:
			w.touched = append(w.touched, int32(ti))
			*sp = span{tl: int32(ti), i: int32(i), j: int32(j)}
		case int(sp.i) != i || int(sp.j) != j:
			w.spans = append(w.spans, *sp)
			*sp = span{tl: int32(ti), i: int32(i), j: int32(j)}
		}
		sp.sum.n++
		sp.sum.budgets += int64(a.budget)
		sp.sum.unprompted += int64(a.unprompted)
	}
	for _, ti := range w.touched {
		w.spans = append(w.spans, w.open[ti])
		w.open[ti].tl = -1
	}
	w.touched = w.touched[:0]
	s.mu.Lock()
	for _, sp := range w.spans {
		d := s.diff[sp.tl]
		d[sp.i].add(sp.sum)
		d[sp.j].sub(sp.sum)
	}
	s.mu.Unlock()
	w.spans = w.spans[:0]
	return nil
}

// done adds the rows w found to s's.
func (w *passWorker) done() {
	w.s.mu.Lock()
	for i, n := range w.rows {
		w.s.rows[i] += n
	}
	w.s.mu.Unlock()
}

// timeline returns the number of rec's timeline, −1 if the first read did
// not find it; as loadTally.timeline finds it.
func (w *passWorker) timeline(rec *results.Record) int {
	if tl := w.recent.find(rec); tl != nil {
		return int(tl.index)
	}
	tl := w.s.l.byKey[keyOf(rec)]
	if tl == nil {
		return -1
	}
	w.recent.note(rec, tl)
	return int(tl.index)
}
