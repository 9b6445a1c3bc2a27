package policylab

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ptuprobe/ptuprobe/report"
)

// chartFile is one chart of the lab, for each group: its file name
// without extension, what it shows, and how it is drawn.
type chartFile struct {
	base, title, caption string
	draw                 func(w io.Writer, f report.ImageFormat) error
}

// chartFiles are the lab's charts: per (load, clients) group a frontier
// (policy_frontier_<load>) and a latency ECDF of successful requests
// (policy_latency_ecdf_<load>), the load written as a file name ("1.5x",
// "8/s" as "8-s"), followed by _<clients>c when the sweep has more than
// one fleet size, and by _<attempts>a for the groups of the SDKs' cap. A policy keeps its colour and marker across charts.
func chartFiles(s Sweep, groups []verdictGroup) []chartFile {
	styles := map[string]int{}
	fleets := map[int]bool{}
	for _, r := range s.Rows {
		if _, ok := styles[r.Policy]; !ok {
			styles[r.Policy] = len(styles)
		}
		fleets[r.Clients] = true
	}
	var out []chartFile
	for i := range groups {
		g := &groups[i]
		if len(g.Ranked) == 0 {
			continue // an interrupted lab's group that no policy finished
		}
		name := slug(g.Load)
		if len(fleets) > 1 {
			name += fmt.Sprintf("_%dc", g.Clients)
		}
		if g.SDKCap {
			name += fmt.Sprintf("_%da", g.MaxAttempts)
		}
		out = append(out,
			chartFile{"policy_frontier_" + name, "Frontier, " + g.Name(),
				"Frontier at " + g.Name() + ": each policy's share of the offered requests answered within the SLO against the attempts it sent per offered request (the load it placed on the deployment), over the steady-state window. Up and left is better. Hollow markers model a named client with caps of its own.",
				func(w io.Writer, f report.ImageFormat) error { return writeFrontier(w, g, styles, f) }},
			chartFile{"policy_latency_ecdf_" + name, "Latency of successful requests, " + g.Name(),
				"Latency of successful requests at " + g.Name() + ": for each end-to-end latency (log scale), the share of a policy's successful requests that took that long or less, waits included. A refusal is not a fast answer, so refused and given-up requests are left out; each curve's n says how many succeeded.",
				func(w io.Writer, f report.ImageFormat) error { return writeLatencyECDF(w, g, styles, f) }},
		)
	}
	return out
}

// labelFontSize is the frontier's label text, in points.
const labelFontSize = 11

// labelStyle is the frontier's label text; its Width is the estimate the
// placement works with, measured on the chart's own font.
func labelStyle() draw.TextStyle {
	return draw.TextStyle{Color: color.Black, Font: report.ChartFont(labelFontSize), Handler: plot.DefaultTextHandler}
}

// writeFrontier draws a group's policies as labelled points: attempts per
// success on x (fewer is better, so left), capacity share (or goodput) on
// y (more is better, so up). Rows without a success have no attempts per
// success and are named in the title instead.
func writeFrontier(w io.Writer, g *verdictGroup, styles map[string]int, format report.ImageFormat) error {
	p, _ := frontierPlot(g, styles)
	return report.SaveChart(w, p, format)
}

