package cmd

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/charplan"
)

type characterizeCmd struct {
	tf           targetFlags
	rf           runFlags
	bf           burstFlags
	sf           scheduleFlags
	af           analyzeFlags
	skipBurst    bool
	skipSchedule bool
	appendRows   bool
	maxDuration  time.Duration
}

// run checks every flag (the analysis's too) before sending anything, sends
// the burst plan then the scheduled plan into OUT-DIR/results.csv, and
// analyzes it into OUT-DIR.
func (ch *characterizeCmd) run(c *cobra.Command, _ []string) error {
	stdout, stderr := c.OutOrStdout(), c.ErrOrStderr()
	if ch.skipBurst && ch.skipSchedule {
		return usageError("--skip-burst and --skip-schedule leave nothing to run")
	}
	if ch.maxDuration <= 0 {
		return usageError("--max-duration must be positive")
	}
	var plans []campaign.Plan
	if !ch.skipBurst {
		p, err := ch.bf.plan()
		if err != nil {
			return err
		}
		plans = append(plans, p)
	}
	if !ch.skipSchedule {
		p, err := ch.sf.plan(charplan.Phases())
		if err != nil {
			return err
		}
		plans = append(plans, p)
	}
	path := filepath.Join(ch.af.outDir, "results.csv")
	analysis, err := ch.af.job([]string{path}, stderr)
	if err != nil {
		return err
	}
	analysis.Command, analysis.Settings = c.CommandPath(), reportSettings(c.Flags())
	r, err := newTrafficRun(plans, &ch.tf, &ch.rf, ch.maxDuration, path, merge(ch.bf.names(), flagNames{"Budget": "--max-duration", "Output": "--out-dir"}), stdout, stderr)
	if err != nil {
		return err
	}
	defer r.stopMetrics()
	r.job.Replace = !ch.appendRows
	r.perPlan = true
	out, _, err := r.run(c.Context())
	if err != nil {
		if ee := (*ExitError)(nil); errors.As(err, &ee) && ee.Code == ExitInterrupted && out.Written > 0 {
			fmt.Fprintf(stderr, "no report written; analyze what was recorded with: ptuprobe analyze %s --out-dir %s\n", path, ch.af.outDir)
		}
		return err
	}
	fmt.Fprintf(stdout, "results: %s (%d rows)\n\n", path, out.Written)
	return runAnalyze(c.Context(), analysis, stdout, stderr)
}

func init() {
	register(func() *cobra.Command {
		ch := &characterizeCmd{}
		c := &cobra.Command{
			Use:   "characterize",
			Short: "Run a burst plan, then a scheduled plan, and write the whole report",
			Long: `characterize is the main job: it fires a burst plan, then a scheduled plan,
at the target (the embedded PTU simulator when no --endpoint or --url is
given), records every attempt in OUT-DIR/results.csv, analyzes it into
OUT-DIR (percentile CSV, events CSV, ECDF and histogram charts, summary.md,
analysis.json, and report.html: all of it on one page), prints the percentile
table and the paths of what it wrote, and checks any --fail-if thresholds
(exit 3 on a breach).

Burst flags carry a burst- prefix (--burst-size, --burst-waves, --burst-gap,
--burst-spread, --burst-wait-wave). The scheduled plan takes --rate with
--duration, or --phase (default: ` + fmt.Sprint(charplan.PhaseSpecs()) + `).
OUT-DIR/results.csv is replaced unless --append is given.

--fail-if takes the same threshold expressions as analyze (see
'ptuprobe analyze --help' and docs/thresholds.md).
` + fleetHelp + ` Each worker's OUT-DIR holds its own share and the
report of it.`,
			Example: `  # The main job on the embedded simulator (no credentials needed)
  ptuprobe characterize --out-dir ptuprobe-report

  # Against an Azure OpenAI deployment, conservative, with CI thresholds
  AZURE_OPENAI_API_KEY=... ptuprobe characterize --endpoint https://NAME.openai.azure.com \
      --deployment DEPLOYMENT --burst-size 10 --burst-waves 2 --rate 1/s --duration 60s \
      --out-dir ptuprobe-report --fail-if 'overall.p99_ms>30000' --fail-if 'errors>0'

  # One of four workers of a fleet (the same flags on each, its own --shard),
  # then the fleet's report from every worker's results
  ptuprobe characterize --shard 1/4 --start-at 2026-05-01T12:00:00Z --out-dir worker-1
  ptuprobe analyze worker-*/results.csv --out-dir fleet`,
			Args: noArgs,
			RunE: ch.run,
		}
		fs := c.Flags()
		ch.bf.add(c, "burst-", charplan.Burst())
		ch.sf.add(fs, DefaultScheduleDuration)
		fs.BoolVar(&ch.skipBurst, "skip-burst", false, "run only the scheduled plan")
		fs.BoolVar(&ch.skipSchedule, "skip-schedule", false, "run only the burst plan")
		fs.BoolVar(&ch.appendRows, "append", false, "append to OUT-DIR/results.csv instead of replacing it (the report then covers every run in it)")
		fs.DurationVar(&ch.maxDuration, "max-duration", charplan.Cap, "safety cap on the time spent sending")
		ch.rf.add(fs, false)
		ch.rf.addRetry(fs)
		ch.rf.addFleet(fs)
		ch.rf.addMetrics(fs)
		ch.tf.add(fs)
		ch.af.add(fs)
		alias(c, burstRenames)
		return c
	})
}
