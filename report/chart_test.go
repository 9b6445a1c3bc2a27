package report

import (
	"bytes"
	"image/color"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// TestPNGChartIsGonums: a PNG chart as save and saveStacked draw it (on
// pooled pixels, the plot's white ground left out, upright texts drawn by
// pngTextCanvas) is, byte for byte, the chart gonum/plot draws on a
// canvas of its own (vgimg.NewWith, the ground painted, every text by
// gg): curves, markers, translucent bars, texts black, coloured and
// translucent, over white and over the curves, rotated, legend; a second
// chart drawn on the pixels the first gave back; a plot whose ground is
// not white keeps it.
func TestPNGChartIsGonums(t *testing.T) {
	t.Parallel()
	a := upstreamAnalysis(t)
	build := func(ground color.Color) *plot.Plot {
		p := newChart(ECDFTitle, "advised wait (ms)", "share of 429s ≤ wait")
		p.BackgroundColor = ground
		n := a.Overall.Count()
		floor := waitAxis(&p.X, smallestPositive(a.Overall.Waits), a.Overall.Waits[n-1], false)
		p.Y.Min, p.Y.Max = 0, 1
		p.Y.Tick.Marker = shareTicks{}
		for k := range a.Groups {
			if err := addECDF(p, &a.Groups[k], groupStyleFor(k), floor); err != nil {
				t.Fatal(err)
			}
		}
		if err := addECDF(p, &a.Overall, combinedStyle, floor); err != nil {
			t.Fatal(err)
		}
		pts := plotter.XYs{{X: 10, Y: 0.2}, {X: 100, Y: 0.5}, {X: 1000, Y: 0.9}}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			t.Fatal(err)
		}
		s.GlyphStyle = draw.GlyphStyle{Color: groupColors[1], Shape: draw.TriangleGlyph{}, Radius: vg.Points(5)}
		p.Add(s)
		p.Legend.Add("markers", s)
		bars, err := plotter.NewBarChart(plotter.Values{0.3, 0.6}, vg.Points(20))
		if err != nil {
			t.Fatal(err)
		}
		bars.Color = color.RGBA{0xCC, 0x79, 0xA7, 0x80} // translucent
		p.Add(bars)
		// Texts in colour, translucent, over the bars and curves; the
		// title's too.
		labels, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: 0, Y: 0.3}, {X: 1, Y: 0.5}}, Labels: []string{"AV fi Wa 1,250 ms", "ünïcode ✓"}})
		if err != nil {
			t.Fatal(err)
		}
		for i := range labels.TextStyle {
			labels.TextStyle[i].Font = sans(14)
			labels.TextStyle[i].Color = color.NRGBA{0x00, 0x72, 0xB2, 0x99}
		}
		p.Add(labels)
		p.Title.TextStyle.Color = color.NRGBA{0xD5, 0x5E, 0x00, 0xC0}
		return p
	}
	wPt, hPt := vg.Length(ChartWidthPx)*vg.Inch/chartDPI, vg.Length(ChartHeightPx)*vg.Inch/chartDPI
	gonums := func(paint func(draw.Canvas), dpi int) []byte {
		t.Helper()
		c := vgimg.NewWith(vgimg.UseWH(wPt, hPt), vgimg.UseDPI(dpi))
		paint(draw.New(c))
		var b bytes.Buffer
		if err := encodePNG(&b, c.Image()); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Points(12)}
	// A white ground twice (the second chart on the pixels the first gave
	// back), stacked, and a ground not white.
	for _, c := range []struct {
		ground  color.Color
		stacked bool
	}{{color.White, false}, {color.White, false}, {color.White, true}, {color.Gray{Y: 0xF0}, false}} {
		var got bytes.Buffer
		var want []byte
		if !c.stacked {
			if err := save(&got, build(c.ground), PNG); err != nil {
				t.Fatal(err)
			}
			want = gonums(func(dc draw.Canvas) { build(c.ground).Draw(dc) }, pngDPI)
		} else {
			if err := saveStacked(&got, build(c.ground), build(c.ground), PNG); err != nil {
				t.Fatal(err)
			}
			want = gonums(func(dc draw.Canvas) {
				top, bottom := build(c.ground), build(c.ground)
				cs := plot.Align([][]*plot.Plot{{top}, {bottom}}, tiles, dc)
				top.Draw(cs[0][0])
				bottom.Draw(cs[1][0])
			}, pngDPI)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("ground %v, stacked %t: the PNG differs from gonum's (%d bytes, %d)", c.ground, c.stacked, got.Len(), len(want))
		}
	}
	// At 24 dpi (SetPNGResolutionForTests's), 168.75 pixels high: the
	// canvas is NewWith's, its texts pngTextCanvas's.
	c, img, release := pngCanvas(wPt, hPt, 24)
	onWhite(build(color.White)).Draw(draw.New(c))
	var got bytes.Buffer
	if err := encodePNG(&got, img); err != nil {
		t.Fatal(err)
	}
	release()
	if want := gonums(func(dc draw.Canvas) { build(color.White).Draw(dc) }, 24); !bytes.Equal(got.Bytes(), want) {
		t.Errorf("at 24 dpi: the PNG differs from gonum's (%d bytes, %d)", got.Len(), len(want))
	}
}
