package analyze

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ptuprobe/ptuprobe/internal/rowdecode"
	"github.com/ptuprobe/ptuprobe/results"
)

// Reading a ptuprobe results file on every core.
//
// The calling goroutine cuts the file into blocks of whole lines
// (rowdecode.ReadBlock), a few at a time; workers decode the rows of
// a block (a rowdecode.Decoder, which takes the rows ptuprobe writes by a
// fast path and any other row through the Reader's own decoding) and count
// them into a Tally of their own, with addRecord, as a sequential read
// would; the calling goroutine merges these tallies into the file's Tally
// in file order. What comes out is what reading the file row by row gives
// (TestParallelReadMatchesSequential), because:
//
//   - every count is a sum, the latest send a maximum, and the waits and
//     timeline points of a group are appended in file order;
//   - the overshoot picture's rows (overshoot.go) are kept per timeline as
//     sorted runs, a block's sorted by its worker (sealLoad), and merged
//     in file order at the analysis, whose points are then in an order
//     that does not depend on where the blocks were cut;
//   - line numbers are the file's own: a Block knows the number of its
//     first line, so the first MaxLineRefs unreadable rows and invalid
//     waits are the file's first, once merged in order;
//   - what ends a sequential read early ends a block early: a line over
//     results.MaxLine (every block before it is merged, then the rows of
//     its own block before it, then the error), and a group past
//     MaxRawGroups. The group limit is the Tally's, not a block's: a block
//     that brings it (or whose own tally overflowed) is counted again, row
//     by row, into the file's Tally, which stops at the very row a
//     sequential read stops at.
//
// Only the calling goroutine looks at the context, before it reads or
// merges each block: a cancel ends the read within a block's work (a few
// milliseconds), and Read returns only once no worker is left.
// maxWorkers bounds the goroutines that decode blocks, and so the memory
// of the blocks in flight (twice as many as workers).
const maxWorkers = 16

// blockSize is a little more than the longest line a block must be able
// to hold (results.LineCap: MaxLine, unless a test lowered it): about ten
// thousand rows of work per hand-over, and a bounded read-ahead.
func blockSize() int { return results.LineCap() + 64<<10 }

// analyzedColumns are the columns addRecord reads; a rowdecode.Decoder
// fills only them. TestAddRecordReadsAnalyzedColumns guards the list.
var analyzedColumns = []string{
	"shape", "group", "status", "error", "intended_ms", "sent_ms",
	"wait_ms", "wait_source", "spillover", "dialect", "worker",
	// the overshoot picture's (overshoot.go)
	"run_id", "prompt_tokens", "prompt_tokens_sent", "max_tokens", "utilization_pct",
	// the requests' outcomes and latencies (requests.go)
	"latency_ms", "ttfb_ms", "completion_tokens", "attempt", "decision",
	"ttft_ms", "itl_p50_ms", "itl_max_ms", "tpot_ms",
}

// block is one block of a results file on its way through the workers.
type block struct {
	rowdecode.Block
	buf  []byte        // the buffer Block.Text is a slice of, to reuse
	part *Tally        // its rows, counted
	stop error         // what ended the block early, as a sequential read would return it
	done chan struct{} // closed once part and stop are set
}

// workers is how many goroutines decode blocks.
func workers() int { return min(runtime.GOMAXPROCS(0), maxWorkers) }

// readResults streams the rows of a ptuprobe results file into t (t.mu
// held), on every core; see above. The overshoot picture follows the
// input through its states (loadTally.begin, absorbed, readWhole, end).
func (t *Tally) readResults(ctx context.Context, r io.Reader, src *ioErrReader, in Input) (err error) {
	rd, err := results.NewReader(r, in.Name)
	if err != nil {
		return badInput("%v", err)
	}
	dec, err := rowdecode.NewDecoder[results.Record](rd, analyzedColumns...)
	if err != nil {
		return err
	}
	unreadable := t.unreadable.Count
	var spilled *atomic.Bool // read by the workers, not t.load's: the reading goroutine writes t.load
	if l := t.load; l != nil {
		spilled = l.begin(in)
		defer func() { l.end(err) }()
	}
	end, err := t.readBlocks(ctx, rd, dec, in, spilled)
	switch {
	case err != nil:
		return err
	case src.err != nil:
		return fmt.Errorf("read %s: %w", in.Name, src.err)
	case errors.Is(end, results.ErrLineTooLong):
		return &BadInputError{Err: end}
	case !errors.Is(end, io.EOF):
		return end
	}
	if l := rd.Truncated(); l > 0 {
		t.truncated = append(t.truncated, LineRef{Input: in.Ordinal, Line: l})
	}
	if l := t.load; l != nil {
		l.readWhole(in, src.n, t.unreadable.Count == unreadable)
	}
	return nil
}

