package report

import (
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/ptuprobe/ptuprobe/analyze"
)

// maxECDFSteps bounds the points of one curve; more cannot be told apart
// at 1200 px.
const maxECDFSteps = 4000

// ECDFTitle is the title of the ECDF chart; it says the chart describes
// these runs.
const ECDFTitle = "Advised wait after 429 in these runs (empirical CDF; descriptive, not a guarantee)"

// WriteECDF draws the ECDF chart: a step curve per group (at most
// MaxChartGroups of them) and the combined curve (dashed), n in the legend.
func WriteECDF(w io.Writer, a *analyze.Analysis, opts Options, format ImageFormat) error {
	xLabel := "advised wait (ms)"
	if opts.LogX {
		xLabel = "advised wait (ms, log scale)"
	}
	p := newChart(ECDFTitle, xLabel, "share of 429s ≤ wait")
	floor := 0.0
	if n := a.Overall.Count(); n > 0 {
		floor = waitAxis(&p.X, smallestPositive(a.Overall.Waits), a.Overall.Waits[n-1], opts.LogX)
		if opts.LogX && a.Overall.Waits[0] < floor {
			p.X.Label.Text = "advised wait (ms, log scale; waits under " + Grouped(floor) + " ms drawn at " + Grouped(floor) + " ms)"
		}
	} else {
		waitAxis(&p.X, 1, 1000, opts.LogX)
		p.Title.Text += " — no usable 429s"
	}
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = shareTicks{}
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(12), vg.Points(12)

	// With a single group the combined curve would hide it; draw it alone.
	if len(a.Groups) != 1 {
		drawn, left := chartGroups(a)
		for k, i := range drawn {
			if err := addECDF(p, &a.Groups[i], groupStyleFor(k), floor); err != nil {
				return err
			}
		}
		if err := addECDF(p, &a.Overall, combinedStyle, floor); err != nil {
			return err
		}
		noteLeftOut(p, left)
	} else if err := addECDF(p, &a.Groups[0], groupStyleFor(0), floor); err != nil {
		return err
	}
	return save(w, p, format)
}

func addECDF(p *plot.Plot, g *analyze.Group, style lineStyle, floor float64) error {
	label := g.Label
	if g.Label == analyze.OverallLabel {
		label = "All groups combined"
	}
	line, err := ECDFLine(g.Waits, maxECDFSteps, floor, style)
	if line == nil || err != nil {
		return err
	}
	p.Add(line)
	p.Legend.Add(legendName(label, g.Count()), line)
	return nil
}

func smallestPositive(sorted []float64) float64 {
	for _, v := range sorted {
		if v > 0 {
			return v
		}
	}
	return 0
}
