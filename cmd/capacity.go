package cmd

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/capacity"
	"github.com/ptuprobe/ptuprobe/results"
)

var capacityFlagNames = merge(rateSearchNames, flagNames{
	"Goodput": "--goodput", "Max429Share": "--max-429-share", "StepDuration": "--duration", "Repeats": "--repeats", "Pause": "--pause",
	"MaxTime": "--max-time", "OutDir": "--out-dir", "Trace": "--replay", "MaxTokensFactor": "--max-tokens-factor", "Dialect": "--sim-dialect",
})

type capacityCmd struct {
	tf                       targetFlags
	replay                   replayFlags
	slo                      analyze.SLO
	goodput, share429        string
	minRate, maxRate, outDir string
	factor                   float64
	step, pause, maxTime     time.Duration
	depth, repeats           int
	maxRequests, maxInFlight int
	quiet, dryRun            bool
	c                        *cobra.Command
}

func (k *capacityCmd) run(c *cobra.Command, _ []string) error {
	stdout, stderr := c.OutOrStdout(), c.ErrOrStderr()
	job, names, err := k.job()
	if err != nil {
		return err
	}
	if k.dryRun {
		writeCapacityPlan(stdout, &job, &k.tf)
		return nil
	}
	if !k.quiet {
		fmt.Fprintln(stderr, job.Announce())
		job.Config.OnStep = func(s capacity.Step) { fmt.Fprintln(stderr, s) }
	}
	k.tf.tls.warn(stderr)
	res, err := capacity.Run(c.Context(), job)
	switch {
	case isSetting(err):
		return settingError(err, names)
	case errors.Is(err, dispatch.ErrInterrupted) || c.Context().Err() != nil:
		res.WriteTable(stdout)
		return &ExitError{Code: ExitInterrupted, Err: errors.New("interrupted: the steps so far are in " + job.OutDir)}
	case errors.Is(err, capacity.ErrCapped):
		res.WriteTable(stdout)
		return &ExitError{Code: ExitFailure, Err: errors.New("a cap (--max-requests, --max-time) stopped the search before it ended: the steps so far are in " + job.OutDir)}
	case err != nil:
		return err
	}
	res.WriteTable(stdout)
	fmt.Fprintf(stdout, "wrote %s/%s and %s\n", job.OutDir, capacity.FileJSON, capacity.FileChart)
	return nil
}

// job reads the flags into the search, validated.
func (k *capacityCmd) job() (job capacity.Job, names flagNames, err error) {
	cfg, err := k.config()
	if err != nil {
		return job, nil, err
	}
	if err := k.tf.resolveSim(); err != nil {
		return job, nil, err
	}
	job = capacity.Job{
		Config: cfg, Target: k.tf.target(), OutDir: k.outDir, MaxInFlight: k.maxInFlight,
		RunID: results.NewRunID(), Group: "capacity", MaxTokensFactor: k.replay.factor,
	}
	if k.replay.file != "" {
		if k.c.Flags().Changed("replay-time-scale") {
			return job, nil, usageError("--replay-time-scale: capacity takes a trace's sizes, not its times (its steps offer constant rates)")
		}
		if job.Trace, err = k.replay.load(); err != nil {
			return job, nil, err
		}
	}
	names = merge(capacityFlagNames, targetNames(job.Target.Embedded()))
	if err := job.Validate(); err != nil {
		return job, names, settingError(err, names)
	}
	return job, names, nil
}

// config reads the search's own flags.
func (k *capacityCmd) config() (capacity.Config, error) {
	var c capacity.Config
	var err error
	if c.Goodput, err = capacity.ParseShare(k.goodput); err != nil {
		return c, usageError("--goodput: %v", err)
	}
	if c.Max429Share, err = capacity.ParseShare(k.share429); err != nil {
		return c, usageError("--max-429-share: %v", err)
	}
	if c.MinRate, c.MaxRate, err = parseRateRange(k.minRate, k.maxRate); err != nil {
		return c, err
	}
	c.SLO, c.Factor, c.StepDuration, c.Depth, c.Repeats = k.slo, k.factor, k.step, k.depth, k.repeats
	c.Pause, c.MaxRequests, c.MaxTime = k.pause, k.maxRequests, k.maxTime
	return c, nil
}

// writeCapacityPlan prints a search's plan and worst case.
func writeCapacityPlan(w io.Writer, job *capacity.Job, tf *targetFlags) {
	writePlan(w, targetKind(tf)+", "+job.Clock()+"; requests streamed", job.Describe())
}
