package cmd

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ptuprobe/ptuprobe/calibrate"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/schedule"
)

func init() {
	register(func() *cobra.Command {
		var (
			tf                       targetFlags
			rf                       runFlags
			minRate, maxRate, resOut string
			evidence                 string
			factor                   float64
			probe, cooldown          time.Duration
			depth                    int
		)
		c := &cobra.Command{
			Use:   "calibrate",
			Short: "Find the highest constant rate the target admits without 429s",
			Long: `calibrate probes the target at constant rates over a geometric grid from
--min-rate to --max-rate (each --factor times the last), each for
--probe-duration, stopping at the first rate that draws a 429; then it
bisects between the last admitted rate and that one at geometric midpoints,
--depth times. Between probes it pauses --cooldown, or the longest advised
wait of the last probe if that is longer.

A probe counts as admitted only when it drew no 429 and, over its last half,
the target answered 2xx at 70% of the offered rate or more: a target that is
merely slow is not taken for capacity (verdict "slow").

It prints the evidence table (offered rate, admitted rate, 429s, p50 advised
wait, verdict) and the knee, and writes the table to --output.`,
			Example: `  # On the embedded simulator (sustains about 6 requests/s of the default request)
  ptuprobe calibrate --min-rate 1/s --max-rate 16/s --probe-duration 20s

  # An Azure deployment, every probe's rows kept for analysis
  ptuprobe calibrate --endpoint https://NAME.openai.azure.com --deployment DEPLOYMENT \
      --min-rate 0.2/s --max-rate 8/s --probe-duration 60s --results calibrate-results.csv`,
			Args: noArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				lo, err := schedule.ParseRate(minRate)
				if err != nil {
					return usageError("--min-rate: %v", err)
				}
				hi, err := schedule.ParseRate(maxRate)
				if err != nil {
					return usageError("--max-rate: %v", err)
				}
				cfg := calibrate.Config{
					MinRate: lo, MaxRate: hi, Factor: factor, ProbeDuration: probe, Depth: depth,
					Cooldown: cooldown, MaxRequests: rf.maxRequests, MaxInFlight: rf.maxInFlight,
					RunID: results.NewRunID(), Group: rf.group,
				}
				if cfg.Group == "" {
					cfg.Group = "calibrate"
				}
				if err := cfg.Validate(); err != nil {
					return asUsage(err)
				}
				if err := rf.validate(0); err != nil {
					return err
				}
				if evidence == "" {
					return usageError("--output must name a file")
				}
				stdout, stderr := c.OutOrStdout(), c.ErrOrStderr()
				tgt, closeTarget, err := tf.open(c.Context(), rf.maxInFlight, rf.quiet, stderr)
				if err != nil {
					return err
				}
				defer closeTarget()
				var sink dispatch.Sink
				var w *results.Writer
				if resOut != "" {
					if w, err = results.Create(resOut); err != nil {
						return asUsage(err)
					}
					defer w.Close()
					sink = w
				}
				if !rf.quiet {
					cfg.OnProbe = func(p calibrate.Probe) {
						fmt.Fprintf(stderr, "probe %d: %s/s → %s (%d 429s, %s/s admitted)\n", p.Step, strconv.FormatFloat(p.Offered, 'f', 3, 64), p.Verdict, p.N429, strconv.FormatFloat(p.Admitted, 'f', 2, 64))
					}
				}
				res, runErr := calibrate.Run(c.Context(), cfg, tgt, sink)
				res.WriteTable(stdout)
				f, err := os.Create(evidence)
				if err != nil {
					return fmt.Errorf("write --output: %w", err)
				}
				if err := res.WriteCSV(f); err != nil {
					f.Close()
					return fmt.Errorf("write %s: %w", evidence, err)
				}
				if err := f.Close(); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "wrote %s\n", evidence)
				if errors.Is(runErr, dispatch.ErrInterrupted) {
					return &ExitError{Code: ExitInterrupted, Err: errors.New("interrupted: the evidence so far is in " + evidence)}
				}
				return runErr
			},
		}
		fs := c.Flags()
		fs.StringVar(&minRate, "min-rate", "0.5/s", "lowest rate of the grid")
		fs.StringVar(&maxRate, "max-rate", strconv.Itoa(calibrate.DefaultMaxRate)+"/s", "highest rate of the grid")
		fs.Float64Var(&factor, "factor", calibrate.DefaultFactor, "each grid rate is this many times the last")
		fs.DurationVar(&probe, "probe-duration", calibrate.DefaultProbeDuration, "length of each constant-rate probe")
		fs.IntVar(&depth, "depth", calibrate.DefaultDepth, "bisection steps once the grid brackets the knee")
		fs.DurationVar(&cooldown, "cooldown", calibrate.DefaultCooldown, "least pause between probes")
		fs.StringVarP(&evidence, "output", "o", "calibrate.csv", "evidence table (CSV)")
		fs.StringVar(&resOut, "results", "", "also append every probe's attempts to this results file")
		rf.add(fs, false)
		tf.add(fs)
		return c
	})
}
