package report

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/internal/num"
)

// maxOvershootPoints bounds the markers of the overshoot chart, over every
// group drawn: past it every k-th 429 of each group is drawn (its points
// are in the order of their runs and times, so every stretch of the runs
// keeps its share), and the title says so. More cannot be told apart, and an SVG of them would weigh
// megabytes.
const maxOvershootPoints = 1000

// OvershootTitle is the title of the overshoot chart.
const OvershootTitle = "Advised wait against the load offered just before each 429 in these runs (descriptive)"

// WriteOvershoot draws retry_after_vs_load: each usable 429's advised wait
// (y, log with LogX) against the requests per second offered in the window
// before it (x), one colour and marker per group as in the other charts
// (at most MaxChartGroups), with each group's Theil–Sen line over its
// range where one fits, and ρ in the legend.
func WriteOvershoot(w io.Writer, a *analyze.Analysis, opts Options, format ImageFormat) error {
	o := a.Overshoot
	if o == nil {
		return fmt.Errorf("no overshoot picture: the analysis placed no 429 against offered load")
	}
	yLabel := "advised wait (ms)"
	if opts.LogX {
		yLabel = "advised wait (ms, log scale)"
	}
	p := newChart(OvershootTitle, "requests offered in the "+windowText(o.Window)+" before the 429, per second", yLabel)
	// Top left: light loads seldom bring the longest waits.
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(12)

	// The groups drawn, with the colour each has in the other charts.
	byLabel := map[string]int{}
	for i := range o.Groups {
		byLabel[o.Groups[i].Label] = i
	}
	type drawn struct{ group, style int }
	var groups []drawn
	total := 0
	chosen, _ := chartGroups(a)
	for k, i := range chosen {
		if gi, ok := byLabel[a.Groups[i].Label]; ok {
			groups = append(groups, drawn{gi, k})
			total += o.Groups[gi].Requests.N
		}
	}
	stride := 1
	if total > maxOvershootPoints {
		stride = (total + maxOvershootPoints - 1) / maxOvershootPoints
		p.Title.Text += fmt.Sprintf("; every %d%s of %s shown", stride, ordinalSuffix(stride), Grouped(float64(total)))
	}

	// The wait axis spans every usable wait, as in the timeline chart.
	floor := 0.0
	if n := a.Overall.Count(); n > 0 && len(o.Groups) > 0 {
		floor = waitAxis(&p.Y, smallestPositive(a.Overall.Waits), a.Overall.Waits[n-1], opts.LogX)
	} else {
		waitAxis(&p.Y, 1, 1000, opts.LogX)
		p.Title.Text += " — no usable 429s placed"
	}
	xMax := 0.0
	for i := range o.Groups {
		xMax = max(xMax, o.Groups[i].Requests.Max)
	}
	linearAxis(&p.X, 0, xMax*1.03) // room for a marker at the largest load

	for _, d := range groups {
		g := &o.Groups[d.group]
		all := g.Points
		pts := make(plotter.XYs, 0, (len(all)+stride-1)/stride)
		for i := 0; i < len(all); i += stride {
			pts = append(pts, plotter.XY{X: all[i].RequestsPerSec, Y: math.Max(all[i].WaitMS, floor)})
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		// A little translucent, so that 429s at one load stack up darker.
		c := color.NRGBAModel.Convert(groupColors[d.style%len(groupColors)]).(color.NRGBA)
		c.A = 0xb0
		sc.GlyphStyle.Color = c
		sc.GlyphStyle.Shape = groupGlyphs[d.style%len(groupGlyphs)]
		sc.GlyphStyle.Radius = vg.Points(2.5)
		p.Add(sc)
		p.Legend.Add(legendName(g.Label, g.Requests.N)+": "+trendLegend(&g.Requests), sc)
		if l := g.Requests.Line; l != nil {
			if err := addLine(p, l, g.Requests.Min, g.Requests.Max, floor, groupStyleFor(d.style)); err != nil {
				return err
			}
		}
	}
	noteLeftOut(p, len(o.Groups)-len(groups))
	return save(w, p, format)
}

// trendLegend is a Trend for a legend entry: ρ and the slope, or why not.
func trendLegend(t *analyze.Trend) string {
	switch t.Reason {
	case analyze.TrendTooFew:
		return "too few to describe"
	case analyze.TrendMeasureConstant:
		return "load did not vary"
	case analyze.TrendWaitsConstant:
		return "waits did not vary"
	}
	s := "ρ = " + num.Decimal(t.Rho, 2)
	if t.Line != nil {
		s += ", line " + Grouped(t.Line.Slope) + " ms per req/s"
	} else {
		s += ", no line fits"
	}
	return s
}

// addLine draws l over [x0, x1], no lower than floor (a log axis).
func addLine(p *plot.Plot, l *analyze.Line, x0, x1, floor float64, style lineStyle) error {
	const steps = 64 // a straight line bends on a log axis
	pts := make(plotter.XYs, 0, steps+1)
	for i := 0; i <= steps; i++ {
		x := x0 + (x1-x0)*float64(i)/steps
		y := l.Intercept + l.Slope*x
		if y < floor || (floor > 0 && y <= 0) {
			continue
		}
		pts = append(pts, plotter.XY{X: x, Y: y})
	}
	if len(pts) < 2 {
		return nil
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	style.Dashes = nil
	line.LineStyle = style
	p.Add(line)
	return nil
}
