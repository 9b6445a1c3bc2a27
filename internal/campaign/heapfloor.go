package campaign

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// HeapFloor is the least heap goal a traffic run keeps: 16 MiB. Go's
// collector aims at twice the live heap, and a run's live heap is a few
// MB (the requests in flight and their connections), so at thousands of
// requests a second it collected several times a second: a tenth of the
// CPU at 2,000 requests a second over HTTP and more at 5,000
// (bench/README.md, round 9). While the live heap is under half the
// floor, the run collects when the heap reaches the floor instead; from
// half the floor up (8 MiB: some thousand open streams) the goal is Go's
// own, so memory per open stream is what it was. The price is the heap
// grown up to the floor between collections at a low live heap: some
// 12 MB more resident at 2,000 requests a second.
const HeapFloor = 16 << 20

// heapMinimum is the collector's least heap goal at a GC percent of
// 100 (the runtime's defaultHeapMinimum): at percent p it is
// heapMinimum × p/100, so a percent past floor × 100/heapMinimum would
// put the goal over the floor whatever the live heap.
const heapMinimum = 4 << 20

// floorPercent is the GC percent that puts the heap goal, the larger of
// live × (1 + percent/100) and heapMinimum × percent/100, at floor; base
// (the process's own percent) when that is less, or when the live heap
// is half the floor or more.
func floorPercent(live, floor uint64, base int) int {
	if live >= floor/2 {
		return base
	}
	p := int(floor * 100 / heapMinimum)
	if live > 0 {
		p = min(p, int((floor-live)*100/live))
	}
	return max(base, p)
}

// heapFloor is the floor of the runs under way in this process: the GC
// percent is one setting of the process's, so the first run to start
// sets it up and the last to end restores the percent it found.
type heapFloor struct {
	mu    sync.Mutex
	runs  int
	gen   int // the floor's generation: a tick of an ended one stops
	base  int
	floor uint64
	// adjusted, when set (by tests), is told the percent each tick set.
	adjusted func(percent int)
}

var heapFloors heapFloor

// startHeapFloor keeps the heap goal at least floor until the returned
// function is called: after every collection it sets the GC percent
// that puts the next goal at the floor (floorPercent). It does nothing
// when the user chose the collector's settings (GOGC or GOMEMLIMIT in the
// environment), nor when the percent is 0 or off.
func startHeapFloor(floor uint64) (stop func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	f := &heapFloors
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.runs == 0 {
		metrics.Read(percentSample)
		base := -1
		if percentSample[0].Value.Kind() == metrics.KindUint64 {
			base = int(percentSample[0].Value.Uint64())
		}
		if base <= 0 {
			return func() {}
		}
		f.base, f.floor = base, floor
		f.gen++
		f.adjustLocked()
		armFloor(f.gen)
	}
	f.runs++
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.runs--; f.runs == 0 {
				f.gen++
				debug.SetGCPercent(f.base)
			}
		})
	}
}

// floorTick is a collection's sign: unreachable at once, so its cleanup
// runs after the next collection (32 bytes: not one of the tiny objects
// a cleanup may never run for).
type floorTick struct{ _ [32]byte }

// armFloor sets the floor again after the next collection, while its
// generation is the floor's.
func armFloor(gen int) {
	runtime.AddCleanup(new(floorTick), func(gen int) {
		f := &heapFloors
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.runs == 0 || gen != f.gen {
			return
		}
		f.adjustLocked()
		armFloor(gen)
	}, gen)
}

// liveSample reads the heap the last collection marked live;
// percentSample the GC percent (0 when the collector is off).
var (
	liveSample    = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	percentSample = []metrics.Sample{{Name: "/gc/gogc:percent"}}
)

// adjustLocked sets the percent for the live heap now (f.mu held).
func (f *heapFloor) adjustLocked() {
	metrics.Read(liveSample)
	var live uint64
	if liveSample[0].Value.Kind() == metrics.KindUint64 {
		live = liveSample[0].Value.Uint64()
	}
	p := floorPercent(live, f.floor, f.base)
	debug.SetGCPercent(p)
	if f.adjusted != nil {
		f.adjusted(p)
	}
}
