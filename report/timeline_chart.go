package report

import (
	"fmt"
	"io"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/ptuprobe/ptuprobe/analyze"
)

// maxTimelinePoints bounds the markers drawn; beyond it every k-th point
// is drawn, and the title says so.
const maxTimelinePoints = 20000

// TimelineTitle is the title of the timeline chart.
const TimelineTitle = "Advised wait against send time in these runs (shows timing: not part of the sanitized set)"

// WriteTimeline draws each usable 429's advised wait against its send time
// (seconds since its run started), one colour and marker per group, for
// at most MaxChartGroups groups.
func WriteTimeline(w io.Writer, a *analyze.Analysis, opts Options) error {
	yLabel := "advised wait (ms)"
	if opts.LogX {
		yLabel = "advised wait (ms, log scale)"
	}
	p := newChart(TimelineTitle, "send time (s since the run started)", yLabel)
	pts := a.Timeline
	stride := 1
	if len(pts) > maxTimelinePoints {
		stride = (len(pts) + maxTimelinePoints - 1) / maxTimelinePoints
		p.Title.Text += fmt.Sprintf("; every %d%s of %s points shown", stride, ordinalSuffix(stride), Grouped(float64(len(pts))))
	}
	floor := 0.0
	if n := a.Overall.Count(); n > 0 {
		floor = waitAxis(&p.Y, smallestPositive(a.Overall.Waits), a.Overall.Waits[n-1], opts.LogX)
	} else {
		waitAxis(&p.Y, 1, 1000, opts.LogX)
	}
	p.Legend.Top = true

	byGroup := map[string]plotter.XYs{}
	lastSent := 0.0
	for i := 0; i < len(pts); i += stride {
		pt := pts[i]
		lastSent = math.Max(lastSent, pt.SentMS/1000)
		byGroup[pt.Group] = append(byGroup[pt.Group], plotter.XY{X: pt.SentMS / 1000, Y: math.Max(pt.WaitMS, floor)})
	}
	drawn, left := chartGroups(a)
	for k, i := range drawn {
		g := &a.Groups[i]
		xy := byGroup[g.Label]
		if len(xy) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(xy)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color = groupColors[k%len(groupColors)]
		sc.GlyphStyle.Shape = groupGlyphs[k%len(groupGlyphs)]
		sc.GlyphStyle.Radius = vg.Points(2.5)
		p.Add(sc)
		p.Legend.Add(legendName(g.Label, g.Count()), sc)
	}
	noteLeftOut(p, left)
	linearAxis(&p.X, 0, lastSent)
	return save(w, p, PNG)
}

func ordinalSuffix(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return "th"
	case n%10 == 1:
		return "st"
	case n%10 == 2:
		return "nd"
	case n%10 == 3:
		return "rd"
	}
	return "th"
}
