package report

import (
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ptuprobe/ptuprobe/analyze"
)

// The chart kit: the house style of report's charts, for the few outputs
// that draw their own (the policy lab's, in internal/policylab). Each is
// a thin name for what report's own charts use.

// NewChart returns a plot in the house style: title, axis labels, text
// sized for ChartWidthPx × ChartHeightPx, a light grid.
func NewChart(title, xLabel, yLabel string) *plot.Plot { return newChart(title, xLabel, yLabel) }

// SaveChart renders p in format (PNG, SVG, or a page's SVG variant that
// a Figure's Draw is given).
func SaveChart(w io.Writer, p *plot.Plot, format ImageFormat) error { return save(w, p, format) }

// ChartFont is the charts' typeface at size points.
func ChartFont(size vg.Length) font.Font { return sans(size) }

// SeriesStyle is the line of the i-th series: an Okabe–Ito colour, and
// past the six colours a dash pattern of its own, so that up to 18 series
// stay apart without relying on colour alone.
func SeriesStyle(i int) draw.LineStyle {
	s := draw.LineStyle{Color: groupColors[i%len(groupColors)], Width: vg.Points(2)}
	switch (i / len(groupColors)) % 3 {
	case 1:
		s.Dashes = []vg.Length{vg.Points(6), vg.Points(2), vg.Points(1), vg.Points(2)}
	case 2:
		s.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	}
	return s
}

// SeriesGlyph is the marker of the i-th series: its colour and a shape.
func SeriesGlyph(i int) draw.GlyphStyle {
	return draw.GlyphStyle{Color: groupColors[i%len(groupColors)], Shape: groupGlyphs[(i/len(groupColors)+i)%len(groupGlyphs)], Radius: vg.Points(5)}
}

// LogAxis makes ax a log10 axis over [lo, hi] (lo > 0) with the charts'
// decade ticks; it returns the axis minimum, where a value under it is
// drawn.
func LogAxis(ax *plot.Axis, lo, hi float64) (floor float64) { return waitAxis(ax, lo, hi, true) }

// LinearAxis spans ax over [lo, hi] rounded out to a nice step, with
// labelled ticks at every step.
func LinearAxis(ax *plot.Axis, lo, hi float64) { linearAxis(ax, lo, hi) }

// ShareTicks label a 0–1 share axis in percent, every 20%.
var ShareTicks plot.Ticker = shareTicks{}

// ECDFLine is the step curve of the empirical CDF of sorted, in at most
// maxSteps steps, a value under floor drawn at floor (a log axis's
// minimum); nil for no value.
func ECDFLine(sorted []float64, maxSteps int, floor float64, style draw.LineStyle) (*plotter.Line, error) {
	steps := analyze.ECDF(sorted, maxSteps)
	if len(steps) == 0 {
		return nil, nil
	}
	pts := make(plotter.XYs, 0, len(steps))
	for _, s := range steps {
		pts = append(pts, plotter.XY{X: math.Max(s.Wait, floor), Y: s.Share})
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	line.StepStyle = plotter.PostStep
	line.LineStyle = style
	return line, nil
}

// CSVCell writes a text as a CSV cell the way every CSV of ptuprobe's
// does (csvField): a formula neutralised, a quote, comma or line break
// quoted.
func CSVCell(s string) string { return csvField(s) }
