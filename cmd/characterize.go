package cmd

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/charplan"
	"github.com/ptuprobe/ptuprobe/sim"
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
	refillRest   time.Duration
	probeNote    string // why the refill probe is off, when the caps left it off
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
	plans, err := ch.plans(c.Flags())
	if err != nil {
		return settingError(err, characterizeNames)
	}
	path := filepath.Join(ch.af.outDir, "results.csv")
	analysis, err := ch.af.job([]string{path}, stderr)
	if err != nil {
		return err
	}
	analysis.Command, analysis.Settings = c.CommandPath(), reportSettings(c.Flags())
	ch.rf.slo = ch.af.slo // the run's summary counts the goodput the report does
	r, err := newTrafficRun(plans, &ch.tf, &ch.rf, ch.maxDuration, path, merge(ch.bf.names(), flagNames{"Budget": "--max-duration", "Output": "--out-dir"}), stdout, stderr)
	if err != nil {
		return err
	}
	r.job.Replace = !ch.appendRows
	if ch.rf.dryRun {
		r.writeDryRun(stdout, &ch.tf)
		if ch.probeNote != "" {
			fmt.Fprintln(stdout, ch.probeNote)
		}
		fmt.Fprintf(stdout, "report: %s\n", ch.af.outDir)
		return nil
	}
	defer r.stopMetrics()
	r.perPlan = true
	if !ch.rf.quiet {
		fmt.Fprintf(stderr, "characterize: %s, expected to take about %s, then the report\n", r.job.Count(), about(r.job.Span()))
	}
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

// characterizeNames are the flags characterize's own settings are
// refused by.
var characterizeNames = flagNames{"RefillRest": "--refill-rest", "MaxRequests": "--max-requests", "Budget": "--max-duration", "Start": "--start-at", "Shard": "--shard", "Group": "--group"}

// plans are the burst and scheduled plans the flags ask for, and the
// refill probe after them (campaign.RefillChoice: the default plans', or
// any burst plan's when --refill-rest is given).
func (ch *characterizeCmd) plans(fs *pflag.FlagSet) ([]campaign.Plan, error) {
	fleet := ch.rf.fleet.shard != "" || ch.rf.fleet.startAt != ""
	m := campaign.MainPlans{
		Wave:     burst.Config{Size: ch.bf.size, Waves: ch.bf.waves, Gap: ch.bf.gap, Spread: ch.bf.spread},
		WaitWave: ch.bf.waitWave,
		// The default burst plan grows its waves to first contact and
		// sizes the default ramp; a fleet's plans, on a common
		// timeline, are as given.
		Grow:     !ch.bf.given(fs) && !fleet,
		SizeRamp: ch.sf.defaulted() && !fleet,
		Refill: campaign.RefillChoice{
			Rest: ch.refillRest, Given: fs.Changed("refill-rest"), Named: ch.bf.given(fs) || !ch.sf.defaulted(),
			Fleet: fleet, Group: ch.rf.group != "", Size: ch.bf.size, MaxRequests: ch.rf.maxRequests, Budget: ch.maxDuration,
		},
		MaxRequests: ch.rf.maxRequests, MaxInFlight: ch.rf.maxInFlight,
	}
	if !ch.skipBurst {
		p, err := ch.bf.plan()
		if err != nil {
			return nil, err
		}
		m.Burst = &p
	}
	if !ch.skipSchedule {
		p, err := ch.sf.plan(charplan.Phases())
		if err != nil {
			return nil, err
		}
		m.Sched, m.Schedule = &p, ch.sf.built
	}
	plans, note, err := m.Plans()
	ch.probeNote = note
	return plans, err
}

func init() {
	register(func() *cobra.Command {
		ch := &characterizeCmd{}
		c := &cobra.Command{
			Use:   "characterize",
			Short: "Run a burst plan, then a scheduled plan, and write the whole report",
			Long: `characterize is the main job: a burst plan (waves grown to first contact), a
scheduled plan (` + strings.Join(charplan.PhaseSpecs(), " ") + `, sized by the waves; --replay:
a trace), a refill probe (--refill-rest); each attempt in OUT-DIR/results.csv
(replaced unless --append); the report in OUT-DIR (CSVs, charts, summary.md,
analysis.json, report.html), the table, --fail-if (exit 3); --dry-run: the plan.

Given no target, it runs the simulator's documents profile, fitted to the
published waits ('ptuprobe help simulator'): mostly tens of milliseconds, a
few long waits of seconds (--sim-profile ptu: the earlier model).`,
			Example: `  # The main job on the embedded simulator (no credentials needed)
  ptuprobe characterize --out-dir ptuprobe-report

  # Against an Azure OpenAI deployment, conservative, with CI thresholds
  AZURE_OPENAI_API_KEY=... ptuprobe characterize --endpoint https://NAME.openai.azure.com \
      --deployment DEPLOYMENT --burst-size 10 --burst-waves 2 --rate 1/s --duration 60s \
      --out-dir ptuprobe-report --fail-if 'overall.p99_ms>30000' --fail-if 'errors>0'`,
			Args: noArgs,
			RunE: ch.run,
		}
		fs := c.Flags()
		ch.bf.add(c, "burst-", charplan.Burst())
		ch.sf.add(fs, DefaultScheduleDuration)
		fs.BoolVar(&ch.skipBurst, "skip-burst", false, "run only the scheduled plan")
		fs.BoolVar(&ch.skipSchedule, "skip-schedule", false, "run only the burst plan")
		fs.BoolVar(&ch.appendRows, "append", false, "append to OUT-DIR/results.csv instead of replacing it (the report then covers every run in it)")
		fs.DurationVar(&ch.maxDuration, "max-duration", charplan.Cap, "safety cap on the time spent sending: no attempt, retries included, goes past it")
		fs.DurationVar(&ch.refillRest, "refill-rest", charplan.RefillRest, "the rest before the refill probe after the default plans: parts of the job's request until the first 429, their size set by the first burst wave (0: off; given, it follows any burst plan; docs/fit.md)")
		ch.rf.add(fs, false)
		ch.rf.addRetry(fs)
		ch.rf.addFleet(fs)
		ch.rf.addMetrics(fs)
		ch.tf.add(fs)
		ch.tf.simProfile.defaultTo(sim.ProfileDocuments)
		ch.af.add(fs)
		alias(c, burstRenames)
		return c
	})
}
