package report

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/ptuprobe/ptuprobe/analyze"
)

// File names of the published set, inside the output directory.
const (
	PercentilesFile = "retry_after_ms_percentiles.csv"
	EventsFile      = "retry_after_ms_events.csv"
	SummaryFile     = "summary.md"
	AnalysisFile    = "analysis.json"
	ECDFPNGFile     = "retry_after_ms_ecdf.png"
	ECDFSVGFile     = "retry_after_ms_ecdf.svg"
	HistogramFile   = "retry_after_ms_histogram.png"
	TimelineFile    = "retry_after_ms_timeline.png"
	// OvershootPNGFile and OvershootSVGFile plot each advised wait against
	// the load offered before it (ptuprobe results only).
	OvershootPNGFile = "retry_after_vs_load.png"
	OvershootSVGFile = "retry_after_vs_load.svg"
)

// Options choose what Write produces.
type Options struct {
	// Columns are the statistics of the tables (analyze.ParseColumns).
	Columns []analyze.Statistic
	// LogX draws waits on a log axis, for long tails.
	LogX bool
	// Timeline adds the timeline chart; it shows send times, so it is
	// outside the sanitized set and the summary says so.
	Timeline bool
	// Command and Settings name the command that made the report and the
	// flags given to it, for report.html's settings section (none when
	// Command is empty). The caller withholds every value that could name
	// the target or carry free text (Setting.Withheld).
	Command  string
	Settings []Setting
}

func (o Options) columns() []analyze.Statistic { return orDefault(o.Columns) }

// orDefault returns cols, or the default columns when none are chosen.
func orDefault(cols []analyze.Statistic) []analyze.Statistic {
	if len(cols) == 0 {
		return analyze.Statistics[:analyze.DefaultStatistics]
	}
	return cols
}

// Write writes the report into dir (created if needed) and returns the
// paths written, in a stable order. It is all or nothing: every file is
// first written under a temporary name in dir, and only once all are
// written are they renamed to their names. When ctx is done before that
// (it is looked at between files and within long writes), or a file
// fails, the temporaries and any directory Write created are removed, and
// dir keeps what it held — an earlier report stays whole; on a cancel the
// error wraps ctx.Err().
func Write(ctx context.Context, dir string, a *analyze.Analysis, opts Options) ([]string, error) {
	cols := opts.columns()
	outputs := []output{
		{PercentilesFile, func(w io.Writer) error { return WritePercentiles(w, a, cols) }},
		{EventsFile, func(w io.Writer) error { return WriteEvents(w, a) }},
		{SummaryFile, func(w io.Writer) error { return WriteSummary(w, a, opts) }},
		{AnalysisFile, func(w io.Writer) error { return WriteJSON(w, a, opts) }},
		{ECDFPNGFile, func(w io.Writer) error { return WriteECDF(w, a, opts, PNG) }},
		{ECDFSVGFile, func(w io.Writer) error { return WriteECDF(w, a, opts, SVG) }},
		{HistogramFile, func(w io.Writer) error { return WriteHistogram(w, a, opts) }},
		{HTMLFile, func(w io.Writer) error { return WriteHTML(w, a, opts) }},
	}
	if opts.Timeline && a.ResultsFiles > 0 {
		outputs = append(outputs, output{TimelineFile, func(w io.Writer) error { return WriteTimeline(w, a, opts) }})
	}
	if a.Overshoot != nil {
		outputs = append(outputs,
			output{OvershootPNGFile, func(w io.Writer) error { return WriteOvershoot(w, a, opts, PNG) }},
			output{OvershootSVGFile, func(w io.Writer) error { return WriteOvershoot(w, a, opts, SVG) }})
	}
	return writeAll(ctx, dir, outputs)
}

// output is one file of a report: its name in the directory and what
// writes it.
type output struct {
	name  string
	write func(io.Writer) error
}

// writeAll writes outputs into dir, all or nothing (see Write). The files
// are written at once, one goroutine each, at most as many at a time as
// there are cores: charts are most of a report's time, and each is drawn
// apart from the others. The first failure, in the order of outputs, is
// the one returned.
func writeAll(ctx context.Context, dir string, outputs []output) (written []string, err error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("report not written: %w", err)
	}
	st, err := newStage(dir, len(outputs))
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			st.abort()
		}
	}()
	errs := make([]error, len(outputs))
	cores := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, o := range outputs {
		cores <- struct{}{}
		if err := ctx.Err(); err != nil {
			errs[i] = fmt.Errorf("report not written: %w", err)
			<-cores
			break
		}
		wg.Go(func() {
			errs[i] = st.add(ctx, i, o.name, o.write)
			<-cores
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("report not written: %w", err)
	}
	return st.commit()
}
