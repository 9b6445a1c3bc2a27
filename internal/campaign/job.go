package campaign

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
)

// Bounds of a job.
const (
	// MaxInFlight bounds Options.MaxInFlight: each request in flight holds
	// a socket, a goroutine and its buffers.
	MaxInFlight = 100_000
	// MaxBudget bounds Options.Budget, as burst.MaxSpan and
	// schedule.MaxSpan bound a plan.
	MaxBudget = 7 * 24 * time.Hour
	// StartTolerance is how late after Options.Start a worker may begin:
	// a moment for a process to start and open its target. Later, its share
	// would go late or bunched against the others', so it is refused.
	StartTolerance = time.Second
	// MaxStartAhead bounds how far ahead Options.Start may be: a start a
	// day away is a typo (a wrong date or zone), not a plan.
	MaxStartAhead = 24 * time.Hour
)

// CommitWindow is the results file's commit window
// (results.Writer.SetCommitWindow): at rates above one row a millisecond,
// the rows completed within it share one write(2) (bench/README.md); a
// row is on file when its request completes, as before.
const CommitWindow = time.Millisecond

// Job is a whole traffic run: the plans, where their requests go and where
// their rows go. Its fields are what a user sets; Validate checks them all
// before Run touches anything.
type Job struct {
	Plans  []Plan
	Target Target
	// Output is the results file (its directory is created if need be). It
	// is appended to, or with Replace started afresh.
	Output  string
	Replace bool
	Options Options
}

// Planned is the number of requests the plans send (first attempts).
func (j *Job) Planned() int {
	n := 0
	for _, p := range j.Plans {
		n += p.Planned
	}
	return n
}

// Span is the planned time from the first send to the last, plans back to
// back: on a common timeline (Options.Start) each plan but the last holds
// its Slot.
func (j *Job) Span() time.Duration {
	var d time.Duration
	for i, p := range j.Plans {
		if !j.Options.Start.IsZero() && i < len(j.Plans)-1 {
			d += p.Slot
		} else {
			d += p.Span
		}
	}
	return d
}

// Validate checks every setting and resolves the target, without side
// effects: nothing is created, removed, started or sent. A setting out of
// range is a *valid.Error naming its Job, Options, client.Spec or sim.Config
// field.
func (j *Job) Validate() error {
	o := j.Options
	switch {
	case len(j.Plans) == 0:
		return valid.Errorf("Plans", "are empty: nothing to send")
	case o.MaxInFlight < 1 || o.MaxInFlight > MaxInFlight:
		return valid.Errorf("MaxInFlight", "must be between 1 and %d", MaxInFlight)
	case o.MaxRequests < 1:
		return valid.Errorf("MaxRequests", "must be at least 1")
	case j.Planned() > o.MaxRequests:
		return valid.Errorf("MaxRequests", "is %d, but the plan has %d requests; raise it deliberately if you mean it", o.MaxRequests, j.Planned())
	case o.Budget < 0 || o.Budget > MaxBudget:
		return valid.Errorf("Budget", "must be between 0 and %s", MaxBudget)
	case o.Budget > 0 && j.Span() >= o.Budget && !j.waitsForWaves():
		return valid.Errorf("Budget", "is %s, but the plan spans %s; raise it deliberately if you mean it", o.Budget, j.Span())
	case j.Output == "":
		return valid.Errorf("Output", "must name a file")
	}
	if err := j.validateFleet(time.Now()); err != nil {
		return err
	}
	if o.Group != "" {
		if err := results.ValidateGroup(o.Group); err != nil {
			return err
		}
	}
	if err := checkResultsFile("Output", j.Output); err != nil {
		return err
	}
	for _, p := range j.Plans {
		switch {
		case p.Shapes != nil && j.Target.Prompts != "":
			return valid.Errorf("Prompts", "goes not with a replayed trace, which sizes every request")
		case p.Shapes != nil && (j.Target.Spec.API == client.APIRaw || j.Target.Spec.Body != "" || j.Target.Spec.Method != ""):
			return valid.Errorf("Body", "is a raw body: a replayed trace sizes synthetic prompts")
		}
	}
	return j.Target.Validate()
}

