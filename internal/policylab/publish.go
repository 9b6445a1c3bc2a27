package policylab

import (
	"io"
	"path/filepath"

	"github.com/ptuprobe/ptuprobe/internal/atomicfile"
	"github.com/ptuprobe/ptuprobe/report"
)

// File names of the lab's outputs, beside its results.csv.
const (
	CSVFile      = "policies.csv"
	MarkdownFile = "policies.md"
)

// Publish writes the lab's table (CSV and Markdown), charts and
// report.html into dir and returns the paths written. Each file is written under a temporary
// name and renamed.
func Publish(dir string, ms []Measure, setup Setup) ([]string, error) {
	curves, points := curves(ms), points(ms)
	steps := []struct {
		name  string
		write func(io.Writer) error
	}{
		{CSVFile, func(w io.Writer) error { return WriteCSV(w, ms) }},
		{MarkdownFile, func(w io.Writer) error { return WriteMarkdown(w, ms, setup) }},
		{report.PolicyECDFPNGFile, func(w io.Writer) error { return report.WritePolicyECDF(w, curves, report.PNG) }},
		{report.PolicyECDFSVGFile, func(w io.Writer) error { return report.WritePolicyECDF(w, curves, report.SVG) }},
		{report.PolicyTradeoffFile, func(w io.Writer) error { return report.WritePolicyTradeoff(w, points) }},
		{report.HTMLFile, func(w io.Writer) error { return WriteHTML(w, ms, setup) }},
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

// curves are the policies' end-to-end latencies, for the ECDF chart.
func curves(ms []Measure) []report.PolicyCurve {
	out := make([]report.PolicyCurve, len(ms))
	for i, m := range ms {
		out[i] = report.PolicyCurve{Policy: m.Policy, E2E: m.E2E}
	}
	return out
}

// points are the policies' success and p99, for the trade-off chart.
func points(ms []Measure) []report.PolicyPoint {
	out := make([]report.PolicyPoint, len(ms))
	for i, m := range ms {
		out[i] = report.PolicyPoint{Policy: m.Policy, SuccessPct: 100 * m.SuccessShare(), P99MS: max(m.E2EPercentile(99), 0)}
	}
	return out
}
