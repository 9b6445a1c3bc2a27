package report

import (
	"image"
	"image/color"
	"math"
	"slices"
	"sync"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/f64"
	"golang.org/x/image/math/fixed"
	plotfont "gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
)

// pngTextCanvas is a PNG chart's canvas (vgimg's) that draws its upright
// texts itself, to the same pixels. vgimg draws a text with gg, which
// lays every glyph's coverage over the chart through
// golang.org/x/image/draw's BiLinear Transform, the matrix an identity
// and the offset whole pixels: its generic path, every pixel through
// interfaces and float arithmetic, a tenth of a report's CPU. With that
// matrix each chart pixel reads one pixel of the glyph at a weight of
// exactly 1, so the float arithmetic is integer arithmetic: drawGlyphs
// does it directly. The matrix is the identity when nothing rotated,
// moved or scaled the canvas since it was made: vgimg makes its context
// with the y axis flipped over the image's height (a whole number of
// pixels) and flips it back for a text, products of whole numbers, exact.
// Any other text (the y axis's label, rotated) is vgimg's, as before.
// TestPNGChartIsGonums compares the two.
type pngTextCanvas struct {
	*vgimg.Canvas
	img    *image.RGBA
	h      vg.Length   // the canvas's height, as vgimg has it
	states []textState // per Push, as vgimg keeps its colour
}

type textState struct {
	color color.Color
	moved bool // rotated, translated or scaled since the canvas was made
}

// newPNGTextCanvas returns c drawing its upright texts itself, or c when
// its image is not an *image.RGBA (vgimg's always is).
func newPNGTextCanvas(c *vgimg.Canvas) vg.CanvasSizer {
	img, ok := c.Image().(*image.RGBA)
	if !ok {
		return c
	}
	_, h := c.Size()
	return &pngTextCanvas{Canvas: c, img: img, h: h, states: []textState{{color: color.Black}}}
}

func (c *pngTextCanvas) top() *textState { return &c.states[len(c.states)-1] }

func (c *pngTextCanvas) SetColor(clr color.Color) {
	c.Canvas.SetColor(clr)
	if clr == nil {
		clr = color.Black
	}
	c.top().color = clr
}

func (c *pngTextCanvas) Push() {
	c.Canvas.Push()
	c.states = append(c.states, *c.top())
}

func (c *pngTextCanvas) Pop() {
	c.Canvas.Pop()
	c.states = c.states[:len(c.states)-1]
}

func (c *pngTextCanvas) Rotate(t float64) {
	c.Canvas.Rotate(t)
	c.top().moved = true
}

func (c *pngTextCanvas) Translate(pt vg.Point) {
	c.Canvas.Translate(pt)
	c.top().moved = true
}

func (c *pngTextCanvas) Scale(x, y float64) {
	c.Canvas.Scale(x, y)
	c.top().moved = true
}

// FillString is vgimg's: the text drawn at (x, h−y) in pixels, through
// gg's DrawString under the identity matrix when nothing moved the
// canvas.
func (c *pngTextCanvas) FillString(fnt plotfont.Face, pt vg.Point, str string) {
	if fnt.Font.Size == 0 {
		return
	}
	if c.top().moved {
		c.Canvas.FillString(fnt, pt, str)
		return
	}
	dpi := c.DPI()
	face := fnt.FontFace(dpi)
	defer face.Close()
	glyphs := glyphSource{face: face, key: glyphKey{font: fnt.Font, otf: fnt.Face, dpi: dpi}}
	drawGlyphs(c.img, &glyphs, c.top().color, pt.X.Dots(dpi), c.h.Dots(dpi)-pt.Y.Dots(dpi), str)
}

// drawGlyphs is gg's drawString (git.sr.ht/~sbinet/gg v0.7.0) under the
// identity matrix: the glyphs of s from the dot (x, y), kerned, each laid
// over dst in clr as x/image/draw's BiLinear.Transform lays it with a
// whole-pixel offset (transform_Image_Image_Over, whose weights are then
// 1 and 0): a glyph not given as an *image.Alpha goes to Transform.
func drawGlyphs(dst *image.RGBA, glyphs *glyphSource, clr color.Color, x, y float64, s string) {
	cr, cg, cb, ca := clr.RGBA()
	dot := fixed.Point26_6{X: fixed.Int26_6(math.Round(x * 64)), Y: fixed.Int26_6(math.Round(y * 64))}
	prev := rune(-1)
	for _, r := range s {
		if prev >= 0 {
			dot.X += glyphs.face.Kern(prev, r)
		}
		dr, mask, mp, advance, ok := glyphs.glyph(dot, r)
		if !ok {
			continue
		}
		if alpha, isAlpha := mask.(*image.Alpha); isAlpha {
			overGlyph(dst, dr, alpha, mp, cr, cg, cb, ca)
		} else {
			s2d := f64.Aff3{1, 0, float64(dr.Min.X), 0, 1, float64(dr.Min.Y)}
			xdraw.BiLinear.Transform(dst, s2d, image.NewUniform(clr), dr.Sub(dr.Min), xdraw.Over, &xdraw.Options{SrcMask: mask, SrcMaskP: mp})
		}
		dot.X += advance
		prev = r
	}
}

