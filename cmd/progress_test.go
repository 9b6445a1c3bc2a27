package cmd

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
)

// TestProgressSaysAtMost: a plan's progress line (stderr, not a
// terminal) counts to its requests, or, for a plan that may grow to its
// bound or end short of it (campaign's Plan.Bound: the main job's growing
// waves, the refill probe), says "at most".
func TestProgressSaysAtMost(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		label string
		total int
		most  bool
		want  string
	}{
		{"burst", 160, false, "burst: 0/160 done, 0 429s, 1s elapsed\n"},
		{"burst", 440, true, "burst: 0 of at most 440 done, 0 429s, 1s elapsed\n"},
		{"refill probe", 320, true, "refill probe: 0 of at most 320 done, 0 429s, 1s elapsed\n"},
	} {
		synctest.Test(t, func(t *testing.T) {
			var w strings.Builder
			p := newProgress(&w, false, c.label, c.total, c.most, time.Time{}, time.Second, newRunTally(analyze.SLO{}))
			time.Sleep(1500 * time.Millisecond)
			synctest.Wait()
			p.finish()
			if w.String() != c.want {
				t.Errorf("%s of %d (most %v): %q, want %q", c.label, c.total, c.most, w.String(), c.want)
			}
		})
	}
}