// frontierPlot is the frontier chart, and its marks (which keep the label
// boxes they drew, for a test).
func frontierPlot(g *verdictGroup, styles map[string]int) (*plot.Plot, *frontierMarks) {
	m := &frontierMarks{}
	var none []string
	lo, hi, bottom, top := math.Inf(1), 0.0, math.Inf(1), 0.0
	for i := range g.Ranked {
		r := &g.Ranked[i]
		if r.Offered == 0 || r.AttemptsPerRequest <= 0 {
			none = append(none, r.Policy)
			continue
		}
		label := r.Policy
		if g.recommended(i) {
			label += " (recommended)"
		}
		glyph := report.SeriesGlyph(styles[r.Policy])
		if r.Models != "" {
			glyph.Shape = draw.RingGlyph{}
		}
		x, y := r.AttemptsPerRequest, r.SuccessInSLOPct
		m.marks = append(m.marks, frontierMark{x: x, y: y, label: label, glyph: glyph})
		lo, hi = math.Min(lo, x), math.Max(hi, x)
		bottom, top = math.Min(bottom, y), math.Max(top, y)
	}
	title := "Success within the SLO against load at " + g.Name() + " (these runs; up and left is better)"
	if len(none) > 0 {
		title += "; nothing sent: " + joinNames(none)
	}
	p := report.NewChart(title, "attempts per offered request (fewer is better)", "offered requests answered within the SLO (%)")
	if len(m.marks) == 0 {
		lo, hi, bottom, top = 1, 2, 0, 1
	}
	if hi/lo >= 3 {
		p.X.Label.Text = "attempts per offered request (log scale; fewer is better)"
		report.LogAxis(&p.X, lo, hi)
	} else {
		pad := math.Max((hi-lo)*0.15, 0.05)
		report.LinearAxis(&p.X, math.Max(0, lo-pad), hi+pad)
	}
	// The y axis spans the points with room for their labels, from 0
	// when they reach down near it.
	pad := math.Max((top-bottom)*0.12, top*0.03)
	low := math.Max(0, bottom-pad)
	if low < top/4 {
		low = 0
	}
	report.LinearAxis(&p.Y, low, math.Max(top+pad, low+1e-3))
	p.Add(m)
	return p, m
}

func joinNames(names []string) string {
	if len(names) > 4 {
		return fmt.Sprintf("%s and %d more", joinNames(names[:3]), len(names)-3)
	}
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}

// frontierMark is one policy on the frontier, in data coordinates.
type frontierMark struct {
	x, y  float64
	label string
	glyph draw.GlyphStyle
}

// frontierMarks draws the points and their labels. It places the labels
// when it draws, on the data area's own coordinates, so the boxes it
// keeps apart are the ones drawn.
type frontierMarks struct {
	marks []frontierMark
	drawn []labelBox // the label boxes of the last drawing
}

// Plot implements plot.Plotter.
func (m *frontierMarks) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	sty := labelStyle()
	anchors := make([]labelAnchor, len(m.marks))
	for i, mk := range m.marks {
		anchors[i] = labelAnchor{
			x: float64(trX(mk.x)), y: float64(trY(mk.y)),
			w: float64(sty.Width(mk.label)), h: float64(sty.Height(mk.label)),
			r: float64(mk.glyph.Radius),
		}
	}
	area := labelBox{float64(c.Min.X), float64(c.Min.Y), float64(c.Max.X), float64(c.Max.Y)}
	boxes, moved := placeLabels(anchors, area)
	m.drawn = boxes
	leader := draw.LineStyle{Color: color.Gray{Y: 0x80}, Width: vg.Points(0.75)}
	for i, mk := range m.marks {
		a, b := anchors[i], boxes[i]
		if moved[i] {
			// A label pushed away from its point keeps a line back to
			// it, to the nearer end of the label.
			ex := b.X0
			if b.X1 < a.x {
				ex = b.X1
			}
			c.StrokeLine2(leader, vg.Length(a.x), vg.Length(a.y), vg.Length(ex), vg.Length((b.Y0+b.Y1)/2))
		}
		c.DrawGlyphNoClip(mk.glyph, vg.Point{X: vg.Length(a.x), Y: vg.Length(a.y)})
		c.FillText(sty, vg.Point{X: vg.Length(b.X0), Y: vg.Length(b.Y0)}, mk.label)
	}
}

// labelAnchor is a point to label, on the canvas (points, y up): where
// it is, its marker's radius, and its label's width and height.
type labelAnchor struct{ x, y, r, w, h float64 }

// labelBox is a rectangle on the canvas, in points.
type labelBox struct{ X0, Y0, X1, Y1 float64 }

func (a labelBox) overlaps(b labelBox) bool {
	return a.X0 < b.X1 && b.X0 < a.X1 && a.Y0 < b.Y1 && b.Y0 < a.Y1
}

