package publish

import (
	"bytes"
	"io"
	"math"
	"runtime/debug"
	"testing"
)

// TestMemoryBudget: the limit starts at half the inputs (at least
// minMemoryBudget), follows the live heap up as the inputs are read and
// never comes down; a limit set before is left alone, and the one there
// was is put back.
func TestMemoryBudget(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)

	debug.SetMemoryLimit(math.MaxInt64)
	b, restore := newMemoryBudget(1 << 30)
	if got := debug.SetMemoryLimit(-1); b.limit != 1<<29 || got != 1<<29 {
		t.Errorf("limit %d (runtime %d), want half of 1 GiB", b.limit, got)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("restored limit %d, want none", got)
	}
	if b, restore := newMemoryBudget(1 << 20); b.limit != minMemoryBudget {
		t.Errorf("limit of a small input %d, want %d", b.limit, minMemoryBudget)
	} else {
		restore()
	}

	var set []int64
	live := int64(50 << 20)
	b = &memoryBudget{limit: minMemoryBudget, live: func() int64 { return live }, set: func(v int64) int64 { set = append(set, v); return 0 }}
	r := b.reader(bytes.NewReader(make([]byte, 3*budgetEvery)))
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Fatal(err)
	}
	if want := int64(liveHeadroom * float64(50<<20)); b.limit != want || len(set) != 1 {
		t.Errorf("limit %d after the read (set %v), want %d: 1.5 times the live heap, once", b.limit, set, want)
	}
	live = 10 << 20
	b.follow(analysisHeadroom)
	if want := int64(liveHeadroom * float64(50<<20)); b.limit != want {
		t.Errorf("limit %d, want it kept at %d as the live heap fell", b.limit, want)
	}

	debug.SetMemoryLimit(200 << 20) // GOMEMLIMIT, a container's
	b, restore = newMemoryBudget(1 << 30)
	b.follow(analysisHeadroom)
	restore()
	if got := debug.SetMemoryLimit(-1); b.limit != 0 || got != 200<<20 {
		t.Errorf("a limit set before became %d (budget %d), want it left at 200 MiB", got, b.limit)
	}
}
