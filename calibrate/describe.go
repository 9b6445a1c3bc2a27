package calibrate

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	pnum "github.com/ptuprobe/ptuprobe/internal/num"
)

// Length is how long a calibration of c may take: every grid probe and
// every bisection, each pause at Cooldown (at least) and at MaxPause (at
// most: DefaultMaxPause when 0).
func (c Config) Length() (probes int, least, most time.Duration) {
	probes = len(c.Grid()) + c.Depth
	pauses := time.Duration(probes - 1)
	maxPause := c.MaxPause
	if maxPause <= 0 {
		maxPause = DefaultMaxPause
	}
	run := time.Duration(probes) * c.ProbeDuration
	return probes, run + pauses*c.Cooldown, run + pauses*maxPause
}

// Describe is the calibration's plan in lines for a reader (a dry run):
// its grid and probes, then what it needs in all — requests, peak rate,
// time.
func (c Config) Describe() []string {
	var grid []string
	for _, r := range c.Grid() {
		grid = append(grid, pnum.PerSecond(r))
	}
	probes, least, most := c.Length()
	return []string{
		fmt.Sprintf("grid: %s, each probe %s; then up to %d bisection probes (at most %d probes)", strings.Join(grid, ", "), pnum.About(c.ProbeDuration), c.Depth, probes),
		fmt.Sprintf("in all: at most %d requests, peak %s, expected duration at most about %s (%s if the target advises long waits)",
			c.PlannedRequests(), pnum.PerSecond(c.MaxRate), pnum.About(least), pnum.About(most)),
	}
}

// Announce is what a calibration says as it starts: how many probes, how
// long it may take.
func (c Config) Announce() string {
	probes, least, most := c.Length()
	return fmt.Sprintf("calibrate: at most %d probes of %s, expected to take at most about %s (%s if the target advises long waits)",
		probes, pnum.About(c.ProbeDuration), pnum.About(least), pnum.About(most))
}

// String is a probe's progress line: its rate, verdict, 429s and what
// was admitted.
func (p Probe) String() string {
	return fmt.Sprintf("probe %d: %s/s → %s (%d 429s, %s/s admitted)", p.Step, strconv.FormatFloat(p.Offered, 'f', 3, 64), p.Verdict, p.N429, strconv.FormatFloat(p.Admitted, 'f', 2, 64))
}
