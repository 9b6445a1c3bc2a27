package policylab

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"

	"gonum.org/v1/plot/vg"

	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/report"
)

// ecdfSteps bounds the points of one curve: more cannot be told apart at
// the charts' width, and report.html holds every curve of every group.
const ecdfSteps = 400

// writeLatencyECDF draws a group's latency ECDF: one step curve per
// policy over its successful requests only (Row.SuccessLatencies), on a log
// axis, n in the legend. A policy without a success has no curve and is
// named in the legend as such.
func writeLatencyECDF(w io.Writer, g *verdictGroup, styles map[string]int, format report.ImageFormat) error {
	p := report.NewChart("Latency of successful requests at "+g.Name()+" (empirical CDF; these runs only)",
		"latency of a successful request, arrival to answer, waits included (ms, log scale)", "share of the policy's successes ≤ latency")
	lo, hi := math.Inf(1), 0.0
	for i := range g.Ranked {
		if e := g.Ranked[i].SuccessLatencies; len(e) > 0 {
			for _, v := range e {
				if v > 0 {
					lo = math.Min(lo, v)
					break
				}
			}
			hi = math.Max(hi, e[len(e)-1])
		}
	}
	if hi <= 0 || math.IsInf(lo, 1) {
		lo, hi = 1, 1000
	}
	floor := report.LogAxis(&p.X, lo, hi)
	// Room past the slowest success for the legend, bottom right, so
	// that it covers no curve.
	p.X.Max = math.Max(p.X.Max, hi*6)
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = report.ShareTicks
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(12), vg.Points(12)
	// In sweep order, so a policy's line and legend entry keep their place.
	for _, name := range sweepOrder(g, styles) {
		r := g.row(name)
		line, err := report.ECDFLine(r.SuccessLatencies, ecdfSteps, floor, report.SeriesStyle(styles[r.Policy]))
		if err != nil {
			return err
		}
		if line == nil {
			p.Legend.Add(r.Policy + " (no success)")
			continue
		}
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("%s (n = %s)", r.Policy, num.Grouped(float64(len(r.SuccessLatencies)), 0)), line)
	}
	return report.SaveChart(w, p, format)
}

// sweepOrder is the group's policies in the order of their styles.
func sweepOrder(g *verdictGroup, styles map[string]int) []string {
	names := make([]string, 0, len(g.Ranked))
	for i := range g.Ranked {
		names = append(names, g.Ranked[i].Policy)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(styles[a], styles[b]) })
	return names
}
