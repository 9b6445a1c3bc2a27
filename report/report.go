package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/internal/atomicfile"
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
// paths written, in a stable order. Each file is written to a temporary
// name and renamed, so a failed run never leaves half a file under a
// published name.
func Write(dir string, a *analyze.Analysis, opts Options) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create output directory: %w", err)
	}
	cols := opts.columns()
	timeline := opts.Timeline && a.ResultsFiles > 0
	steps := []struct {
		name  string
		write func(io.Writer) error
	}{
		{PercentilesFile, func(w io.Writer) error { return WritePercentiles(w, a, cols) }},
		{EventsFile, func(w io.Writer) error { return WriteEvents(w, a) }},
		{SummaryFile, func(w io.Writer) error { return WriteSummary(w, a, opts) }},
		{AnalysisFile, func(w io.Writer) error { return WriteJSON(w, a, opts) }},
		{ECDFPNGFile, func(w io.Writer) error { return WriteECDF(w, a, opts, PNG) }},
		{ECDFSVGFile, func(w io.Writer) error { return WriteECDF(w, a, opts, SVG) }},
		{HistogramFile, func(w io.Writer) error { return WriteHistogram(w, a, opts) }},
	}
	if timeline {
		steps = append(steps, struct {
			name  string
			write func(io.Writer) error
		}{TimelineFile, func(w io.Writer) error { return WriteTimeline(w, a, opts) }})
	}
	var written []string
	for _, s := range steps {
		path := filepath.Join(dir, s.name)
		if err := atomicfile.Write(path, s.write); err != nil {
			return written, err
		}
		written = append(written, path)
	}
	return written, nil
}
