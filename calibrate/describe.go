package calibrate

import (
	"fmt"
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
