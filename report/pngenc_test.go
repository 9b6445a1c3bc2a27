package report

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"testing"
)

// TestEncodePNGIsLossless: what encodePNG writes decodes, with
// image/png, to the very pixels it was given: a chart as the report
// draws it, rows that change in one pixel, and opaque images of any size
// and noise; a translucent one
// goes to image/png and decodes as image/png's own would.
func TestEncodePNGIsLossless(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	noise := func(w, h int, alpha bool) *image.RGBA {
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		for i := range img.Pix {
			img.Pix[i] = byte(rng.IntN(256))
			if i%4 == 3 && !alpha {
				img.Pix[i] = 0xff
			}
		}
		return img
	}
	var chart bytes.Buffer
	if err := WriteECDF(&chart, upstreamAnalysis(t), Options{}, PNG); err != nil {
		t.Fatal(err)
	}
	drawn, err := png.Decode(&chart)
	if err != nil {
		t.Fatal(err)
	}
	flat := image.NewRGBA(drawn.Bounds())
	for y := range drawn.Bounds().Dy() {
		for x := range drawn.Bounds().Dx() {
			flat.Set(x, y, drawn.At(x, y))
		}
	}
	// Rows as the one above but for one pixel, first to last, or for
	// none: what the Up filter leaves zero on either side of a change.
	sparse := noise(7, 9, false)
	for y := 1; y < 9; y++ {
		copy(sparse.Pix[y*sparse.Stride:], sparse.Pix[:4*7])
		if x := y - 1; x < 7 {
			sparse.Pix[y*sparse.Stride+4*x+y%3] ^= 0x5a
		}
	}
	for _, img := range []*image.RGBA{flat, sparse, noise(1, 1, false), noise(7, 3, false), noise(300, 41, false), noise(64, 64, true)} {
		var buf bytes.Buffer
		if err := encodePNG(&buf, img); err != nil {
			t.Fatal(err)
		}
		got, err := png.Decode(&buf)
		if err != nil {
			t.Fatalf("%v: %v", img.Bounds(), err)
		}
		b := img.Bounds()
		if got.Bounds() != b {
			t.Fatalf("bounds %v, want %v", got.Bounds(), b)
		}
		for y := range b.Dy() {
			for x := range b.Dx() {
				want := color.NRGBAModel.Convert(img.At(x, y))
				if c := color.NRGBAModel.Convert(got.At(x, y)); c != want {
					t.Fatalf("%v: pixel (%d, %d) is %v, want %v", b, x, y, c, want)
				}
			}
		}
	}
}
