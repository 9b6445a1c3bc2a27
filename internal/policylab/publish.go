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

// Publish writes the lab's table (CSV and Markdown) and charts into dir
// and returns the paths written. Each file is written under a temporary
// name and renamed.
func Publish(dir string, ms []Measure, setup Setup) ([]string, error) {
	curves := make([]report.PolicyCurve, len(ms))
	points := make([]report.PolicyPoint, len(ms))
	for i, m := range ms {
		curves[i] = report.PolicyCurve{Policy: m.Policy, E2E: m.E2E}
		points[i] = report.PolicyPoint{Policy: m.Policy, SuccessPct: 100 * m.SuccessShare(), P99MS: max(m.E2EPercentile(99), 0)}
	}
	steps := []struct {
		name  string
		write func(io.Writer) error
	}{
		{CSVFile, func(w io.Writer) error { return WriteCSV(w, ms) }},
		{MarkdownFile, func(w io.Writer) error { return WriteMarkdown(w, ms, setup) }},
		{report.PolicyECDFPNGFile, func(w io.Writer) error { return report.WritePolicyECDF(w, curves, report.PNG) }},
		{report.PolicyECDFSVGFile, func(w io.Writer) error { return report.WritePolicyECDF(w, curves, report.SVG) }},
		{report.PolicyTradeoffFile, func(w io.Writer) error { return report.WritePolicyTradeoff(w, points) }},
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
