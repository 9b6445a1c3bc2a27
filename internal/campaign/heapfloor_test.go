package campaign

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFloorPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live uint64
		base int
		want int
	}{
		{0, 100, 400},         // no collection yet: the collector's least goal, 16 MiB
		{1 * mib, 100, 400},   // 5 MiB by the percent, 16 MiB by the least goal
		{4 * mib, 100, 300},   // 4 × 4 = 16 MiB
		{6 * mib, 100, 166},   // 6 × 2.66 = 16 MiB
		{7 * mib, 100, 128},   // 7 × 2.28 = 16 MiB
		{8 * mib, 100, 100},   // half the floor: Go's own goal, 16 MiB
		{20 * mib, 100, 100},  // streams open: Go's own
		{4 * mib, 500, 500},   // a larger percent of the process's stays
		{20 * mib, 50, 50},    // and a smaller one above the floor
		{2 * mib, 50, 400},    // the floor's under it
		{8*mib - 1, 100, 100}, // just under half: 100.000…
	} {
		if got := floorPercent(c.live, 16*mib, c.base); got != c.want {
			t.Errorf("floorPercent(%d MiB, base %d) = %d, want %d", c.live/mib, c.base, got, c.want)
		}
	}
}

// TestHeapFloorSetsAndRestores: while a run is under way the percent is
// the floor's, set again after each collection; once the last of two
// overlapping runs ends, the process's own percent is back.
func TestHeapFloorSetsAndRestores(t *testing.T) {
	if heapFloors.runs != 0 {
		t.Fatal("a floor is already under way")
	}
	t.Setenv("GOGC", "") // the floor stands aside for a user's GOGC
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	ticks := make(chan int, 64)
	heapFloors.mu.Lock()
	heapFloors.adjusted = func(p int) {
		select {
		case ticks <- p:
		default:
		}
	}
	heapFloors.mu.Unlock()
	defer func() {
		heapFloors.mu.Lock()
		heapFloors.adjusted = nil
		heapFloors.mu.Unlock()
	}()

	stop1 := startHeapFloor(HeapFloor)
	if p := <-ticks; p <= 100 {
		t.Fatalf("the first setting is %d, want above 100 (this test's live heap is small)", p)
	}
	stop2 := startHeapFloor(HeapFloor) // a second run: nothing more to set up
	runtime.GC()
	if p := <-ticks; p <= 100 {
		t.Fatalf("after a collection the percent is %d, want above 100", p)
	}
	stop1()
	stop1() // twice is once
	if got := debug.SetGCPercent(-1); got <= 100 {
		t.Fatalf("with one run left the percent is %d, want the floor's", got)
	}
	debug.SetGCPercent(100)
	stop2()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("after the last run the percent is %d, want 100", got)
	}
	runtime.GC() // the last tick finds no run and stops
}

// TestHeapFloorLeavesGOGC: a user's GOGC is theirs.
func TestHeapFloorLeavesGOGC(t *testing.T) {
	t.Setenv("GOGC", "100")
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	stop := startHeapFloor(HeapFloor)
	defer stop()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("with GOGC set the percent became %d", got)
	}
}
