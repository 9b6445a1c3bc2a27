package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/internal/publish"
	"github.com/ptuprobe/ptuprobe/report"
)

// DefaultOutDir is where analyze writes its report.
const DefaultOutDir = "ptuprobe-report"

// progressFromBytes is the input size from which a terminal gets a
// progress bar; smaller inputs are read before a bar would be seen.
const progressFromBytes = 16 << 20

// analyzeFlags holds every flag of analyze; characterize registers the
// same set and runs the same analysis.
type analyzeFlags struct {
	outDir      string
	labels      []string
	columns     []string
	logX        bool
	minGroup    int
	timeline    bool
	failIf      []string
	valueColumn string
	groupColumn string
	groupBy     string
	loadWindow  time.Duration
	valueUnit   string
	statusCol   string
	slo         analyze.SLO
	baseline    string
}

// add registers the analyze flags on fs.
func (f *analyzeFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.outDir, "out-dir", DefaultOutDir, "directory for the report (created if needed)")
	fs.StringArrayVar(&f.labels, "label", nil, "rename a group in the report: FROM=TO (repeatable; TO: printable, no comma, ≤ 64 characters)")
	fs.StringSliceVar(&f.columns, "columns", nil, "extra columns after count,p50,p90,p99,max: any of min,p10,p25,p75,p95,p999,mean")
	fs.BoolVar(&f.logX, "log-x", false, "draw advised waits on a log axis (long tails), with log-spaced histogram bins")
	fs.IntVar(&f.minGroup, "min-group", analyze.DefaultMinGroup, "publish percentiles only for groups with at least this many usable waits")
	fs.BoolVar(&f.timeline, "timeline", false, "also draw "+report.TimelineFile+" (ptuprobe results only; shows send times, so not part of the sanitized set)")
	fs.StringArrayVar(&f.failIf, "fail-if", nil, "exit 3 when this comparison holds, e.g. 'overall.p99_ms>20000' (repeatable; see below)")
	fs.StringVar(&f.valueColumn, "value-column", "", "foreign CSV: the column holding the advised wait in ms (default "+analyze.DefaultValueColumn+")")
	fs.StringVar(&f.groupColumn, "group-column", "", "foreign CSV: the column holding the group (default source_group if present, else one group named after the file)")
	fs.DurationVar(&f.loadWindow, "load-window", analyze.DefaultLoadWindow, "the window of load before each 429 in "+report.OvershootPNGFile+": what was intended in it, per second (1ms to 1h)")
	fs.StringVar(&f.valueUnit, "value-unit", "", "foreign CSV: the unit of the value column, ms or s (default ms; a column named like seconds, *_s or *_seconds, then gets a warning)")
	fs.StringVar(&f.statusCol, "status-column", "", "foreign CSV: a column of HTTP statuses; only its 429 rows are events (default the column "+analyze.DefaultStatusColumn+" when present)")
	fs.Var(&f.slo, "slo", sloUsage+"; analyze refuses ttft, tpot and itl on a file with no streamed answer")
	fs.StringVar(&f.groupBy, "group-by", string(analyze.GroupByGroup), "group ptuprobe results by: group (the source groups), dialect (whose rate-limit fields the responses spoke) or worker (which worker of a fleet run sent them: --shard)")
}

// badInputHints say which flag fixes an input analyze refused.
var badInputHints = map[string]string{
	"Labels":   "--label FROM=TO renames a group, or merges several under one label",
	"Value":    "name the column with --value-column",
	"Group":    "check --group-column",
	"Status":   "check --status-column",
	"Baseline": "--baseline names a previous run's results.csv, or a report directory holding one",
}

var analyzeFlagNames = flagNames{"Paths": "the arguments", "OutDir": "--out-dir", "MinGroup": "--min-group", "LoadWindow": "--load-window"}

