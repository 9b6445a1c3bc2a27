package capacity

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/internal/atomicfile"
)

// Step is one judged step of a search.
type Step struct {
	Index  int
	Rate   float64 // offered, requests per second
	Repeat int     // 0 the first run of this rate, then the boundary's repeats
	// Planned is the step's requests; Judged those of its last
	// JudgedShare, of which Met were answered 2xx within the SLO,
	// Refused429 refused with a 429 and Answered answered 2xx.
	Planned, Judged, Met, Refused429, Answered int
	Goodput, Share429                          float64 // shares of Judged
	// Margin is the least of goodput over its target and the 429 bound
	// over the 429 share: a step passes with a margin of 0 or more.
	Margin float64
	Passed bool
	// StoppedEarly is why the step stopped before its end ("": it ran).
	StoppedEarly string
	// TTFTP99MS and TPOTP99MS are of the judged answers (NaN: none).
	TTFTP99MS, TPOTP99MS float64
	TokensPerRequest     float64
}

// Verdicts of a search.
const (
	VerdictFound    = "found"     // bracketed and bisected
	VerdictBelowMin = "below-min" // the first step, at MinRate, failed
	VerdictAboveMax = "above-max" // MaxRate passed: the capacity is at least that
)

// Result is a search's outcome.
type Result struct {
	Config  Config
	Verdict string
	// Max is the capacity in requests per second; IntervalLow and
	// IntervalHigh the least and greatest crossing of the boundary's
	// repeats. Low and High are the bracket's last passing and first
	// failing rates.
	Max, IntervalLow, IntervalHigh float64
	Low, High                      float64
	// TokensPerRequest is the mean prompt and completion tokens of an
	// answer at the boundary; MaxTokensPerMin is Max in tokens a minute.
	TokensPerRequest, MaxTokensPerMin float64
	Steps                             []Step
}

// Files written to the output directory.
const (
	FileJSON  = "capacity.json"
	FileChart = "capacity.png"
)

type stepJSON struct {
	Index            int      `json:"index"`
	RatePerS         float64  `json:"rate_per_s"`
	Repeat           int      `json:"repeat"`
	Planned          int      `json:"planned"`
	Judged           int      `json:"judged"`
	Met              int      `json:"met"`
	Refused429       int      `json:"refused_429"`
	GoodputPct       float64  `json:"goodput_pct"`
	Share429Pct      float64  `json:"share_429_pct"`
	Passed           bool     `json:"passed"`
	StoppedEarly     string   `json:"stopped_early,omitempty"`
	TTFTP99MS        *float64 `json:"ttft_p99_ms"`
	TPOTP99MS        *float64 `json:"tpot_p99_ms"`
	TokensPerRequest float64  `json:"tokens_per_request"`
}

type resultJSON struct {
	Verdict          string     `json:"verdict"`
	SLO              *string    `json:"slo"` // null with no SLO, as every figure it does not have
	GoodputTargetPct float64    `json:"goodput_target_pct"`
	Max429SharePct   float64    `json:"max_429_share_pct"`
	StepDurationS    float64    `json:"step_duration_s"`
	MaxRatePerS      float64    `json:"max_rate_per_s"`
	MaxTokensPerMin  float64    `json:"max_tokens_per_min"`
	IntervalLowPerS  float64    `json:"interval_low_per_s"`
	IntervalHighPerS float64    `json:"interval_high_per_s"`
	BracketLowPerS   float64    `json:"bracket_low_per_s"`
	BracketHighPerS  float64    `json:"bracket_high_per_s"`
	TokensPerRequest float64    `json:"tokens_per_request"`
	Steps            []stepJSON `json:"steps"`
}

// round keeps a figure to 4 decimals, so a file reads as it prints.
func round(v float64) float64 { return math.Round(v*1e4) / 1e4 }

func orNull(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	r := round(v)
	return &r
}

// sloOrNull is the SLO's --slo text, or nil (null) when none is set.
func sloOrNull(s analyze.SLO) *string {
	if v := s.String(); v != "" {
		return &v
	}
	return nil
}

// MarshalJSON is capacity.json's content.
func (r Result) MarshalJSON() ([]byte, error) {
	out := resultJSON{
		Verdict: r.Verdict, SLO: sloOrNull(r.Config.SLO),
		GoodputTargetPct: round(100 * r.Config.Goodput), Max429SharePct: round(100 * r.Config.Max429Share),
		StepDurationS: r.Config.StepDuration.Seconds(),
		MaxRatePerS:   round(r.Max), MaxTokensPerMin: math.Round(r.MaxTokensPerMin),
		IntervalLowPerS: round(r.IntervalLow), IntervalHighPerS: round(r.IntervalHigh),
		BracketLowPerS: round(r.Low), BracketHighPerS: round(r.High),
		TokensPerRequest: round(r.TokensPerRequest), Steps: []stepJSON{},
	}
	for _, s := range r.Steps {
		out.Steps = append(out.Steps, stepJSON{
			Index: s.Index, RatePerS: round(s.Rate), Repeat: s.Repeat, Planned: s.Planned, Judged: s.Judged,
			Met: s.Met, Refused429: s.Refused429, GoodputPct: round(100 * s.Goodput), Share429Pct: round(100 * s.Share429),
			Passed: s.Passed, StoppedEarly: s.StoppedEarly, TTFTP99MS: orNull(s.TTFTP99MS), TPOTP99MS: orNull(s.TPOTP99MS),
			TokensPerRequest: round(s.TokensPerRequest),
		})
	}
	return json.MarshalIndent(out, "", "  ")
}

// WriteDir writes capacity.json and the chart into dir (which exists).
func (r Result) WriteDir(dir string) error {
	b, err := r.MarshalJSON()
	if err != nil {
		return err
	}
	err = atomicfile.Write(filepath.Join(dir, FileJSON), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, FileChart), r.drawChart)
}

func f(v float64, prec int) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// WriteTable prints the steps and the capacity.
func (r Result) WriteTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "step\trate/s\trepeat\tjudged\tgoodput\t429 share\tTTFT p99 ms\tTPOT p99 ms\tverdict")
	for _, s := range r.Steps {
		v := "pass"
		if !s.Passed {
			v = "fail"
		}
		if s.StoppedEarly != "" {
			v += " (stopped: " + s.StoppedEarly + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s%%\t%s%%\t%s\t%s\t%s\n", s.Index, f(s.Rate, 3), s.Repeat, s.Judged,
			f(100*s.Goodput, 1), f(100*s.Share429, 1), f(s.TTFTP99MS, 0), f(s.TPOTP99MS, 1), v)
	}
	tw.Flush()
	switch r.Verdict {
	case VerdictBelowMin:
		fmt.Fprintf(w, "capacity: below the lowest rate tried (%s/s): no step met goodput ≥ %s%% with 429s ≤ %s%%\n",
			f(r.Config.MinRate, 3), f(100*r.Config.Goodput, 1), f(100*r.Config.Max429Share, 1))
	case VerdictAboveMax:
		fmt.Fprintf(w, "capacity: at least %s/s (%s tokens/min): the highest rate tried passed\n", f(r.Max, 3), f(r.MaxTokensPerMin, 0))
	default:
		fmt.Fprintf(w, "capacity: %s requests/s (%s tokens/min), interval %s–%s/s over %d repeats\n",
			f(r.Max, 3), f(r.MaxTokensPerMin, 0), f(r.IntervalLow, 3), f(r.IntervalHigh, 3), r.Config.Repeats)
	}
}
