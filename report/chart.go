package report

import (
	"cmp"
	"fmt"
	"image"
	"image/color"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"git.sr.ht/~sbinet/gg"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/ptuprobe/ptuprobe/analyze"
)

// ImageFormat is the encoding of a chart.
type ImageFormat int

// Chart encodings.
const (
	PNG ImageFormat = iota
	SVG
	// wideSVG and narrowSVG are a chart of report.html as a wide screen
	// and as a phone show it: smaller canvases than a file's chart with
	// text of the same size, so that the text stays legible once the
	// chart is scaled to the page.
	wideSVG
	narrowSVG
)

// Chart size: 1200×675 px (16:9) at 96 dpi, readable on a README page.
const (
	ChartWidthPx  = 1200
	ChartHeightPx = 675
	chartDPI      = 96
)

// pngDPI is the resolution a PNG chart is rasterized at: chartDPI, which
// makes it ChartWidthPx×ChartHeightPx, unless a test lowered it
// (SetPNGResolutionForTests).
var pngDPI = chartDPI

// SetPNGResolutionForTests rasterizes every PNG chart drawn after it at
// dpi instead of 96: the same chart, every element drawn, in fewer
// pixels (at 24 dpi a sixteenth of them). It is for the tests of a
// package that renders many whole reports to check what else they hold
// (cmd's: rasterizing and compressing the charts was half their CPU);
// call it from TestMain, before any chart is drawn. PNGSize is then the
// charts' size.
func SetPNGResolutionForTests(dpi int) { pngDPI = dpi }

// PNGSize is a PNG chart's size in pixels: ChartWidthPx×ChartHeightPx
// unless a test lowered the resolution.
func PNGSize() (w, h int) {
	return int(math.Round(float64(ChartWidthPx*pngDPI) / chartDPI)), int(math.Round(float64(ChartHeightPx*pngDPI) / chartDPI))
}

// chartSize is the canvas of a format, in px.
func chartSize(format ImageFormat) (w, h int) {
	switch format {
	case wideSVG:
		return 960, 600
	case narrowSVG:
		return 600, 640
	}
	return ChartWidthPx, ChartHeightPx
}

// narrowTitle is the most characters of a title line on a narrow chart.
const narrowTitle = 56

// combinedStyle draws the combined curve: black, dashed, thicker, so it
// reads as "all groups" in colour and in greyscale alike.
var combinedStyle = draw.LineStyle{
	Color:  color.Black,
	Width:  vg.Points(2.5),
	Dashes: []vg.Length{vg.Points(9), vg.Points(5)},
}

// groupColors are the Okabe–Ito colours, ordered so that neighbours differ
// in lightness as well as hue (greyscale print, colour-blind readers).
var groupColors = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, // blue (dark)
	color.RGBA{0xE6, 0x9F, 0x00, 0xff}, // orange (light)
	color.RGBA{0x00, 0x9E, 0x73, 0xff}, // bluish green (mid)
	color.RGBA{0xCC, 0x79, 0xA7, 0xff}, // reddish purple (light)
	color.RGBA{0xD5, 0x5E, 0x00, 0xff}, // vermillion (mid)
	color.RGBA{0x56, 0xB4, 0xE9, 0xff}, // sky blue (light)
}

// groupDashes differ per group, so curves stay apart without colour; the
// combined curve owns the plain long dash.
var groupDashes = [][]vg.Length{
	nil,
	{vg.Points(2), vg.Points(3)},
	{vg.Points(12), vg.Points(3), vg.Points(2), vg.Points(3)},
	{vg.Points(5), vg.Points(2)},
	{vg.Points(12), vg.Points(3), vg.Points(2), vg.Points(3), vg.Points(2), vg.Points(3)},
	{vg.Points(1), vg.Points(2)},
}

type lineStyle = draw.LineStyle

func groupStyleFor(i int) draw.LineStyle {
	return draw.LineStyle{
		Color:  groupColors[i%len(groupColors)],
		Width:  vg.Points(2),
		Dashes: groupDashes[i%len(groupDashes)],
	}
}

// groupGlyphs give each group of the timeline its own marker shape.
var groupGlyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.BoxGlyph{},
	draw.CrossGlyph{}, draw.RingGlyph{}, draw.PlusGlyph{},
}

// newChart returns a plot with the house style: title, axis labels, large
// enough text for 1200×675, a light grid.
func newChart(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = sans(15)
	p.Title.Padding = vg.Points(10)
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = sans(12)
		ax.Tick.Label.Font = sans(11)
		ax.Label.Padding = vg.Points(6)
	}
	p.Legend.TextStyle.Font = sans(11.5)
	p.Legend.ThumbnailWidth = vg.Points(40)
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xE0}
	grid.Horizontal.Color = color.Gray{Y: 0xE0}
	p.Add(grid)
	return p
}

// sans is Liberation Sans (shipped with gonum/plot) at size points: it
// reads better than the default serif on a screen.
func sans(size vg.Length) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
}

