package report

import (
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/ptuprobe/ptuprobe/analyze"
)

// The throughput timeline of report.html: the tokens per minute the
// deployment delivered, second by second, and below it, on the same time
// axis, the attempts offered and refused each second
// (analyze.Analysis.Throughput). Aggregates per second of each plan's
// clock only: no request's own send time is drawn.

// throughputSection draws the timeline when the runs delivered tokens
// or refused anything.
func throughputSection(a *analyze.Analysis, _ Options) (Section, bool) {
	tl := a.Throughput()
	any := false
	for _, s := range tl {
		any = any || s.Tokens > 0 || s.Refused > 0
	}
	if !any {
		return Section{}, false
	}
	return Section{ID: "throughput", Heading: "Achieved tokens per minute, 429s and offered load", Blocks: []Block{
		{Figure: &Figure{
			Caption: "Above, the achieved tokens per minute, second by second: the prompt and completion tokens of the successful answers (as Azure meters a deployment's TPM) completed in the trailing minute (over the seconds so far in the first minute, scaled to a minute). Below, on the same time axis, the attempts offered each second (meant to be sent in it) and those answered 429 (sent in it). Seconds since each plan started; plans laid over one another from their starts.",
			Draw:    func(w io.Writer, f ImageFormat) error { return writeThroughputChart(w, tl, f) },
		}},
	}}, true
}

// writeThroughputChart draws the tokens per minute above the attempts
// offered and refused, their time axes aligned (plot.Align).
func writeThroughputChart(w io.Writer, tl []analyze.ThroughputSecond, format ImageFormat) error {
	top, err := tpmPlot(tl)
	if err != nil {
		return err
	}
	bottom, err := loadPlot(tl)
	if err != nil {
		return err
	}
	return saveStacked(w, top, bottom, format)
}

func tpmPlot(tl []analyze.ThroughputSecond) (*plot.Plot, error) {
	p := newChart("Achieved tokens per minute (prompt + completion)", "", "tokens per minute") // the x axis is named below
	tpm := analyze.TokensPerMinute(tl)
	hi := 0.0
	pts := make(plotter.XYs, len(tpm))
	for i, v := range tpm {
		pts[i] = plotter.XY{X: float64(i), Y: v}
		hi = max(hi, v)
	}
	if err := addStepLine(p, pts, 0, ""); err != nil {
		return nil, err
	}
	timeAxis(p, len(tl))
	linearAxis(&p.Y, 0, max(hi, 1))
	return p, nil
}

func loadPlot(tl []analyze.ThroughputSecond) (*plot.Plot, error) {
	p := newChart("Attempts offered and refused per second", "seconds since the plan started", "attempts per second")
	offered, refused := make(plotter.XYs, len(tl)), make(plotter.XYs, len(tl))
	hi := 0
	for i, s := range tl {
		offered[i] = plotter.XY{X: float64(i), Y: float64(s.Offered)}
		refused[i] = plotter.XY{X: float64(i), Y: float64(s.Refused)}
		hi = max(hi, s.Offered, s.Refused)
	}
	p.Legend.Top = true
	if err := addStepLine(p, offered, 0, "offered"); err != nil {
		return nil, err
	}
	if err := addStepLine(p, refused, 1, "answered 429"); err != nil {
		return nil, err
	}
	timeAxis(p, len(tl))
	linearAxis(&p.Y, 0, max(1.3*float64(hi), 1)) // room above for the legend
	return p, nil
}

// addStepLine adds a step line of the i-th series style, named in the
// legend unless name is empty.
func addStepLine(p *plot.Plot, pts plotter.XYs, i int, name string) error {
	l, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	l.StepStyle = plotter.PostStep
	l.LineStyle = SeriesStyle(i)
	p.Add(l)
	if name != "" {
		p.Legend.Add(name, l)
	}
	return nil
}

// timeAxis spans the x axis over the timeline's seconds, the same for
// both charts.
func timeAxis(p *plot.Plot, seconds int) { linearAxis(&p.X, 0, float64(max(seconds, 1))) }
