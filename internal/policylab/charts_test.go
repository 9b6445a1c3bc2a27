package policylab

import (
	"bytes"
	"fmt"
	"image/png"
	"io"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/report"
)

// TestLabelsNeverOverlap: however the points crowd, no two label boxes
// overlap, with the boxes computed from the widths the chart measures
// on its own font, and a label that found room beside its point stays
// there.
func TestLabelsNeverOverlap(t *testing.T) {
	t.Parallel()
	sty := labelStyle()
	names := []string{"none", "honor", "honor-no-jitter", "fixed:1s", "backoff", "sdk", "stacked", "poll:250ms",
		"redirect", "budget", "cooldown", "pace (recommended)", "honor-backoff", "slots"}
	area := labelBox{60, 50, 860, 470}
	anchor := func(i int, x, y float64) labelAnchor {
		return labelAnchor{x: x, y: y, r: 5, w: float64(sty.Width(names[i])), h: float64(sty.Height(names[i]))}
	}
	cases := map[string][]labelAnchor{}
	var spread, crowd, column, edge []labelAnchor
	for i := range names {
		spread = append(spread, anchor(i, 100+float64(i)*50, 100+float64(i%5)*70))
		crowd = append(crowd, anchor(i, 300+float64(i%3), 300+float64(i%2))) // all on one spot
		column = append(column, anchor(i, 500, 200+float64(i)*4))            // a vertical run
		edge = append(edge, anchor(i, 855-float64(i%2), 55+float64(i)*2))    // a corner
	}
	cases["spread"], cases["crowd"], cases["column"], cases["edge"] = spread, crowd, column, edge
	for name, anchors := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			boxes, moved := placeLabels(anchors, area)
			for i := range boxes {
				if w, h := boxes[i].X1-boxes[i].X0, boxes[i].Y1-boxes[i].Y0; w != anchors[i].w || h != anchors[i].h {
					t.Errorf("%s: box %v×%v, its text is %v×%v", names[i], w, h, anchors[i].w, anchors[i].h)
				}
				for j := range i {
					if boxes[i].overlaps(boxes[j]) {
						t.Errorf("%s %v overlaps %s %v", names[i], boxes[i], names[j], boxes[j])
					}
				}
			}
			if name == "spread" {
				for i, m := range moved {
					if m {
						t.Errorf("%s was pushed away from its point with room around it", names[i])
					}
				}
			}
		})
	}
}

// TestCharts draws each group's charts in every format: they decode,
// carry every policy that succeeded, and name the one that did not.
func TestCharts(t *testing.T) {
	t.Parallel()
	s := fixtureSweep()
	hopeless := fixtureRow("3x", 3, 16, outcome{policy: "hopeless"})
	hopeless.Offered, hopeless.AttemptsPerRequest = 0, -1 // nothing sent: no point on the frontier
	s.Rows = append(s.Rows, hopeless)
	files := chartFiles(s, judge(s))
	var bases []string
	for _, c := range files {
		bases = append(bases, c.base)
	}
	want := "policy_frontier_0.8x policy_latency_ecdf_0.8x policy_frontier_1.5x policy_latency_ecdf_1.5x policy_frontier_3x policy_latency_ecdf_3x"
	if got := strings.Join(bases, " "); got != want {
		t.Fatalf("charts %s, want %s", got, want)
	}
	for _, c := range files {
		t.Run(c.base, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := c.draw(&b, report.PNG); err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(&b)
			if err != nil {
				t.Fatal(err)
			}
			if w, h := report.PNGSize(); img.Bounds().Dx() != w || img.Bounds().Dy() != h {
				t.Errorf("%v, want %dx%d", img.Bounds(), w, h)
			}
			b.Reset()
			if err := c.draw(&b, report.SVG); err != nil {
				t.Fatal(err)
			}
			svg := b.String()
			for _, p := range []string{"pace", "sre-throttle", "budget"} {
				if !strings.Contains(svg, p) {
					t.Errorf("no %s", p)
				}
			}
			if strings.HasSuffix(c.base, "_3x") {
				want := "nothing sent: hopeless"
				if strings.Contains(c.base, "ecdf") {
					want = "hopeless (no success)"
				}
				if !strings.Contains(svg, want) {
					t.Errorf("the chart does not say %q", want)
				}
			}
		})
	}
}

// TestChartNames: a load is a file name; with several fleet sizes the
// clients are in it too.
func TestChartNames(t *testing.T) {
	t.Parallel()
	a := fixtureRow("8/s", 1, 16, outcome{policy: "pace", share: 60, spread: 1, load: 1, p50: 100, p99: 200})
	b := a
	b.Clients = 4
	var got []string
	for _, c := range chartFiles(Sweep{Rows: []Row{a, b}}, judge(Sweep{Rows: []Row{a, b}})) {
		got = append(got, c.base)
	}
	if fmt.Sprint(got) != "[policy_frontier_8-s_16c policy_latency_ecdf_8-s_16c policy_frontier_8-s_4c policy_latency_ecdf_8-s_4c]" {
		t.Errorf("%v", got)
	}
}

// TestFrontierLabelsAsDrawn: on the drawn charts of a sweep, in every
// format, the label boxes the frontier placed overlap nowhere.
func TestFrontierLabelsAsDrawn(t *testing.T) {
	t.Parallel()
	s := fixtureSweep()
	groups := judge(s)
	styles := map[string]int{}
	for _, r := range s.Rows {
		if _, ok := styles[r.Policy]; !ok {
			styles[r.Policy] = len(styles)
		}
	}
	for i := range groups {
		for _, f := range []report.ImageFormat{report.PNG, report.SVG} {
			p, m := frontierPlot(&groups[i], styles)
			if err := report.SaveChart(io.Discard, p, f); err != nil {
				t.Fatal(err)
			}
			if len(m.drawn) != len(m.marks) || len(m.marks) < 8 {
				t.Fatalf("%s: %d boxes for %d marks", groups[i].Name(), len(m.drawn), len(m.marks))
			}
			for a := range m.drawn {
				for b := range a {
					if m.drawn[a].overlaps(m.drawn[b]) {
						t.Errorf("%s: %s over %s", groups[i].Name(), m.marks[a].label, m.marks[b].label)
					}
				}
			}
		}
	}
}
