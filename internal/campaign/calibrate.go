package campaign

import (
	"context"

	"github.com/ptuprobe/ptuprobe/calibrate"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
)

// Calibration is a calibrate run: the probes, the target, the evidence
// table's file and, optionally, a results file for every probe's rows.
type Calibration struct {
	Config   calibrate.Config
	Target   Target
	Evidence string
	Results  string // empty: the probes' rows are not kept
	// Metrics, when set, counts every probe's requests and Records live,
	// each probe as a plan of Config.Group.
	Metrics Meter
}

// Validate checks every setting and the target, without side effects.
func (c *Calibration) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	if c.Evidence == "" {
		return valid.Errorf("Evidence", "must name a file")
	}
	if samePath(c.Evidence, c.Results) {
		return valid.Errorf("Evidence", "and {Results} name the same file: the evidence table would replace every probe's rows")
	}
	if err := checkEvidenceFile("Evidence", c.Evidence); err != nil {
		return err
	}
	if c.Results != "" {
		if err := checkResultsFile("Results", c.Results); err != nil {
			return err
		}
	}
	return c.Target.Validate()
}

// Calibrate validates c, opens the target (and the results file), runs the
// probes and writes the evidence table, also when the run was interrupted
// or failed: what was measured is kept.
func Calibrate(ctx context.Context, c Calibration) (calibrate.Result, error) {
	if c.Target.MaxConns == 0 {
		c.Target.MaxConns = c.Config.MaxInFlight
	}
	if err := c.Validate(); err != nil {
		return calibrate.Result{}, err
	}
	s, closeTarget, err := c.Target.Open(ctx)
	if err != nil {
		return calibrate.Result{}, err
	}
	defer closeTarget()
	var sink dispatch.Sink
	if c.Results != "" {
		w, err := results.Create(c.Results)
		if err != nil {
			return calibrate.Result{}, err
		}
		w.SetCommitWindow(CommitWindow)
		defer w.Close()
		sink = w
	}
	if m := c.Metrics; m != nil {
		c.Config.Instrument = func(planned int, s dispatch.Sender) (dispatch.Sender, func(*results.Record)) {
			return m.Meter(c.Config.Group, planned, s)
		}
	}
	res, runErr := calibrate.Run(ctx, c.Config, s, sink)
	if err := res.WriteFile(c.Evidence); err != nil {
		return res, err
	}
	return res, runErr
}
