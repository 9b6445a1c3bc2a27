package report

import (
	"math"
	"strings"
	"sync"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// widthText is gonum's plain text handler with each text's width in a
// font measured once: a chart is drawn in up to four formats (PNG, SVG,
// and report.html's wide and narrow SVGs), each drawing measures every
// label two or three times (its box, its alignment), and the measure
// (glyph by glyph, with kerning, through sfnt) was a quarter of the
// charts' CPU. The widths are gonum's own, so the charts are the same
// bytes. It is plot.DefaultTextHandler from this package's init: every
// plot.New after it uses it.
type widthText struct {
	text.Plain
	mu     sync.Mutex
	widths map[widthKey]vg.Length
}

type widthKey struct {
	font font.Font
	txt  string
}

// maxWidths bounds the memo: past it, it starts again empty (a process
// drawing many charts of many labels measures some twice).
const maxWidths = 1 << 14

func init() {
	plot.DefaultTextHandler = &widthText{Plain: text.Plain{Fonts: font.DefaultCache}, widths: map[widthKey]vg.Length{}}
}

// width is face.Width(txt), face being fnt's.
func (h *widthText) width(fnt font.Font, face font.Face, txt string) vg.Length {
	k := widthKey{fnt, txt}
	h.mu.Lock()
	w, ok := h.widths[k]
	h.mu.Unlock()
	if ok {
		return w
	}
	w = face.Width(txt)
	h.mu.Lock()
	if len(h.widths) >= maxWidths {
		clear(h.widths)
	}
	h.widths[k] = w
	h.mu.Unlock()
	return w
}

// Box is text.Plain's Box with the width memoized.
func (h *widthText) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	face := h.Fonts.Lookup(fnt, fnt.Size)
	ext := face.Extents()
	return h.width(fnt, face, txt), ext.Ascent, ext.Descent
}

// Draw is text.Plain's Draw (gonum.org/v1/plot v0.17.0) with each line's
// width memoized.
func (h *widthText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	txt = strings.TrimRight(txt, "\n")
	if len(txt) == 0 {
		return
	}
	fnt := h.Fonts.Lookup(sty.Font, sty.Font.Size)
	c.SetColor(sty.Color)
	if sty.Rotation != 0 {
		c.Push()
		c.Rotate(sty.Rotation)
	}
	sin64, cos64 := math.Sincos(sty.Rotation)
	cos := vg.Length(cos64)
	sin := vg.Length(sin64)
	pt.X, pt.Y = pt.Y*sin+pt.X*cos, pt.Y*cos-pt.X*sin
	lines := h.Lines(txt)
	ht := sty.Height(txt)
	pt.Y += ht*vg.Length(sty.YAlign) - fnt.Extents().Ascent
	for i, line := range lines {
		xoffs := vg.Length(sty.XAlign) * h.width(sty.Font, fnt, line)
		n := vg.Length(len(lines) - i)
		c.FillString(fnt, pt.Add(vg.Point{X: xoffs, Y: n * sty.Font.Size}), line)
	}
	if sty.Rotation != 0 {
		c.Pop()
	}
}
