package campaign

import (
	"errors"
	"testing"

	"github.com/ptuprobe/ptuprobe/results"
)

// TestAbortWindow: an Abort stops once more than its share of the last
// AbortWindow completed attempts failed other than by a 429, once, and
// not before AbortWindow completed; a 429 and a 2xx are no failures.
func TestAbortWindow(t *testing.T) {
	t.Parallel()
	row := func(status int) *results.Record {
		r := results.Blank()
		r.Attempt, r.Status, r.SentMS, r.LatencyMS = 1, status, 1, 1
		return &r
	}
	var stops []error
	a := NewAbort(0.5, "half", func(err error) { stops = append(stops, err) })
	for range AbortWindow / 2 {
		a.Add(row(500))
		a.Add(row(429))
	}
	if len(stops) != 0 {
		t.Fatalf("10 of 20 failed, not more than half: stopped %v", stops)
	}
	a.Add(row(404)) // the window's first row, a 500, drops out: still 10
	if len(stops) != 0 {
		t.Fatalf("still 10 of 20: stopped %v", stops)
	}
	a.Add(row(404)) // a 429 drops out: 11 of 20
	var ae *AbortedError
	if len(stops) != 1 || !errors.As(stops[0], &ae) || ae.Bad != 11 ||
		stops[0].Error() != "aborted: 11 of the last 20 completed attempts failed other than by a 429, more than half" {
		t.Fatalf("11 of 20 failed: stopped %v", stops)
	}
	a.Add(row(500))
	if len(stops) != 1 {
		t.Fatalf("stopped twice: %v", stops)
	}
	var none *Abort
	none.Add(row(500)) // counts nothing, no panic
}

func TestParseAbortShare(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]float64{"0.5": 0.5, "50%": 0.5, " 0 ": 0, "99.5%": 0.995} {
		if got, ok := ParseAbortShare(in); !ok || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, ok, want)
		}
	}
	for _, bad := range []string{"1", "100%", "-0.1", "x", "", "NaN", "0.5%%"} {
		if got, ok := ParseAbortShare(bad); ok {
			t.Errorf("%q accepted as %v", bad, got)
		}
	}
}

// FuzzParseAbortShare: any text is read without a panic, and a share
// accepted is from 0 to below 1.
func FuzzParseAbortShare(f *testing.F) {
	for _, s := range []string{"0.5", "50%", "1", "-0", "1e-3%", "NaN", "Inf%", " 0.99 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if share, ok := ParseAbortShare(s); ok && !(share >= 0 && share < 1) {
			t.Fatalf("%q accepted as %v", s, share)
		}
	})
}
