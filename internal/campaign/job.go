package campaign

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

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
)

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
// back.
func (j *Job) Span() time.Duration {
	var d time.Duration
	for _, p := range j.Plans {
		d += p.Span
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
	if o.Group != "" {
		if err := results.ValidateGroup(o.Group); err != nil {
			return err
		}
	}
	if err := checkResultsFile("Output", j.Output); err != nil {
		return err
	}
	return j.Target.Validate()
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
