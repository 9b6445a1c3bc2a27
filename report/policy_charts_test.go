package report

import (
	"bytes"
	"image/png"
	"strings"
	"testing"
)

// TestPolicyCharts draws both lab charts, with a policy whose requests
// never ended too, and checks they decode and carry every policy.
func TestPolicyCharts(t *testing.T) {
	t.Parallel()
	curves := []PolicyCurve{
		{Policy: "honor", E2E: []float64{120, 300, 900, 4000}},
		{Policy: "stacked", E2E: []float64{150, 2000, 9000, 31000}},
		{Policy: "empty"},
	}
	var svg bytes.Buffer
	if err := WritePolicyECDF(&svg, curves, SVG); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"honor (n = 4)", "stacked (n = 4)"} {
		if !strings.Contains(svg.String(), name) {
			t.Errorf("the ECDF's legend lacks %q", name)
		}
	}
	var pngBuf bytes.Buffer
	if err := WritePolicyECDF(&pngBuf, curves, PNG); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(&pngBuf); err != nil {
		t.Fatal(err)
	}
	pngBuf.Reset()
	pts := []PolicyPoint{{"honor", 99.5, 900}, {"none", 40, 120}, {"stacked", 98, 31000}}
	if err := WritePolicyTradeoff(&pngBuf, pts); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&pngBuf)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != ChartWidthPx || b.Dy() != ChartHeightPx {
		t.Fatalf("trade-off chart is %v", b)
	}
}
