package cmd

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ptuprobe/ptuprobe/calibrate"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/results"
)

var calibrateFlagNames = merge(rateSearchNames, flagNames{
	"ProbeDuration": "--probe-duration", "Cooldown": "--pause", "MaxPause": "--max-pause", "Evidence": "--output", "Results": "--results",
})

type calibrateCmd struct {
	tf                       targetFlags
	rf                       runFlags
	minRate, maxRate, resOut string
	evidence                 string
	factor                   float64
	probe, cooldown          time.Duration
	maxPause                 time.Duration
	depth                    int
}

func (k *calibrateCmd) run(c *cobra.Command, _ []string) error {
	stdout, stderr := c.OutOrStdout(), c.ErrOrStderr()
	job, names, err := k.job()
	if err != nil {
		return err
	}
	k.tf.noteNoKey(stderr, k.rf.quiet, nil)
	if k.rf.dryRun {
		writeCalibrationPlan(stdout, job.Config, &k.tf, k.evidence)
		return nil
	}
	warnFileLimit(stderr, k.rf.maxInFlight, job.Target.Embedded())
	k.tf.tls.warn(stderr)
	k.progress(stderr, &job)
	if err := k.rf.metrics.start(stderr, k.rf.quiet); err != nil {
		return err
	}
	defer k.rf.metrics.stop(stderr, k.rf.quiet)
	if job.Metrics, err = k.rf.metrics.traffic(); err != nil {
		return err
	}
	res, err := campaign.Calibrate(c.Context(), job)
	k.rf.metrics.finish()
	switch {
	case isSetting(err):
		return settingError(err, names)
	case errors.Is(err, results.ErrHeaderMismatch):
		return asUsage(err)
	}
	res.WriteTable(stdout)
	if errors.Is(err, dispatch.ErrInterrupted) {
		return &ExitError{Code: ExitInterrupted, Err: errors.New("interrupted: the evidence so far is in " + k.evidence)}
	}
	if err == nil {
		fmt.Fprintf(stdout, "wrote %s\n", k.evidence)
	}
	return err
}

// job reads the flags into the calibration, validated; a value out of
// range is one usage line naming its flag (names maps the fields).
func (k *calibrateCmd) job() (job campaign.Calibration, names flagNames, err error) {
	lo, hi, err := parseRateRange(k.minRate, k.maxRate)
	if err != nil {
		return job, nil, err
	}
	if _, err := k.rf.options(0); err != nil {
		return job, nil, err
	}
	if err := k.tf.resolveSim(); err != nil {
		return job, nil, err
	}
	group := k.rf.group
	if group == "" {
		group = "calibrate"
	}
	job = campaign.Calibration{
		Config: calibrate.Config{
			MinRate: lo, MaxRate: hi, Factor: k.factor, ProbeDuration: k.probe, Depth: k.depth,
			Cooldown: k.cooldown, MaxPause: k.maxPause, MaxRequests: k.rf.maxRequests, MaxInFlight: k.rf.maxInFlight,
			RunID: results.NewRunID(), Group: group,
		},
		Target:   k.tf.target(),
		Evidence: k.evidence,
		Results:  k.resOut,
	}
	names = merge(calibrateFlagNames, targetNames(job.Target.Embedded()))
	if err := job.Validate(); err != nil {
		return job, names, settingError(err, names)
	}
	return job, names, nil
}

// progress, unless --quiet, says how long the calibration may take and
// has each probe and the embedded simulator's address printed on stderr.
func (k *calibrateCmd) progress(stderr io.Writer, job *campaign.Calibration) {
	if k.rf.quiet {
		return
	}
	fmt.Fprintln(stderr, job.Config.Announce())
	job.Config.OnProbe = func(p calibrate.Probe) { fmt.Fprintln(stderr, p) }
	job.Target.OnSimulator = func(url string) {
		fmt.Fprintf(stderr, "no target given: using the embedded PTU simulator at %s\n", url)
	}
}

func init() {
	register(func() *cobra.Command {
		k := &calibrateCmd{}
		c := &cobra.Command{
			Use:   "calibrate",
			Short: "Find the highest constant rate the target admits without 429s",
			Long: `calibrate answers the stricter question: the highest rate without a 429
(ptuprobe capacity finds the highest load whose goodput under an SLO holds).
It probes the target at constant rates over a geometric grid from
--min-rate to --max-rate (each --factor times the last), each for
--probe-duration, stopping at the first rate that draws a 429; then it
bisects between the last admitted rate and that one at geometric midpoints,
--depth times. Between probes it pauses --pause, or the longest advised
wait of the last probe if that is longer, but never more than --max-pause.

A probe counts as admitted only when it drew no 429 and, over its last half,
the target answered 2xx at 70% of the offered rate or more: a target that is
merely slow is not taken for capacity (verdict "slow").

It prints the evidence table (offered rate, admitted rate, 429s, p50 advised
wait, verdict) and the knee, and writes the table to --output (only over an
earlier evidence table: any other file is left alone). Interrupted, it
reports and writes what was measured so far. It prints its expected
duration as it starts; --dry-run prints the probes and sends nothing.`,
			Example: `  # On the embedded simulator (sustains about 6 requests/s of the default request)
  ptuprobe calibrate --min-rate 1/s --max-rate 16/s --probe-duration 20s

  # An Azure deployment, every probe's rows kept for analysis
  ptuprobe calibrate --endpoint https://NAME.openai.azure.com --deployment DEPLOYMENT \
      --min-rate 0.2/s --max-rate 8/s --probe-duration 60s --results calibrate-results.csv`,
			Args: noArgs,
			RunE: k.run,
		}
		fs := c.Flags()
		fs.StringVar(&k.minRate, "min-rate", "0.5/s", "lowest rate of the grid")
		fs.StringVar(&k.maxRate, "max-rate", strconv.Itoa(calibrate.DefaultMaxRate)+"/s", "highest rate of the grid")
		fs.Float64Var(&k.factor, "factor", calibrate.DefaultFactor, "each grid rate is this many times the last")
		fs.DurationVar(&k.probe, "probe-duration", calibrate.DefaultProbeDuration, "length of each constant-rate probe")
		fs.IntVar(&k.depth, "depth", calibrate.DefaultDepth, "bisection steps once the grid brackets the knee")
		fs.DurationVar(&k.cooldown, "pause", calibrate.DefaultCooldown, "least pause between probes")
		fs.DurationVar(&k.maxPause, "max-pause", calibrate.DefaultMaxPause, "longest pause between probes, however long a wait the target advised")
		fs.StringVarP(&k.evidence, "output", "o", "calibrate.csv", "evidence table (CSV)")
		fs.StringVar(&k.resOut, "results", "", "also append every probe's attempts to this results file")
		k.rf.add(fs, false)
		k.rf.addMetrics(fs)
		k.tf.add(fs)
		k.tf.tokens.addSeed(fs)
		alias(c, renames{"cooldown": "pause"})
		return c
	})
}