func (a labelBox) inside(b labelBox) bool {
	return a.X0 >= b.X0 && a.X1 <= b.X1 && a.Y0 >= b.Y0 && a.Y1 <= b.Y1
}

// labelGap keeps labels and markers this far apart, in points.
const labelGap = 2

// placeLabels gives each anchor's label a box that overlaps no other
// label's. Deterministically, top to bottom: it tries eight positions
// around the point (right, left, above, below, then the corners) for one
// inside area that covers no label and no other marker; failing that, one
// that covers no label; failing that, it puts the label to the right of
// its point and pushes it down past every label it meets, which always
// ends (each push clears one box for good). moved marks the labels so
// pushed, which the chart joins to their points with a line.
func placeLabels(anchors []labelAnchor, area labelBox) (boxes []labelBox, moved []bool) {
	order := make([]int, len(anchors))
	for i := range order {
		order[i] = i
	}
	// Top to bottom, then left to right.
	slices.SortStableFunc(order, func(i, j int) int {
		if c := cmp.Compare(anchors[j].y, anchors[i].y); c != 0 {
			return c
		}
		return cmp.Compare(anchors[i].x, anchors[j].x)
	})
	p := labelPlacer{markers: make([]labelBox, len(anchors))}
	for i, a := range anchors {
		p.markers[i] = labelBox{a.x - a.r, a.y - a.r, a.x + a.r, a.y + a.r}
	}
	boxes, moved = make([]labelBox, len(anchors)), make([]bool, len(anchors))
	for _, i := range order {
		boxes[i], moved[i] = p.place(i, anchors[i], area)
		p.placed = append(p.placed, boxes[i])
	}
	return boxes, moved
}

// labelPlacer is placeLabels' state: every marker, and the labels placed
// so far.
type labelPlacer struct {
	markers, placed []labelBox
}

// clear reports whether b covers no placed label and, with ofMarkers, no
// marker but its own (self).
func (p *labelPlacer) clear(b labelBox, self int, ofMarkers bool) bool {
	for _, o := range p.placed {
		if b.overlaps(o) {
			return false
		}
	}
	if ofMarkers {
		for j, mk := range p.markers {
			if j != self && b.overlaps(mk) {
				return false
			}
		}
	}
	return true
}

// place finds label i's box around its anchor a: the first candidate
// inside area that is clear of labels and markers, else of labels; else
// the right (or left) one pushed down past the labels it meets (moved).
func (p *labelPlacer) place(i int, a labelAnchor, area labelBox) (labelBox, bool) {
	d := a.r + labelGap
	candidates := []labelBox{
		{a.x + d, a.y - a.h/2, a.x + d + a.w, a.y + a.h/2},       // right
		{a.x - d - a.w, a.y - a.h/2, a.x - d, a.y + a.h/2},       // left
		{a.x - a.w/2, a.y + d, a.x + a.w/2, a.y + d + a.h},       // above
		{a.x - a.w/2, a.y - d - a.h, a.x + a.w/2, a.y - d},       // below
		{a.x + d/2, a.y + d/2, a.x + d/2 + a.w, a.y + d/2 + a.h}, // above right
		{a.x + d/2, a.y - d/2 - a.h, a.x + d/2 + a.w, a.y - d/2}, // below right
		{a.x - d/2 - a.w, a.y + d/2, a.x - d/2, a.y + d/2 + a.h}, // above left
		{a.x - d/2 - a.w, a.y - d/2 - a.h, a.x - d/2, a.y - d/2}, // below left
	}
	for _, ofMarkers := range []bool{true, false} {
		for _, b := range candidates {
			if b.inside(area) && p.clear(b, i, ofMarkers) {
				return b, false
			}
		}
	}
	b := candidates[0]
	if !b.inside(area) {
		b = candidates[1]
	}
	for pushed := true; pushed; {
		pushed = false
		for _, o := range p.placed {
			if b.overlaps(o) {
				h := b.Y1 - b.Y0
				b.Y1 = o.Y0 - labelGap
				b.Y0 = b.Y1 - h
				pushed = true
			}
		}
	}
	return b, true
}
