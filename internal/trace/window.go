package trace

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// MaxScale bounds --replay-time-scale both ways (1000 times slower or
// faster): beyond it a trace's rows would all land at one instant or a
// trace would outlast any run.
const MaxScale = 1000

// ParseScale reads --replay-time-scale: a factor every offset is
// multiplied by (2 replays the trace at half speed, 0.5 at twice).
func ParseScale(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 1.0/MaxScale || v > MaxScale {
		return 0, fmt.Errorf("time scale %q: want a number from %g to %d (2 is half speed, 0.5 twice as fast)", clip(s), 1.0/MaxScale, MaxScale)
	}
	return v, nil
}

// Scale multiplies every offset, and the span, by x (ParseScale's
// bounds; the result is bounded by MaxSpan).
func (t *Trace) Scale(x float64) error {
	if !(x >= 1.0/MaxScale && x <= MaxScale) {
		return fmt.Errorf("time scale %g: want %g to %d", x, 1.0/MaxScale, MaxScale)
	}
	if float64(t.Span)*x > float64(MaxSpan) {
		return fmt.Errorf("time scale %g makes the trace last %v, more than %v", x, time.Duration(float64(t.Span)*x).Round(time.Second), MaxSpan)
	}
	for i := range t.Rows {
		t.Rows[i].Offset = time.Duration(math.Round(float64(t.Rows[i].Offset) * x))
	}
	t.Span = time.Duration(math.Round(float64(t.Span) * x))
	return nil
}

// Window is a part of a trace by offset: From ≤ offset < To (To 0: to
// the end).
type Window struct{ From, To time.Duration }

// ParseWindow reads --replay-window FROM-TO: two durations on the
// trace's own clock (before --replay-time-scale), either one omitted
// ("10m-" to the end, "-10m" from the start), such as 1h-1h30m.
func ParseWindow(s string) (Window, error) {
	from, to, ok := strings.Cut(strings.TrimSpace(s), "-")
	bad := func(why string) (Window, error) {
		return Window{}, fmt.Errorf("window %q: %s (want FROM-TO, two durations such as 1h-1h30m, either one omitted)", clip(s), why)
	}
	if !ok || (from == "" && to == "") {
		return bad("no '-' between two durations")
	}
	var w Window
	var err error
	if from != "" {
		if w.From, err = time.ParseDuration(strings.TrimSpace(from)); err != nil || w.From < 0 {
			return bad(fmt.Sprintf("FROM %q is not a duration", clip(from)))
		}
	}
	if to != "" {
		if w.To, err = time.ParseDuration(strings.TrimSpace(to)); err != nil || w.To <= 0 {
			return bad(fmt.Sprintf("TO %q is not a positive duration", clip(to)))
		}
		if w.To <= w.From {
			return bad("TO is not after FROM")
		}
	}
	return w, nil
}

// ErrEmptyWindow is returned by Cut for a window that holds no row.
var ErrEmptyWindow = errors.New("the window holds no row of the trace")

// Cut keeps the rows in w, their offsets re-zeroed at w.From (a lull at
// the window's start is kept, as the trace had it); the span becomes the
// window's length (to the trace's span when To is 0 or past it).
func (t *Trace) Cut(w Window) error {
	end := t.Span
	if w.To > 0 && w.To < end {
		end = w.To
	}
	var kept []Row
	for _, r := range t.Rows {
		if r.Offset >= w.From && (w.To == 0 || r.Offset < w.To) {
			r.Offset -= w.From
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		return fmt.Errorf("window %v-%v of %s (%v long): %w", w.From, w.To, t.Source, t.Span, ErrEmptyWindow)
	}
	t.Rows = kept
	t.Span = max(end-w.From, kept[len(kept)-1].Offset+time.Millisecond)
	return nil
}
