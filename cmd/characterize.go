package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/results"
)

// Defaults of the main job. On the embedded simulator's defaults they give
// each group well over 50 429s with a usable wait in about 23 s: four
// waves of 40 overrun the bucket and its burst allowance (the first wave's
// refusals make the long tail); the schedule warms up under the
// sustainable rate (about 5.9 requests/s for the default request), then
// ramps to four times it. sim's TestDefaultsMakeALongTail plays this plan.
const (
	DefaultCharacterizeBurstSize  = 40
	DefaultCharacterizeBurstWaves = 4
	DefaultCharacterizeBurstGap   = 2 * time.Second
	DefaultCharacterizeCap        = 10 * time.Minute
)

// DefaultCharacterizePhases is the scheduled plan when neither --rate nor
// --phase is given.
var DefaultCharacterizePhases = []string{"warmup:3s@3/s", "ramp:12s@3/s-24/s"}

func init() {
	register(func() *cobra.Command {
		var (
			tf           targetFlags
			rf           runFlags
			bf           burstFlags
			sf           scheduleFlags
			af           analyzeFlags
			skipBurst    bool
			skipSchedule bool
			appendRows   bool
			maxDuration  time.Duration
		)
		c := &cobra.Command{
			Use:   "characterize",
			Short: "Run a burst plan, then a scheduled plan, and write the whole report",
			Long: `characterize is the main job: it fires a burst plan, then a scheduled plan,
at the target (the embedded PTU simulator when no --endpoint or --url is
given), records every attempt in OUT-DIR/results.csv, analyzes it into
OUT-DIR (percentile CSV, events CSV, ECDF and histogram charts, summary.md,
analysis.json), prints the percentile table and the paths of what it wrote,
and checks any --fail-if thresholds (exit 3 on a breach).

Burst flags carry a burst- prefix (--burst-size, --burst-waves, --burst-gap,
--burst-spread, --burst-wait-wave). The scheduled plan takes --rate with
--duration, or --phase (default: ` + fmt.Sprint(DefaultCharacterizePhases) + `).
OUT-DIR/results.csv is replaced unless --append is given.

--fail-if takes the same threshold expressions as analyze (see
'ptuprobe analyze --help' and docs/thresholds.md).`,
			Example: `  # The main job on the embedded simulator (no credentials needed)
  ptuprobe characterize --out-dir report

  # Against an Azure OpenAI deployment, conservative, with CI thresholds
  AZURE_OPENAI_API_KEY=... ptuprobe characterize --endpoint https://NAME.openai.azure.com \
      --deployment DEPLOYMENT --burst-size 10 --burst-waves 2 --rate 1/s --duration 60s \
      --out-dir report --fail-if 'overall.p99_ms>30000' --fail-if 'errors>0'`,
			Args: noArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				if skipBurst && skipSchedule {
					return usageError("--skip-burst and --skip-schedule leave nothing to run")
				}
				if len(sf.phases) == 0 && sf.rate == "" {
					sf.phases = DefaultCharacterizePhases
				}
				var plans []trafficPlan
				if !skipBurst {
					p, err := bf.plan(results.GroupBurst)
					if err != nil {
						return err
					}
					plans = append(plans, p)
				}
				if !skipSchedule {
					p, err := sf.plan(results.GroupScheduled)
					if err != nil {
						return err
					}
					plans = append(plans, p)
				}
				var planned int
				var span time.Duration
				for _, p := range plans {
					planned += p.planned
					span += p.span
				}
				if err := rf.validate(planned); err != nil {
					return err
				}
				if maxDuration <= 0 {
					return usageError("--max-duration must be positive")
				}
				if span >= maxDuration {
					return usageError("the plans span %s, longer than --max-duration %s; raise it deliberately if you mean it", span, maxDuration)
				}
				if _, err := af.validate(); err != nil {
					return err
				}
				return characterize(c.Context(), plans, &tf, &rf, &af, appendRows, maxDuration, c.OutOrStdout(), c.ErrOrStderr())
			},
		}
		fs := c.Flags()
		bf.add(c, "burst-", DefaultCharacterizeBurstSize, DefaultCharacterizeBurstWaves, DefaultCharacterizeBurstGap)
		sf.add(fs, DefaultScheduleDuration)
		fs.BoolVar(&skipBurst, "skip-burst", false, "run only the scheduled plan")
		fs.BoolVar(&skipSchedule, "skip-schedule", false, "run only the burst plan")
		fs.BoolVar(&appendRows, "append", false, "append to OUT-DIR/results.csv instead of replacing it (the report then covers every run in it)")
		fs.DurationVar(&maxDuration, "max-duration", DefaultCharacterizeCap, "safety cap on the time spent sending")
		rf.add(fs, false)
		rf.addRetry(fs)
		tf.add(fs)
		af.add(fs)
		return c
	})
}

// characterize runs the plans in order into one results file, then the
// analysis.
func characterize(ctx context.Context, plans []trafficPlan, tf *targetFlags, rf *runFlags, af *analyzeFlags, appendRows bool, maxDuration time.Duration, stdout, stderr io.Writer) error {
	if err := os.MkdirAll(af.outDir, 0o755); err != nil {
		return asUsage(fmt.Errorf("create --out-dir: %w", err))
	}
	path := filepath.Join(af.outDir, "results.csv")
	if !appendRows {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("replace %s: %w", path, err)
		}
	}
	tgt, closeTarget, err := tf.open(ctx, rf.maxInFlight, rf.quiet, stderr)
	if err != nil {
		return err
	}
	defer closeTarget()
	w, err := results.Create(path)
	if err != nil {
		return asUsage(err)
	}
	runID := results.NewRunID()
	started := time.Now()
	var runErr error
	var total dispatch.Outcome
	for _, p := range plans {
		left := maxDuration - time.Since(started)
		tally, out, err := runPlan(ctx, p, tgt, w, runID, rf, left, stderr)
		total.Sent += out.Sent
		total.Written += out.Written
		total.Interrupted = total.Interrupted || out.Interrupted
		if out.CappedBy != dispatch.NoCap {
			total.CappedBy = out.CappedBy
		}
		if !rf.quiet {
			fmt.Fprintf(stderr, "%s plan: ", p.shape)
			tally.Snapshot().WriteSummary(stderr)
		}
		if err != nil {
			runErr = err
			break
		}
	}
	cerr := w.Close()
	if err := finishRun(total, runErr, cerr, path, stderr); err != nil {
		if errors.Is(runErr, dispatch.ErrInterrupted) {
			fmt.Fprintf(stderr, "no report written; analyze what was recorded with: ptuprobe analyze %s --out-dir %s\n", path, af.outDir)
		}
		return err
	}
	fmt.Fprintf(stdout, "results: %s (%d rows)\n\n", path, total.Written)
	return runAnalyze(ctx, af, []string{path}, stdout, stderr)
}