// job parses and checks every flag into a publish job for paths, so a bad
// --label or --fail-if is a usage error before any work (characterize
// calls it before sending anything).
func (f *analyzeFlags) job(paths []string, stderr io.Writer) (publish.Job, error) {
	j := publish.Job{
		Paths: paths, OutDir: f.outDir, MinGroup: f.minGroup, LogX: f.logX, Timeline: f.timeline, LoadWindow: f.loadWindow, SLO: f.slo, Baseline: f.baseline,
		Foreign: analyze.ForeignColumns{Value: f.valueColumn, Group: f.groupColumn},
	}
	var err error
	j.Foreign.Status = f.statusCol
	if f.valueUnit != "" {
		if j.Foreign.Unit, err = analyze.ParseUnit(f.valueUnit); err != nil {
			return j, usageError("--value-unit: %v", err)
		}
	}
	if j.GroupBy, err = analyze.ParseGroupBy(f.groupBy); err != nil {
		return j, usageError("--group-by: %v", err)
	}
	if j.Labels, err = analyze.ParseLabels(f.labels); err != nil {
		return j, usageError("--label: %v", err)
	}
	if j.Columns, err = analyze.ParseColumns(f.columns); err != nil {
		return j, usageError("--columns: %v", err)
	}
	for _, e := range f.failIf {
		t, err := analyze.ParseThreshold(e)
		if err != nil {
			return j, usageError("--fail-if: %v", err)
		}
		if t.Change && f.baseline == "" {
			return j, usageError("--fail-if %s: a change (a signed bound in %%) needs --baseline", t.Expr)
		}
		if (t.Metric == "goodput" || t.Metric == "goodput_per_s") && f.slo.IsZero() {
			return j, usageError("--fail-if %s: goodput needs --slo", t.Expr)
		}
		j.Thresholds = append(j.Thresholds, t)
	}
	if isTerminal(stderr) {
		j.Progress = func(total int64) (io.Writer, func()) { return readingBar(stderr, total) }
	}
	return j, settingError(j.Validate(), analyzeFlagNames)
}

// addBaseline registers --baseline (analyze only: characterize's run is
// compared by analyzing its results.csv).
func (f *analyzeFlags) addBaseline(fs *pflag.FlagSet) {
	fs.StringVar(&f.baseline, "baseline", "", "compare every figure with a previous run's: its results file, or a report directory holding results.csv; each change with whether it is beyond the runs' noise (a seeded bootstrap), and --fail-if terms on the change, e.g. 'ttft_p99>+10%'")
}

// readingBar is a byte progress bar on stderr for large inputs.
func readingBar(stderr io.Writer, total int64) (io.Writer, func()) {
	if total < progressFromBytes {
		return io.Discard, func() {}
	}
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetDescription("reading"),
		progressbar.OptionShowBytes(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	return bar, func() { _ = bar.Finish() }
}

// runAnalyze runs j, prints the table and the written paths to stdout, and
// reports --fail-if: a breach returns an *ExitError with ExitThreshold.
func runAnalyze(ctx context.Context, j publish.Job, stdout, stderr io.Writer) error {
	res, err := publish.Run(ctx, j)
	var bad *analyze.BadInputError
	switch {
	case errors.As(err, &bad):
		if hint, ok := badInputHints[bad.Setting]; ok {
			return usageError("%v; %s", err, hint)
		}
		return asUsage(err)
	case errors.Is(err, publish.ErrInterrupted):
		return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("interrupted before the report was written; no report written")}
	case err != nil:
		return settingError(err, analyzeFlagNames)
	}
	a := res.Analysis
	if err := report.WriteTable(stdout, a, j.Columns); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	if a.HasRequests() {
		if err := report.WriteRequestsTable(stdout, a); err != nil {
			return err
		}
		fmt.Fprintln(stdout)
	}
	if a.Overall.Requests.Streamed > 0 {
		if err := report.WriteTokensTable(stdout, a); err != nil {
			return err
		}
		fmt.Fprintln(stdout)
	}
	if a.Goodput() != nil {
		if err := report.WriteGoodputTable(stdout, a); err != nil {
			return err
		}
		fmt.Fprintln(stdout)
	}
	if a.Baseline != nil {
		if err := report.WriteBaselineTable(stdout, a); err != nil {
			return err
		}
		fmt.Fprintln(stdout)
	}
	for _, p := range res.Written {
		fmt.Fprintf(stdout, "wrote %s\n", p)
	}
	for _, n := range a.ReadNotes {
		fmt.Fprintf(stderr, "ptuprobe: %s\n", n)
	}
	for _, w := range a.Warnings {
		fmt.Fprintf(stderr, "ptuprobe: warning: %s\n", w)
	}
	if j.Timeline && a.ResultsFiles == 0 {
		fmt.Fprintf(stderr, "ptuprobe: warning: --timeline needs ptuprobe results (foreign CSVs carry no send times); no timeline written\n")
	}
	return reportVerdicts(res, stdout, stderr)
}

