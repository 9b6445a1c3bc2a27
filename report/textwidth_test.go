package report

import (
	"bytes"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
)

// TestWidthTextIsPlain: the memoized handler draws every chart to the
// same bytes as gonum's plain handler, and measures every text as it
// does, twice over (the second time from the memo).
func TestWidthTextIsPlain(t *testing.T) {
	plain := text.Plain{Fonts: font.DefaultCache}
	memo, ok := plot.DefaultTextHandler.(*widthText)
	if !ok {
		t.Fatalf("plot.DefaultTextHandler is %T, want *widthText", plot.DefaultTextHandler)
	}
	for range 2 {
		for _, txt := range []string{"", "0", "1,250 ms", "Retry-After (ms)", "AV fi ffi Wa To", "ünïcode ✓ — x", "two\nlines"} {
			for _, size := range []float64{9, 11, 15} {
				fnt := sans(font.Length(size))
				w, h, d := memo.Box(txt, fnt)
				pw, ph, pd := plain.Box(txt, fnt)
				if w != pw || h != ph || d != pd {
					t.Errorf("%q at %g pt: box %v %v %v, plain %v %v %v", txt, size, w, h, d, pw, ph, pd)
				}
			}
		}
	}
	a := upstreamAnalysis(t)
	for _, format := range []ImageFormat{PNG, SVG, wideSVG, narrowSVG} {
		var got, want bytes.Buffer
		if err := WriteECDF(&got, a, Options{}, format); err != nil {
			t.Fatal(err)
		}
		plot.DefaultTextHandler = plain
		err := WriteECDF(&want, a, Options{}, format)
		plot.DefaultTextHandler = memo
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("format %d: the chart differs from plain text's (%d bytes, %d)", format, got.Len(), want.Len())
		}
	}
}

// BenchmarkECDFChart draws the ECDF chart in the four formats a report
// draws it in, with gonum's plain text handler and with the memoized one
// (emptied before each report's four, as a process drawing one report
// starts).
func BenchmarkECDFChart(b *testing.B) {
	a := upstreamAnalysis(b)
	memo := plot.DefaultTextHandler.(*widthText)
	defer func() { plot.DefaultTextHandler = memo }()
	for _, h := range []struct {
		name string
		hdlr text.Handler
	}{{"plain", text.Plain{Fonts: font.DefaultCache}}, {"memo", memo}} {
		b.Run(h.name, func(b *testing.B) {
			plot.DefaultTextHandler = h.hdlr
			var buf bytes.Buffer
			for b.Loop() {
				memo.mu.Lock()
				clear(memo.widths)
				memo.mu.Unlock()
				for _, format := range []ImageFormat{PNG, SVG, wideSVG, narrowSVG} {
					buf.Reset()
					if err := WriteECDF(&buf, a, Options{}, format); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
