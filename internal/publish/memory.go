package publish

import (
	"io"
	"math"
	"runtime/debug"
	"runtime/metrics"
)

// The memory of an analysis is its data: the rows the overshoot picture
// keeps (16 bytes each), each 429's place (32), each wait (8) and each
// success's latencies (16), and at the peak, while the 429s are placed
// and ranked, about 1.3–1.5 times what the read left. The collector's
// default lets the heap grow to twice what was live at its last
// collection, and gives freed pages back lazily: 1 M rows with 40% 429s,
// 58–67 MB live at the peak, took 135–150 MB of RSS. A soft memory limit
// (runtime/debug.SetMemoryLimit) keeps the heap near the data and makes
// the collector give pages back; it costs no time here, since the data
// are long slices of numbers the collector does not scan. The collector
// lowered instead (GOGC 25) took 101–111 MB and 50 ms more of its time
// (bench/README.md).
//
// The limit is the expected peak: half the input size (an analysis of
// ptuprobe results peaked at 0.41 bytes per byte read for a 429-heavy
// file of today's columns, 0.54 for the developers' shorter rows), at
// least minMemoryBudget. A limit the data outgrow would make the
// collector run and run, so the limit follows the live heap up: never
// below liveHeadroom times what was live at the last collection, looked
// at as the inputs are read, and analysisHeadroom times once they are
// (the peak to come). A limit set before (GOMEMLIMIT, a container's) is
// left as it is.
const (
	minMemoryBudget  = 64 << 20
	liveHeadroom     = 1.5
	analysisHeadroom = 1.75
	// budgetEvery is how many bytes are read between looks at the live
	// heap: a read of a file of 100 MB looks a dozen times.
	budgetEvery = 8 << 20
)

// memoryBudget is the soft memory limit of one analysis.
type memoryBudget struct {
	limit  int64 // 0: the limit is someone else's, left alone
	before int64
	live   func() int64 // the live heap at the last collection
	set    func(int64) int64
}

// newMemoryBudget sets the limit for an analysis of inputs bytes; restore
// puts back the limit there was before.
func newMemoryBudget(inputs int64) (b *memoryBudget, restore func()) {
	b = &memoryBudget{live: liveHeap, set: debug.SetMemoryLimit}
	if b.before = b.set(-1); b.before != math.MaxInt64 {
		return b, func() {}
	}
	b.limit = max(minMemoryBudget, inputs/2)
	b.set(b.limit)
	return b, func() { b.set(b.before) }
}

// follow raises the limit to headroom times the live heap, if that is
// above it.
func (b *memoryBudget) follow(headroom float64) {
	if b.limit == 0 {
		return
	}
	if want := int64(headroom * float64(b.live())); want > b.limit {
		b.limit = want
		b.set(want)
	}
}

// reader is r, looking at the live heap every budgetEvery bytes read.
func (b *memoryBudget) reader(r io.Reader) io.Reader {
	if b.limit == 0 {
		return r
	}
	return &budgetReader{r: r, b: b}
}

type budgetReader struct {
	r    io.Reader
	b    *memoryBudget
	read int64 // since the last look
}

func (br *budgetReader) Read(p []byte) (int, error) {
	n, err := br.r.Read(p)
	if br.read += int64(n); br.read >= budgetEvery {
		br.read = 0
		br.b.follow(liveHeadroom)
	}
	return n, err
}

// liveHeap is the heap that was live at the last collection.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}