// glyphSource is a face's glyphs, through the memo of rasterized glyphs.
type glyphSource struct {
	face font.Face
	key  glyphKey // its font and resolution; rune and offsets set per glyph
}

// glyphKey names a rasterized glyph: a face's glyph of a rune depends on
// the dot only through its sub-pixel offsets (opentype.Face.Glyph
// rasterizes it at them, and shifts the result by the dot's whole
// pixels), so a chart's many digits and letters are rasterized once per
// offset.
type glyphKey struct {
	font   plotfont.Font
	otf    *opentype.Font
	dpi    float64
	r      rune
	fx, fy fixed.Int26_6 // the dot's sub-pixel offsets, 0–63
}

// cachedGlyph is what opentype.Face.Glyph returned, dr relative to the
// dot's whole pixel, the mask a copy (the face reuses its own).
type cachedGlyph struct {
	dr      image.Rectangle
	mask    *image.Alpha
	mp      image.Point
	advance fixed.Int26_6
	ok      bool
}

// glyphMemo holds rasterized glyphs for every chart; past maxGlyphs it
// starts again empty.
var glyphMemo = struct {
	sync.Mutex
	m map[glyphKey]*cachedGlyph
}{m: map[glyphKey]*cachedGlyph{}}

const maxGlyphs = 1 << 13

// glyph is g.face.Glyph(dot, r), from the memo when it was rasterized at
// the same offsets before. A mask that is not an *image.Alpha is not kept.
func (g *glyphSource) glyph(dot fixed.Point26_6, r rune) (dr image.Rectangle, mask image.Image, mp image.Point, advance fixed.Int26_6, ok bool) {
	k := g.key
	k.r, k.fx, k.fy = r, dot.X&63, dot.Y&63
	whole := image.Point{X: dot.X.Floor(), Y: dot.Y.Floor()}
	glyphMemo.Lock()
	c := glyphMemo.m[k]
	glyphMemo.Unlock()
	if c == nil {
		dr, mask, mp, advance, ok = g.face.Glyph(dot, r)
		alpha, isAlpha := mask.(*image.Alpha)
		if !isAlpha && ok {
			return dr, mask, mp, advance, ok
		}
		c = &cachedGlyph{dr: dr.Sub(whole), mp: mp, advance: advance, ok: ok}
		if ok {
			c.mask = &image.Alpha{Pix: slices.Clone(alpha.Pix), Stride: alpha.Stride, Rect: alpha.Rect}
		}
		glyphMemo.Lock()
		if len(glyphMemo.m) >= maxGlyphs {
			clear(glyphMemo.m)
		}
		glyphMemo.m[k] = c
		glyphMemo.Unlock()
	}
	if !c.ok {
		return image.Rectangle{}, nil, image.Point{}, c.advance, false
	}
	return c.dr.Add(whole), c.mask, c.mp, c.advance, true
}

// overGlyph lays colour (cr, cg, cb, ca) over dst's pixels of dr,
// through the coverage in mask from mp, with transform_Image_Image_Over's
// arithmetic at weight 1: the colour scaled by the coverage (16-bit,
// truncated), each channel at most the alpha, then dst·(1−α) + colour,
// stored as image.RGBA stores a 16-bit colour.
func overGlyph(dst *image.RGBA, dr image.Rectangle, mask *image.Alpha, mp image.Point, cr, cg, cb, ca uint32) {
	adr := dst.Bounds().Intersect(dr)
	for py := adr.Min.Y; py < adr.Max.Y; py++ {
		for px := adr.Min.X; px < adr.Max.X; px++ {
			ma := uint32(mask.AlphaAt(mp.X+px-dr.Min.X, mp.Y+py-dr.Min.Y).A)
			ma |= ma << 8
			pa := ca * ma / 0xffff
			pr, pg, pb := min(cr*ma/0xffff, pa), min(cg*ma/0xffff, pa), min(cb*ma/0xffff, pa)
			pa1 := 0xffff - pa
			i := dst.PixOffset(px, py)
			q := dst.Pix[i : i+4 : i+4]
			qr, qg, qb, qa := uint32(q[0])*0x101, uint32(q[1])*0x101, uint32(q[2])*0x101, uint32(q[3])*0x101
			q[0] = uint8(uint16(qr*pa1/0xffff+pr) >> 8)
			q[1] = uint8(uint16(qg*pa1/0xffff+pg) >> 8)
			q[2] = uint8(uint16(qb*pa1/0xffff+pb) >> 8)
			q[3] = uint8(uint16(qa*pa1/0xffff+pa) >> 8)
		}
	}
}
