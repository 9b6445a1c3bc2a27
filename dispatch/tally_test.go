package dispatch

import (
	"testing"

	"github.com/ptuprobe/ptuprobe/results"
)

func TestTally(t *testing.T) {
	t.Parallel()
	tl := NewTally()
	for i := 1; i <= 100; i++ {
		r := results.Blank()
		r.Status, r.WaitMS, r.IntendedMS, r.SentMS = 429, float64(i), 0, 0
		if i == 100 {
			r.SentMS = 25
		}
		tl.Observe(&r)
	}
	r := results.Blank()
	r.Error = results.ErrReset
	tl.Observe(&r)
	s := tl.Snapshot()
	if s.Done != 101 || s.N429 != 100 || s.Late != 1 || s.Errors[results.ErrReset] != 1 || s.Status[0] != 1 {
		t.Fatalf("%+v", s)
	}
	if s.WaitP50 != 50.5 || s.WaitP99 != 99.01 {
		t.Fatalf("p50 %v p99 %v, want type-7 50.5 and 99.01", s.WaitP50, s.WaitP99)
	}
}