// save renders p at the size of its format; a narrow chart's title is
// broken into lines that fit it.
func save(w io.Writer, p *plot.Plot, format ImageFormat) error {
	wPx, hPx := chartSize(format)
	wPt := vg.Length(wPx) * vg.Inch / chartDPI
	hPt := vg.Length(hPx) * vg.Inch / chartDPI
	switch format {
	case PNG:
		return savePNG(w, wPt, hPt, func(dc draw.Canvas) { onWhite(p).Draw(dc) })
	case SVG, wideSVG, narrowSVG:
		if format == narrowSVG {
			p.Title.Text = wrapWords(p.Title.Text, narrowTitle)
		}
		c := vgsvg.New(wPt, hPt)
		p.Draw(draw.New(c))
		_, err := c.WriteTo(w)
		return err
	}
	return fmt.Errorf("unknown image format %d", format)
}

// saveStacked renders top above bottom on one canvas of format's size,
// their axes aligned (plot.Align), so that both read against one x axis.
func saveStacked(w io.Writer, top, bottom *plot.Plot, format ImageFormat) error {
	wPx, hPx := chartSize(format)
	wPt := vg.Length(wPx) * vg.Inch / chartDPI
	hPt := vg.Length(hPx) * vg.Inch / chartDPI
	if format == narrowSVG {
		top.Title.Text = wrapWords(top.Title.Text, narrowTitle)
		bottom.Title.Text = wrapWords(bottom.Title.Text, narrowTitle)
	}
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Points(12)}
	stack := func(top, bottom *plot.Plot, dc draw.Canvas) {
		cs := plot.Align([][]*plot.Plot{{top}, {bottom}}, tiles, dc)
		top.Draw(cs[0][0])
		bottom.Draw(cs[1][0])
	}
	switch format {
	case PNG:
		return savePNG(w, wPt, hPt, func(dc draw.Canvas) { stack(onWhite(top), onWhite(bottom), dc) })
	case SVG, wideSVG, narrowSVG:
		c := vgsvg.New(wPt, hPt)
		stack(top, bottom, draw.New(c))
		_, err := c.WriteTo(w)
		return err
	}
	return fmt.Errorf("unknown image format %d", format)
}

// savePNG draws on a white canvas of wPt × hPt at pngDPI (pngCanvas) and
// writes it as PNG.
func savePNG(w io.Writer, wPt, hPt vg.Length, paint func(draw.Canvas)) error {
	c, img, release := pngCanvas(wPt, hPt, pngDPI)
	defer release()
	paint(draw.New(c))
	return encodePNG(w, img)
}

// chartPixels keeps a PNG chart's pixels (3.2 MB at 96 dpi) for the next
// one: a report draws three or more at once.
var chartPixels sync.Pool // *image.RGBA

// pngCanvas is vgimg.NewWith(vgimg.UseWH(wPt, hPt), vgimg.UseDPI(dpi)), a
// white canvas, drawing its upright texts itself (pngTextCanvas), and its
// image. When the canvas is a whole number of pixels wide and high (at 96
// dpi, always) it is made without NewWith's two allocations of the pixels
// (it makes an image, and gg copies it into one of its own): they come
// from chartPixels, to go back there by release once the image is
// encoded. The chart is the same, pixel for pixel (TestPNGChartIsGonums).
func pngCanvas(wPt, hPt vg.Length, dpi int) (c vg.CanvasSizer, img image.Image, release func()) {
	wDots, hDots := wPt.Dots(float64(dpi)), hPt.Dots(float64(dpi))
	if wDots == math.Trunc(wDots) && hDots == math.Trunc(hDots) && wDots > 0 && hDots > 0 {
		rgba, _ := chartPixels.Get().(*image.RGBA)
		if rgba == nil || rgba.Rect != image.Rect(0, 0, int(wDots), int(hDots)) {
			rgba = image.NewRGBA(image.Rect(0, 0, int(wDots), int(hDots)))
		}
		// As NewWith sets up the context it makes.
		ctx := gg.NewContextForRGBA(rgba)
		ctx.SetLineCapButt()
		ctx.InvertY()
		// NewWith paints the image white (its background), whatever the
		// last chart left on it.
		vc := vgimg.NewWith(vgimg.UseImageWithContext(rgba, ctx), vgimg.UseDPI(dpi))
		if w, h := vc.Size(); w == wPt && h == hPt {
			return newPNGTextCanvas(vc), rgba, func() { chartPixels.Put(rgba) }
		}
	}
	vc := vgimg.NewWith(vgimg.UseWH(wPt, hPt), vgimg.UseDPI(dpi))
	return newPNGTextCanvas(vc), vc.Image(), func() {}
}

// onWhite is p to be drawn on a PNG canvas, which is white before
// anything is drawn: a plot whose background is white then leaves it out.
// Painting it was a fifth of a report's CPU (every pixel of the chart
// blended, white over white), and changed no pixel: white over white is
// white, exactly, at any coverage. The plot is a copy; p is not changed.
func onWhite(p *plot.Plot) *plot.Plot {
	if p.BackgroundColor == nil || !isWhite(p.BackgroundColor) {
		return p
	}
	q := *p
	q.BackgroundColor = nil
	return &q
}

