package campaign

import (
	"fmt"
	"strings"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/internal/trace"
	"github.com/ptuprobe/ptuprobe/schedule"
)

// describeBurst is a burst plan's Description: its waves, count, peak
// and span.
func describeBurst(c burst.Config, waitWave bool, p Plan) string {
	each, peak := "each at one instant", fmt.Sprintf("peak %d at once", c.Size)
	if c.Spread > 0 {
		each = "each spread over " + num.About(c.Spread)
		peak = "peak " + num.PerSecond(float64(c.Size)/c.Spread.Seconds())
	}
	if waitWave {
		each += ", each waiting for the last to finish"
	}
	return fmt.Sprintf("burst plan: %s of %s, %s apart, %s: %d requests, %s, spans %s",
		num.Count(uint64(c.Waves), "wave", "waves"), num.Count(uint64(c.Size), "request", "requests"), num.About(c.Gap), each,
		p.Planned, peak, num.About(p.Span))
}

// describeSchedule is a scheduled plan's Description: its phases,
// count, peak and span.
func describeSchedule(c schedule.Config, p Plan) string {
	var phases []string
	peak := 0.0
	for _, ph := range c.Phases {
		if ph.From == ph.To {
			phases = append(phases, fmt.Sprintf("%s %s at %s", ph.Name, num.About(ph.Duration), num.PerSecond(ph.From)))
		} else {
			phases = append(phases, fmt.Sprintf("%s %s from %s to %s", ph.Name, num.About(ph.Duration), num.PerSecond(ph.From), num.PerSecond(ph.To)))
		}
		peak = max(peak, ph.From, ph.To)
	}
	arrival := c.Arrival
	if arrival == "" {
		arrival = schedule.ArrivalConstant // as ParseArrival reads it
	}
	return fmt.Sprintf("scheduled plan (%s arrivals): %s: %d requests, peak %s, spans %s",
		arrival, strings.Join(phases, ", "), p.Planned, num.PerSecond(peak), num.About(p.Span))
}

// describeReplay is a replayed plan's Description: the trace, its
// window and scale, count, sizes and span.
func describeReplay(t *trace.Trace, r Replay, p Plan) string {
	line := fmt.Sprintf("replayed plan (%s, %s format, %d rows", t.Source, t.Format, len(t.Rows))
	if r.Window != "" {
		line += ", window " + r.Window
	}
	if r.Scale != "" && r.Scale != "1" {
		line += ", time × " + r.Scale
	}
	line += fmt.Sprintf("): %d requests, max_tokens the output × %g, spans %s", p.Planned, r.Factor, num.About(p.Span))
	if t.Clipped+t.ZeroOutput > 0 {
		line += fmt.Sprintf("; %d sizes clipped to 1–%d tokens, %d outputs of 0 sent as 1", t.Clipped, trace.MaxTokens, t.ZeroOutput)
	}
	return line
}
