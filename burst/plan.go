package burst

import (
	"time"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// Defaults for a burst plan.
const (
	DefaultSize  = 20
	DefaultWaves = 1
	DefaultGap   = 10 * time.Second
)

// Bounds of a burst plan: what no run can mean, refused before any
// product of them can overflow.
const (
	// MaxRequests bounds Size × Waves (a run's own cap is usually far lower).
	MaxRequests = 1 << 30
	// MaxSpan bounds the planned time from the first send to the last.
	MaxSpan = 7 * 24 * time.Hour
)

// Config is a burst plan: Waves waves of Size requests, wave w starting at
// w × Gap; within a wave, request j goes out at j × Spread / Size (all at
// once when Spread is 0).
type Config struct {
	Size   int
	Waves  int
	Gap    time.Duration
	Spread time.Duration
}

// Validate reports the first problem with c as a *valid.Error naming the
// field.
func (c Config) Validate() error {
	switch {
	case c.Size < 1:
		return valid.Errorf("Size", "must be at least 1")
	case c.Waves < 1:
		return valid.Errorf("Waves", "must be at least 1")
	case c.Gap < 0:
		return valid.Errorf("Gap", "must not be negative")
	case c.Spread < 0:
		return valid.Errorf("Spread", "must not be negative")
	case c.Waves > 1 && c.Spread > c.Gap:
		return valid.Errorf("Spread", "(%s) is longer than {Gap} (%s): waves would overlap", c.Spread, c.Gap)
	case c.Size > MaxRequests/c.Waves:
		return valid.Errorf("Size", "times {Waves} is more than %d requests", MaxRequests)
	case c.Spread > MaxSpan || (c.Waves > 1 && c.Gap > MaxSpan/time.Duration(c.Waves-1)):
		return valid.Errorf("Gap", "times {Waves} spans more than %s", MaxSpan)
	}
	return nil
}

// Total is the number of requests in the plan.
func (c Config) Total() int { return c.Size * c.Waves }

// Span is the planned time from the first send to the last.
func (c Config) Span() time.Duration {
	last := time.Duration(c.Waves-1) * c.Gap
	if c.Size > 1 {
		last += c.Spread * time.Duration(c.Size-1) / time.Duration(c.Size)
	}
	return last
}

// Plan iterates the arrivals of a Config. Offsets are computed from the
// indexes alone, an absolute schedule.
type Plan struct {
	c Config
	i int
}

// NewPlan returns the arrivals of c, which must be valid.
func NewPlan(c Config) *Plan { return &Plan{c: c} }

// Offset returns the intended offset and wave of arrival i.
func (c Config) Offset(i int) (time.Duration, int) {
	w, j := i/c.Size, i%c.Size
	off := time.Duration(w) * c.Gap
	if c.Spread > 0 {
		off += time.Duration(int64(c.Spread) * int64(j) / int64(c.Size))
	}
	return off, w
}

// Next returns the next arrival; ok is false after the last.
func (p *Plan) Next() (offset time.Duration, wave int, ok bool) {
	if p.i >= p.c.Total() {
		return 0, 0, false
	}
	offset, wave = p.c.Offset(p.i)
	p.i++
	return offset, wave, true
}