// readBlocks cuts rd into blocks, has the workers count them and merges
// them into t in file order. It returns what ended the reading (io.EOF,
// or the reader's error) once every block read is merged, or, as err,
// what ended it before: a cancel, or a block's error.
func (t *Tally) readBlocks(ctx context.Context, rd *results.Reader, dec rowdecode.Decoder[results.Record], in Input, spilled *atomic.Bool) (end, err error) {
	workers := workers()
	jobs, stop := t.countBlocks(workers, dec, in, spilled)
	// No worker outlives the read: the caller may close the input.
	defer stop()
	var queue []*block // read, not yet merged, in file order
	var free [][]byte  // buffers of merged blocks
	for end == nil || len(queue) > 0 {
		for end == nil && len(queue) < 2*workers {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			var buf []byte
			if n := len(free); n > 0 {
				buf, free = free[n-1], free[:n-1]
			} else {
				buf = make([]byte, blockSize())
			}
			blk, err := rowdecode.ReadBlock(rd, buf)
			if err != nil {
				end = err
				break
			}
			b := &block{Block: blk, buf: buf, done: make(chan struct{})}
			queue = append(queue, b)
			jobs <- b
		}
		if len(queue) == 0 {
			break
		}
		b := queue[0]
		queue[0], queue = nil, queue[1:] // let the merged block go
		<-b.done
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := t.merge(b, dec, in); err != nil {
			return nil, err
		}
		if t.load != nil {
			t.load.absorbed(b)
		}
		free = append(free, b.buf)
	}
	return end, nil
}

// countBlocks starts n workers that count the blocks sent on jobs, each
// into a Tally of its own (only counting the overshoot picture's rows
// once spilled is set); stop ends them and waits until they have.
func (t *Tally) countBlocks(n int, dec rowdecode.Decoder[results.Record], in Input, spilled *atomic.Bool) (jobs chan<- *block, stop func()) {
	ch := make(chan *block)
	var wg sync.WaitGroup
	for range n {
		dec := dec.Clone()
		wg.Go(func() {
			for b := range ch {
				b.part = t.fork()
				if spilled != nil && spilled.Load() && b.part.load != nil {
					b.part.load.onlyCount()
				}
				b.stop = b.part.count(dec, b.Block, in)
				b.part.sealLoad()
				close(b.done)
			}
		})
	}
	return ch, func() {
		close(ch)
		wg.Wait()
	}
}

// count counts the rows of one block into t, which is a worker's own
// Tally, or the file's (t.mu held). It returns what ends a sequential
// read at a row of the block, having counted the rows before it. It does
// not look at the context: the reading goroutine does, between blocks of
// a few milliseconds' work.
func (t *Tally) count(dec rowdecode.Decoder[results.Record], b rowdecode.Block, in Input) error {
	rec := results.Blank()
	for line, err := range dec.Rows(b, &rec) {
		if err != nil {
			if errors.Is(err, results.ErrLineTooLong) {
				return &BadInputError{Err: err}
			}
			t.unreadable.add(LineRef{Input: in.Ordinal, Line: line})
			continue
		}
		if rec.Is429() && rec.HasWait() && !usableWait(rec.WaitMS) {
			t.invalid.add(LineRef{Input: in.Ordinal, Line: line})
		}
		t.addRecord(&rec)
		if t.overflow != nil {
			return &BadInputError{Err: fmt.Errorf("%s line %d: %w", in.Name, line, errTooManyGroups)}
		}
	}
	return nil
}

// merge adds a counted block to t (t.mu held) and returns what ended the
// block early. A block that brings the groups past MaxRawGroups, or whose
// own tally overflowed, is counted again into t, which then stops at the
// row that brings the first group too many.
func (t *Tally) merge(b *block, dec rowdecode.Decoder[results.Record], in Input) error {
	if b.part.overflow != nil || t.newGroups(b.part)+len(t.groups) > MaxRawGroups {
		return t.count(dec, b.Block, in)
	}
	t.absorb(b.part)
	return b.stop
}