// reportVerdicts prints --fail-if: passes to stdout, breaches and
// thresholds that could not be measured to stderr.
func reportVerdicts(res publish.Result, stdout, stderr io.Writer) error {
	for _, v := range res.Verdicts {
		note := ""
		if v.Note != "" {
			note = " (" + v.Note + ")"
		}
		switch {
		case !v.Measurable:
			fmt.Fprintf(stderr, "ptuprobe: warning: threshold %s not measured%s\n", v.Expr, note)
		case v.Breached:
			fmt.Fprintf(stderr, "ptuprobe: threshold %s breached: measured %s%s\n", v.Expr, report.Number(v.Measured), note)
		default:
			fmt.Fprintf(stdout, "threshold %s passed: measured %s%s\n", v.Expr, report.Number(v.Measured), note)
		}
	}
	if n := res.Breached(); n > 0 {
		return &ExitError{Code: ExitThreshold, Err: fmt.Errorf("%d of %d --fail-if thresholds breached", n, len(res.Verdicts))}
	}
	return nil
}

const analyzeLong = `analyze turns recorded traffic into what an operator publishes: the
percentile table, the ECDF chart and a summary that carry group labels and
numbers only — no secret, no host, no timing.

Inputs are merged. A ptuprobe results file is recognized by its header: its
429 rows are the events, grouped by their group. Any other CSV is read as one
429 event per row: --value-column names the wait in ms (default
retry_after_ms), --group-column the group (default source_group when present,
else one group named after the file).

Written into --out-dir: retry_after_ms_percentiles.csv, retry_after_ms_events.csv,
summary.md, analysis.json, retry_after_ms_ecdf.png/.svg,
retry_after_ms_histogram.png, report.html (all of it on one self-contained
page, with the flags given: values that could name the target left out), and
with --timeline retry_after_ms_timeline.png (not part of the sanitized set: it
shows send times; report.html leaves it out). For ptuprobe results,
retry_after_vs_load.png/.svg too: each 429's advised wait against the
requests offered in the --load-window before it (every request intended
then, any status or attempt), with Spearman's rho and a Theil-Sen line per
group in summary.md, analysis.json and report.html, against offered tokens/s
(prompt_tokens + max_tokens) and the reported utilization as well.

Thresholds (--fail-if, repeatable): [group.]metric OP number, OP one of
> >= < <= == !=. The run exits 3 when any comparison holds.
  groups:   overall, burst (the burst-shaped group), scheduled (the
            scheduled-shaped group), or any group by its raw name
  metrics:  count, p50_ms, p90_ms, p99_ms, max_ms, min_ms, p10_ms, p25_ms,
            p75_ms, p95_ms, p999_ms, mean_ms, share_429, attempts, invalid, late
  top-level (no group): errors, attempts, total_429, late
A percentile of a group below --min-group, or share_429 without attempts,
cannot be measured: it is reported and does not fail the run. See
docs/thresholds.md.

Exit codes: 0 ok, 1 I/O failure, 2 bad flags or input, 3 threshold breached.`

type analyzeCmd struct{ af analyzeFlags }

func (a *analyzeCmd) run(c *cobra.Command, args []string) error {
	j, err := a.af.job(args, c.ErrOrStderr())
	if err != nil {
		return err
	}
	j.Command, j.Settings = c.CommandPath(), reportSettings(c.Flags())
	return runAnalyze(c.Context(), j, c.OutOrStdout(), c.ErrOrStderr())
}

func init() {
	register(func() *cobra.Command {
		a := &analyzeCmd{}
		c := &cobra.Command{
			Use:   "analyze FILE...",
			Short: "Turn results files (or foreign CSVs) into percentile tables, ECDF charts and a summary",
			Long:  analyzeLong,
			Example: `  ptuprobe analyze results.csv
  ptuprobe analyze --log-x --out-dir report/ day1.csv day2.csv
  ptuprobe analyze --group-column source --label task013="Burst-shaped source" events.csv
  ptuprobe analyze --fail-if 'overall.p99_ms>20000' --fail-if 'errors>0' results.csv
  ptuprobe analyze --group-by worker --out-dir by-worker worker-*/results.csv   # a fleet run, worker by worker`,
			Args: cobra.ArbitraryArgs,
			RunE: a.run,
		}
		a.af.add(c.Flags())
		a.af.addBaseline(c.Flags())
		return c
	})
}
