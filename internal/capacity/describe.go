package capacity

import (
	"fmt"
	"strconv"

	"github.com/ptuprobe/ptuprobe/internal/num"
)

// Clock says on which clock the search runs.
func (c *Job) Clock() string {
	if c.Target.Embedded() {
		return "in process on the embedded simulator's virtual clock: seconds of wall time"
	}
	return "on the wall clock against the named target"
}

// String is the worst case in requests, tokens and time.
func (w WorstCase) String() string {
	return fmt.Sprintf("at most %d requests, %s tokens, %s", w.Requests, num.Grouped(w.Tokens, 0), num.About(w.Time))
}

// Describe is the search's plan in lines for a reader (a dry run): its
// question, its steps, what it needs at worst, its caps and its outputs.
func (c *Job) Describe() []string {
	cf := c.Config
	slo := cf.SLO.String()
	if slo == "" {
		slo = "none (any 2xx)"
	}
	return []string{
		fmt.Sprintf("question: the highest offered load with goodput ≥ %s under SLO %s and 429s ≤ %s", FormatShare(cf.Goodput), slo, FormatShare(cf.Max429Share)),
		fmt.Sprintf("steps: a ramp from %s ×%g to %s, %d bisections, %d runs of each boundary rate; each step %s (its last half judged), %s between steps",
			num.PerSecond(cf.MinRate), cf.Factor, num.PerSecond(cf.MaxRate), cf.Depth, cf.Repeats, num.About(cf.StepDuration), num.About(cf.Pause)),
		fmt.Sprintf("worst case: %d steps, %s", c.WorstCase().Steps, c.WorstCase()),
		fmt.Sprintf("caps: --max-requests %d, --max-time %s", cf.MaxRequests, num.About(cf.MaxTime)),
		fmt.Sprintf("outputs: %s/%s, %s/%s", c.OutDir, FileJSON, c.OutDir, FileChart),
	}
}

// Announce is what a search says as it starts: its worst case and its
// clock.
func (c *Job) Announce() string {
	w := c.WorstCase()
	return fmt.Sprintf("capacity: at most %d steps of %s (%s), %s", w.Steps, num.About(c.Config.StepDuration), w, c.Clock())
}

// String is a judged step's progress line: its rate and run, its verdict,
// its goodput and 429 share.
func (s Step) String() string {
	verdict := "pass"
	if !s.Passed {
		verdict = "fail"
	}
	if s.StoppedEarly != "" {
		verdict += " (stopped early: " + s.StoppedEarly + ")"
	}
	return fmt.Sprintf("step %d: %s/s (run %d) → %s: goodput %s%%, 429s %s%%", s.Index,
		strconv.FormatFloat(s.Rate, 'f', 3, 64), s.Repeat+1, verdict,
		strconv.FormatFloat(100*s.Goodput, 'f', 1, 64), strconv.FormatFloat(100*s.Share429, 'f', 1, 64))
}
