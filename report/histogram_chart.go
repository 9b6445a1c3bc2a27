package report

import (
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/ptuprobe/ptuprobe/analyze"
)

// histogramBins is the number of bars.
const histogramBins = 40

// HistogramTitle is the title of the histogram chart.
const HistogramTitle = "Advised wait after 429 in these runs, all groups (histogram; descriptive, not a guarantee)"

// WriteHistogram draws the histogram of every usable wait as a PNG: linear
// bins, or log-spaced bins on a log axis with LogX, so a long tail is not
// one bar at the left edge.
func WriteHistogram(w io.Writer, a *analyze.Analysis, opts Options) error {
	return writeHistogram(w, a, opts, PNG)
}

// writeHistogram is WriteHistogram in either format (report.html draws it
// as SVG).
func writeHistogram(w io.Writer, a *analyze.Analysis, opts Options, format ImageFormat) error {
	xLabel := "advised wait (ms)"
	if opts.LogX {
		xLabel = "advised wait (ms, log scale, log-spaced bins)"
	}
	p := newChart(HistogramTitle, xLabel, "429s")
	waits := a.Overall.Waits
	if len(waits) == 0 {
		waitAxis(&p.X, 1, 1000, opts.LogX)
		p.Y.Min, p.Y.Max = 0, 1
		p.Title.Text += " — no usable 429s"
		return save(w, p, format)
	}
	floor := waitAxis(&p.X, smallestPositive(waits), waits[len(waits)-1], opts.LogX)
	edges := binEdges(p.X.Min, p.X.Max, waits[len(waits)-1], opts.LogX)
	bins := make([]plotter.HistogramBin, len(edges)-1)
	for i := range bins {
		bins[i] = plotter.HistogramBin{Min: edges[i], Max: edges[i+1]}
	}
	// waits are sorted: walk the edges once.
	b := 0
	for _, v := range waits {
		v = math.Max(v, floor)
		for b < len(bins)-1 && v >= bins[b].Max {
			b++
		}
		bins[b].Weight++
	}
	h := &plotter.Histogram{
		Bins:      bins,
		Width:     edges[1] - edges[0],
		FillColor: color.RGBA{0x00, 0x72, 0xB2, 0xff},
	}
	h.LineStyle.Color = color.White
	h.LineStyle.Width = vg.Points(0.5)
	p.Add(h)
	tallest := 0.0
	for _, b := range bins {
		tallest = math.Max(tallest, b.Weight)
	}
	// Headroom so the tallest bar does not touch the frame.
	linearAxis(&p.Y, 0, tallest*1.05)
	return save(w, p, format)
}

// binEdges returns histogramBins+1 edges: evenly spaced over [0, max], or
// evenly spaced in log over the axis range.
func binEdges(axisMin, axisMax, max float64, logScale bool) []float64 {
	edges := make([]float64, histogramBins+1)
	if !logScale {
		if max <= 0 {
			max = 1
		}
		// A hair past max so the largest wait falls inside the last bin.
		step := max * (1 + 1e-9) / histogramBins
		for i := range edges {
			edges[i] = float64(i) * step
		}
		return edges
	}
	lo, hi := math.Log10(axisMin), math.Log10(axisMax)
	for i := range edges {
		edges[i] = math.Pow(10, lo+(hi-lo)*float64(i)/histogramBins)
	}
	return edges
}
