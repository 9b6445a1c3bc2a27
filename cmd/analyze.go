package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/report"
)

// DefaultOutDir is where analyze writes its report.
const DefaultOutDir = "ptuprobe-report"

// progressFromBytes is the input size from which a terminal gets a
// progress bar; smaller inputs are read before a bar would be seen.
const progressFromBytes = 16 << 20

// analyzeFlags holds every flag of analyze; characterize registers the
// same set with add and runs the same analysis with runAnalyze.
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
}

// analyzePlan is the validated form of analyzeFlags.
type analyzePlan struct {
	labels     analyze.Labels
	columns    []analyze.Statistic
	thresholds []analyze.Threshold
}

// validate checks every flag, so a bad --label or --fail-if is a usage
// error before any work (characterize calls it before its run).
func (f *analyzeFlags) validate() (analyzePlan, error) {
	var p analyzePlan
	var err error
	if strings.TrimSpace(f.outDir) == "" {
		return p, usageError("--out-dir is empty")
	}
	if f.minGroup < 1 {
		return p, usageError("--min-group %d: want at least 1", f.minGroup)
	}
	if p.labels, err = analyze.ParseLabels(f.labels); err != nil {
		return p, asUsage(err)
	}
	if p.columns, err = analyze.ParseColumns(f.columns); err != nil {
		return p, asUsage(err)
	}
	for _, e := range f.failIf {
		t, err := analyze.ParseThreshold(e)
		if err != nil {
			return p, asUsage(err)
		}
		p.thresholds = append(p.thresholds, t)
	}
	return p, nil
}

// runAnalyze reads paths (ptuprobe results and foreign CSVs, merged),
// writes the report into f.outDir, prints the table and the written paths
// to stdout, and evaluates --fail-if: a breach returns an *ExitError with
// ExitThreshold.
func runAnalyze(ctx context.Context, f *analyzeFlags, paths []string, stdout, stderr io.Writer) error {
	plan, err := f.validate()
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return usageError("no input file; give one or more results files or CSVs")
	}
	inputs, total, err := openInputs(paths)
	defer func() {
		for _, in := range inputs {
			in.Close()
		}
	}()
	if err != nil {
		return err
	}

	var bar *progressbar.ProgressBar
	if total >= progressFromBytes && isTerminal(stderr) {
		bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription("reading"),
			progressbar.OptionShowBytes(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	tally := analyze.NewTally(f.timeline)
	cols := analyze.ForeignColumns{Value: f.valueColumn, Group: f.groupColumn}
	for i, in := range inputs {
		var r io.Reader = in
		if bar != nil {
			r = io.TeeReader(in, bar)
		}
		if err := tally.Read(ctx, r, analyze.Input{Name: paths[i], Ordinal: i + 1}, cols); err != nil {
			return analyzeError(ctx, err)
		}
	}
	if bar != nil {
		_ = bar.Finish()
	}
	a, err := tally.Analysis(plan.labels, f.minGroup)
	if err != nil {
		return analyzeError(ctx, err)
	}
	written, err := report.Write(f.outDir, a, report.Options{Columns: plan.columns, LogX: f.logX, Timeline: f.timeline})
	if err != nil {
		return err
	}

	if err := report.WriteTable(stdout, a, plan.columns); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	for _, p := range written {
		fmt.Fprintf(stdout, "wrote %s\n", p)
	}
	for _, w := range a.Warnings {
		fmt.Fprintf(stderr, "ptuprobe: warning: %s\n", w)
	}
	if f.timeline && a.ResultsFiles == 0 {
		fmt.Fprintf(stderr, "ptuprobe: warning: --timeline needs ptuprobe results (foreign CSVs carry no send times); no timeline written\n")
	}
	return checkThresholds(a, plan.thresholds, stdout, stderr)
}

// openInputs opens every path before any is read, so a missing or
// unreadable file is a usage error before any work.
func openInputs(paths []string) ([]*os.File, int64, error) {
	var files []*os.File
	var total int64
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return files, 0, usageError("cannot read input: %v", err)
		}
		files = append(files, f)
		st, err := f.Stat()
		if err != nil {
			return files, 0, usageError("cannot read input: %v", err)
		}
		if st.IsDir() {
			return files, 0, usageError("cannot read input %s: it is a directory", p)
		}
		total += st.Size()
	}
	return files, total, nil
}

func analyzeError(ctx context.Context, err error) error {
	var bad *analyze.BadInputError
	switch {
	case errors.As(err, &bad):
		return asUsage(err)
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("interrupted while reading the input; no report written")}
	}
	return err
}

// checkThresholds evaluates --fail-if: passes go to stdout, breaches and
// thresholds that could not be measured to stderr.
func checkThresholds(a *analyze.Analysis, thresholds []analyze.Threshold, stdout, stderr io.Writer) error {
	breached := 0
	for _, t := range thresholds {
		v := t.Evaluate(a)
		note := ""
		if v.Note != "" {
			note = " (" + v.Note + ")"
		}
		switch {
		case !v.Measurable:
			fmt.Fprintf(stderr, "ptuprobe: warning: threshold %s not measured%s\n", t.Expr, note)
		case v.Breached:
			breached++
			fmt.Fprintf(stderr, "ptuprobe: threshold %s breached: measured %s%s\n", t.Expr, report.Number(v.Measured), note)
		default:
			fmt.Fprintf(stdout, "threshold %s passed: measured %s%s\n", t.Expr, report.Number(v.Measured), note)
		}
	}
	if breached > 0 {
		return &ExitError{Code: ExitThreshold, Err: fmt.Errorf("%d of %d --fail-if thresholds breached", breached, len(thresholds))}
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
retry_after_ms_histogram.png, and with --timeline retry_after_ms_timeline.png
(not part of the sanitized set: it shows send times).

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

func init() {
	register(func() *cobra.Command {
		f := &analyzeFlags{}
		c := &cobra.Command{
			Use:   "analyze FILE...",
			Short: "Turn results files (or foreign CSVs) into percentile tables, ECDF charts and a summary",
			Long:  analyzeLong,
			Example: `  ptuprobe analyze results.csv
  ptuprobe analyze --log-x --out-dir report/ day1.csv day2.csv
  ptuprobe analyze --group-column source --label task013="Burst-shaped source" events.csv
  ptuprobe analyze --fail-if 'overall.p99_ms>20000' --fail-if 'errors>0' results.csv`,
			Args: cobra.ArbitraryArgs,
			RunE: func(c *cobra.Command, args []string) error {
				return runAnalyze(c.Context(), f, args, c.OutOrStdout(), c.ErrOrStderr())
			},
		}
		f.add(c.Flags())
		return c
	})
}