// isWhite reports whether c is opaque white.
func isWhite(c color.Color) bool {
	r, g, b, a := c.RGBA()
	return r == 0xffff && g == 0xffff && b == 0xffff && a == 0xffff
}

// wrapWords breaks s into lines of at most width characters, between
// words (a longer word keeps a line of its own).
func wrapWords(s string, width int) string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return strings.Join(append(lines, line), "\n")
}

// waitAxis sets up the advised-wait axis for waits in [lo, hi], lo being
// the smallest positive one: linear from 0, or log10 from the decade below
// lo. A log axis has no zero, so it returns the value at which a 0 ms wait
// is drawn (the axis minimum); 0 for a linear axis.
func waitAxis(ax *plot.Axis, lo, hi float64, logScale bool) (floor float64) {
	if !logScale {
		linearAxis(ax, 0, hi)
		return 0
	}
	if lo <= 0 {
		lo = 1
	}
	ax.Scale = plot.LogScale{}
	ax.Min = math.Pow10(int(math.Floor(math.Log10(lo))))
	// A little room past the largest wait rather than the next decade,
	// which could leave most of the last decade empty.
	ax.Max = math.Max(hi*1.25, ax.Min*10)
	ax.Tick.Marker = logTicks{}
	return ax.Min
}

// linearAxis spans [lo, hi] rounded out to a nice step, with labelled
// ticks at every step and minor ticks between.
func linearAxis(ax *plot.Axis, lo, hi float64) {
	if hi <= lo {
		hi = lo + 1
	}
	step := niceStep(hi - lo)
	ax.Min = math.Floor(lo/step) * step
	ax.Max = math.Ceil(hi/step) * step
	ax.Tick.Marker = linearTicks{step: step}
}

// niceStep returns 1, 2, 2.5 or 5 × 10^k such that span is covered by at
// most 10 steps: about 6–10 labels across the axis.
func niceStep(span float64) float64 {
	raw := span / 10
	mag := math.Pow10(int(math.Floor(math.Log10(raw))))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// linearTicks label every step, with thousands separators, and put a
// minor tick halfway.
type linearTicks struct{ step float64 }

func (t linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if t.step <= 0 {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/t.step) * t.step; v <= hi+t.step*1e-9; v += t.step {
		ticks = append(ticks, plot.Tick{Value: v, Label: Grouped(v)})
		if half := v + t.step/2; half < hi {
			ticks = append(ticks, plot.Tick{Value: half})
		}
	}
	return ticks
}

// logTicks label each decade (1, 10, 100, 1,000 …) and, when the range is
// two decades or less, 2× and 5× as well; the other integer multiples get
// unlabelled minor ticks.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= lo {
		return nil
	}
	first := int(math.Floor(math.Log10(lo)))
	last := int(math.Ceil(math.Log10(hi)))
	dense := last-first <= 2
	var ticks []plot.Tick
	for e := first; e <= last; e++ {
		decade := math.Pow10(e)
		for m := 1; m < 10; m++ {
			v := decade * float64(m)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || (dense && (m == 2 || m == 5)) {
				t.Label = Grouped(v)
			}
			ticks = append(ticks, t)
			if e == last {
				break
			}
		}
	}
	return ticks
}

// shareTicks label the share axis in percent.
type shareTicks struct{}

func (shareTicks) Ticks(_, _ float64) []plot.Tick {
	var ticks []plot.Tick
	for i := 0; i <= 10; i++ {
		t := plot.Tick{Value: float64(i) / 10}
		if i%2 == 0 {
			t.Label = fmt.Sprintf("%d%%", i*10)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// legendName is a legend entry: the label and the n behind the curve.
func legendName(label string, n int) string {
	return fmt.Sprintf("%s (n = %s)", label, Grouped(float64(n)))
}

// MaxChartGroups bounds the groups a chart draws, one curve (or marker
// set) each: one per colour and dash of the palette, so that no two drawn
// groups look alike. With more groups, the ones with the most usable waits
// are drawn, and a legend entry says how many were left out; every group
// is in the tables.
const MaxChartGroups = 6

// chartGroups returns the indexes into a.Groups, ascending, of the groups
// a chart draws, and how many groups it leaves out.
func chartGroups(a *analyze.Analysis) (drawn []int, left int) {
	drawn = make([]int, len(a.Groups))
	for i := range drawn {
		drawn[i] = i
	}
	if len(drawn) <= MaxChartGroups {
		return drawn, 0
	}
	// The largest first; a.Groups is in label order, which breaks ties.
	slices.SortStableFunc(drawn, func(i, j int) int { return cmp.Compare(a.Groups[j].Count(), a.Groups[i].Count()) })
	drawn = drawn[:MaxChartGroups]
	slices.Sort(drawn)
	return drawn, len(a.Groups) - MaxChartGroups
}

// noteLeftOut adds a legend entry, text only, for the groups not drawn.
func noteLeftOut(p *plot.Plot, left int) {
	if left > 0 {
		p.Legend.Add(fmt.Sprintf("%s more groups not drawn (see the tables)", Grouped(float64(left))))
	}
}