// validateFleet checks the common start and the shard at now.
func (j *Job) validateFleet(now time.Time) error {
	o := j.Options
	if err := o.Shard.Validate(); err != nil {
		return valid.Errorf("Shard", "%s: %v", o.Shard, err)
	}
	switch {
	case !o.Shard.Whole() && o.Start.IsZero():
		return valid.Errorf("Shard", "needs {Start}: without one instant for every worker the shares do not make up the plan")
	case (!o.Start.IsZero() || !o.Shard.Whole()) && j.waitsForWaves():
		return valid.Errorf("WaitWave", "paces each wave by this worker's own answers; with {Start} or {Shard} every worker keeps to the planned times instead")
	case o.Offset < 0:
		return valid.Errorf("Offset", "must not be negative")
	case o.Start.IsZero() || o.Offset > 0:
		return nil
	}
	// The instants are compared, not their difference: a time.Duration
	// saturates about 292 years out, and negating the saturated minimum
	// overflows back to it, which once let a start in 2400 pass as "not
	// ahead" and wait for ever.
	switch {
	case o.Start.Before(now.Add(-StartTolerance)):
		return valid.Errorf("Start", "%s is %s in the past (this machine's clock reads %s): a worker may begin at most %s late; give a time when every worker will be ready",
			o.Start.UTC().Format(time.RFC3339Nano), span(now.Sub(o.Start)), now.UTC().Format(time.RFC3339), StartTolerance)
	case o.Start.After(now.Add(MaxStartAhead)):
		return valid.Errorf("Start", "%s is %s ahead (this machine's clock reads %s), more than %s",
			o.Start.UTC().Format(time.RFC3339Nano), span(o.Start.Sub(now)), now.UTC().Format(time.RFC3339), Roughly(MaxStartAhead))
	}
	return nil
}

// span words a positive difference of two instants, which time.Sub
// saturates at the largest Duration (about 292 years).
func span(d time.Duration) string {
	if d == math.MaxInt64 {
		return "more than 292 years"
	}
	return roughly(d)
}

// roughly words a duration for a person: to a tenth of a second under a
// minute, to the second under two days, then in days; no "0m0s" tail.
func roughly(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	case d >= time.Minute:
		d = d.Round(time.Second)
	default:
		d = d.Round(100 * time.Millisecond)
	}
	return Roughly(d)
}

// Roughly is d without a "0s" or "0m0s" tail: 24h, 1h30m, 2m, 1.5s.
func Roughly(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

func (j *Job) waitsForWaves() bool {
	for _, p := range j.Plans {
		if p.WaitWave {
			return true
		}
	}
	return false
}

// Run validates the job, opens the target (starting the embedded simulator
// when none is named) and the results file, sends the plans in order and
// closes everything. Every row that was sent is in Output when it returns,
// also when it returns dispatch.ErrInterrupted.
func Run(ctx context.Context, j Job) (Outcome, error) {
	var out Outcome
	if j.Target.MaxConns == 0 {
		j.Target.MaxConns = j.Options.MaxInFlight
	}
	if err := j.Validate(); err != nil {
		return out, err
	}
	tgt, closeTarget, err := j.Target.Open(ctx)
	if err != nil {
		return out, err
	}
	defer closeTarget()
	if err := os.MkdirAll(filepath.Dir(j.Output), 0o755); err != nil {
		return out, fmt.Errorf("create the results file's directory: %w", err)
	}
	if j.Replace {
		if err := os.Remove(j.Output); err != nil && !errors.Is(err, os.ErrNotExist) {
			return out, fmt.Errorf("replace %s: %w", j.Output, err)
		}
	}
	w, err := results.Create(j.Output)
	if err != nil {
		return out, err
	}
	w.SetCommitWindow(CommitWindow)
	o := j.Options
	if o.RunID == "" {
		o.RunID = results.NewRunID()
	}
	out, err = RunPlans(ctx, j.Plans, tgt, w, o)
	out.Repaired = w.Repaired()
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return out, err
}

// OpenFiles is how many open files a run of maxInFlight requests in
// flight may need: one connection each, and as many again for the
// embedded simulator, which holds the other end of every connection, plus
// 64 for the rest (the results file, the binary, the metrics server…).
func OpenFiles(maxInFlight int, embedded bool) uint64 {
	need := uint64(maxInFlight) + 64
	if embedded {
		need += uint64(maxInFlight)
	}
	return need
}
