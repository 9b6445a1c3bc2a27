package capacity

import (
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ptuprobe/ptuprobe/report"
)

// drawChart draws goodput and the 429 share against the offered rate,
// every step a point, the target and the bound as lines and the capacity
// (the knee) as a vertical line.
func (r Result) drawChart(w io.Writer) error {
	p := report.NewChart("Goodput and 429 share against offered load", "offered load (requests/s)", "share of judged requests")
	var good, refused plotter.XYs
	hi := r.Config.MinRate
	for _, s := range r.Steps {
		good = append(good, plotter.XY{X: s.Rate, Y: s.Goodput})
		refused = append(refused, plotter.XY{X: s.Rate, Y: s.Share429})
		hi = math.Max(hi, s.Rate)
	}
	for i, pts := range []plotter.XYs{good, refused} {
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle = report.SeriesGlyph(i)
		p.Add(sc)
		p.Legend.Add([]string{"goodput", "429 share"}[i], sc)
	}
	line := func(pts plotter.XYs, c color.Color, label string) error {
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
		p.Add(l)
		p.Legend.Add(label, l)
		return nil
	}
	lo := r.Config.MinRate / 2
	if err := line(plotter.XYs{{X: lo, Y: r.Config.Goodput}, {X: hi * 1.1, Y: r.Config.Goodput}}, report.SeriesStyle(0).Color, "goodput target"); err != nil {
		return err
	}
	if err := line(plotter.XYs{{X: lo, Y: r.Config.Max429Share}, {X: hi * 1.1, Y: r.Config.Max429Share}}, report.SeriesStyle(1).Color, "429 bound"); err != nil {
		return err
	}
	if r.Max > 0 {
		if err := line(plotter.XYs{{X: r.Max, Y: 0}, {X: r.Max, Y: 1}}, color.Black, "capacity (knee)"); err != nil {
			return err
		}
	}
	// The legend in the middle left, between the goodput near 100% and
	// the 429 share near 0.
	p.Legend.Top, p.Legend.Left, p.Legend.XOffs, p.Legend.YOffs = false, true, vg.Points(12), vg.Points(120)
	p.Y.Min, p.Y.Max = 0, 1.02
	p.Y.Tick.Marker = report.ShareTicks
	report.LinearAxis(&p.X, 0, hi*1.1)
	return report.SaveChart(w, p, report.PNG)
}
