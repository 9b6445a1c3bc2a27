package report

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ptuprobe/ptuprobe/analyze"
)

// File names of the policy lab's charts.
const (
	PolicyECDFPNGFile  = "policy_latency_ecdf.png"
	PolicyECDFSVGFile  = "policy_latency_ecdf.svg"
	PolicyTradeoffFile = "policy_tradeoff.png"
)

// PolicyCurve is one policy's end-to-end latencies in ms, sorted.
type PolicyCurve struct {
	Policy string
	E2E    []float64
}

// PolicyPoint is one policy on the trade-off chart.
type PolicyPoint struct {
	Policy     string
	SuccessPct float64 // 0–100
	P99MS      float64 // end-to-end p99, ms
}

// policyStyles extends the group styles with markers and more dashes, so
// eleven policies stay apart without relying on colour alone.
func policyStyle(i int) draw.LineStyle {
	s := groupStyleFor(i)
	if i >= len(groupColors) {
		s.Width = vg.Points(1.5)
		s.Dashes = []vg.Length{vg.Points(6), vg.Points(2), vg.Points(1), vg.Points(2)}
	}
	return s
}

// WritePolicyECDF draws the empirical CDF of end-to-end latency (waits
// included), one line per policy, on a log axis: the policies differ by
// orders of magnitude in their tails.
func WritePolicyECDF(w io.Writer, curves []PolicyCurve, format ImageFormat) error {
	p := newChart("End-to-end latency per client policy, waits included (empirical CDF; these runs only)",
		"end-to-end latency (ms, log scale)", "share of requests ≤ latency (every request, refused ones included)")
	lo, hi := math.Inf(1), 0.0
	for _, c := range curves {
		if n := len(c.E2E); n > 0 {
			lo = math.Min(lo, smallestPositive(c.E2E))
			hi = math.Max(hi, c.E2E[n-1])
		}
	}
	if hi == 0 {
		lo, hi = 1, 1000
	}
	floor := waitAxis(&p.X, lo, hi, true)
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = shareTicks{}
	// Top left: the fastest policies rise from there only to the right.
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(12), -vg.Points(8)
	for i, c := range curves {
		steps := analyze.ECDF(c.E2E, maxECDFSteps)
		if len(steps) == 0 {
			continue
		}
		pts := make(plotter.XYs, 0, len(steps))
		for _, s := range steps {
			pts = append(pts, plotter.XY{X: math.Max(s.Wait, floor), Y: s.Share})
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.StepStyle = plotter.PostStep
		line.LineStyle = policyStyle(i)
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("%s (n = %s)", c.Policy, Grouped(float64(len(c.E2E)))), line)
	}
	return save(w, p, format)
}

// WritePolicyTradeoff draws each policy as one labelled point, as a PNG:
// the share of requests that succeeded against the p99 of end-to-end
// latency. Up and to the left is better.
func WritePolicyTradeoff(w io.Writer, points []PolicyPoint) error {
	return writePolicyTradeoff(w, points, PNG)
}

// PolicyECDFFigure is WritePolicyECDF as a figure of a page.
func PolicyECDFFigure(curves []PolicyCurve) *Figure {
	return &Figure{
		Caption: "For each end-to-end latency on the x axis (log scale), the share of requests that took that long or less, waits and retries included; one curve per policy. A curve that stops below 100% is the share of requests that never succeeded.",
		Draw:    func(w io.Writer, f ImageFormat) error { return WritePolicyECDF(w, curves, f) },
	}
}

// PolicyTradeoffFigure is WritePolicyTradeoff as a figure of a page.
func PolicyTradeoffFigure(points []PolicyPoint) *Figure {
	return &Figure{
		Caption: "Each policy as one point: the share of requests that succeeded against the p99 of end-to-end latency (log scale). Up and to the left is better.",
		Draw:    func(w io.Writer, f ImageFormat) error { return writePolicyTradeoff(w, points, f) },
	}
}

// writePolicyTradeoff is WritePolicyTradeoff in either format.
func writePolicyTradeoff(w io.Writer, points []PolicyPoint, format ImageFormat) error {
	p := newChart("Success against p99 end-to-end latency per client policy (these runs only; up and left is better)",
		"p99 end-to-end latency (ms, log scale)", "requests that succeeded (%)")
	lo, hi := math.Inf(1), 0.0
	for _, pt := range points {
		if pt.P99MS > 0 {
			lo, hi = math.Min(lo, pt.P99MS), math.Max(hi, pt.P99MS)
		}
	}
	if hi == 0 {
		lo, hi = 1, 1000
	}
	floor := waitAxis(&p.X, lo/1.5, hi*1.5, true)
	minY := 100.0
	for _, pt := range points {
		minY = math.Min(minY, pt.SuccessPct)
	}
	linearAxis(&p.Y, math.Max(0, math.Floor(minY/10)*10-5), 100)
	wPx, hPx := chartSize(format)
	labelAt := placeLabels(points, p.X.Min, p.X.Max, p.Y.Min, p.Y.Max, floor, wPx, hPx)
	for i, pt := range points {
		xy := plotter.XYs{{X: math.Max(pt.P99MS, floor), Y: pt.SuccessPct}}
		sc, err := plotter.NewScatter(xy)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color = groupColors[i%len(groupColors)]
		sc.GlyphStyle.Shape = groupGlyphs[i%len(groupGlyphs)]
		sc.GlyphStyle.Radius = vg.Points(5)
		p.Add(sc)
		labels, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{labelAt[i]}, Labels: []string{"  " + pt.Policy}})
		if err != nil {
			return err
		}
		for j := range labels.TextStyle {
			labels.TextStyle[j].Font = sans(11)
			labels.TextStyle[j].Color = color.Black
			labels.TextStyle[j].XAlign = draw.XLeft
		}
		p.Add(labels)
	}
	return save(w, p, format)
}

// placeLabels puts each point's label to its right, moved up or down by
// whole lines where it would overlap a label already placed, so that
// policies with close results stay readable. Boxes are estimated in axis
// fractions of a chart of wPx×hPx: a line is about 21.6 px high, a
// character about 9 px wide.
func placeLabels(points []PolicyPoint, xMin, xMax, yMin, yMax, floor float64, wPx, hPx int) []plotter.XY {
	type box struct{ x0, x1, y0, y1 float64 }
	lineH, charW := 21.6/float64(hPx), 9/float64(wPx)
	fx := func(x float64) float64 {
		return (math.Log10(x) - math.Log10(xMin)) / (math.Log10(xMax) - math.Log10(xMin))
	}
	fy := func(y float64) float64 { return (y - yMin) / (yMax - yMin) }
	var placed []box
	out := make([]plotter.XY, len(points))
	for i, pt := range points {
		x := math.Max(pt.P99MS, floor)
		bx, by := fx(x), fy(pt.SuccessPct)
		w := charW * float64(len(pt.Policy)+3)
		for _, shift := range []float64{0, -1, 1, -2, 2, -3, 3} {
			b := box{bx, bx + w, by + shift*lineH - lineH/2, by + shift*lineH + lineH/2}
			clear := true
			for _, o := range placed {
				if b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1 {
					clear = false
					break
				}
			}
			if clear || shift == 3 {
				placed = append(placed, b)
				out[i] = plotter.XY{X: x, Y: pt.SuccessPct + shift*lineH*(yMax-yMin)}
				break
			}
		}
	}
	return out
}
