package fit

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/sim"
)

// Print writes the fit for a person: the model kept and the others'
// objectives, the recorded and the twin's waits side by side in the
// documents' table (a recorded row, then the twin's, per group), the
// fitted settings, and the verdict with its reason.
func Print(w io.Writer, r Result) error {
	f := r.Profile.Fit
	var b strings.Builder
	others := []string{}
	for _, m := range f.Models {
		if m.Model != f.Model {
			others = append(others, fmt.Sprintf("%s %s", m.Model, num.Decimal(m.Objective, 3)))
		}
	}
	fmt.Fprintf(&b, "model: %s (objective %s; %s)\n\n", f.Model, num.Decimal(f.Objective, 3), strings.Join(others, ", "))
	b.WriteString("| source group | 429 count | p50 | p90 | p99 | max | KS |\n|---|---|---|---|---|---|---|\n")
	for _, g := range f.Groups {
		label := analyze.Labels(nil).Published(g.Group)
		if g.HeldOut {
			label += " (held out)"
		}
		row(&b, label+", recorded", g.Recorded, "")
		ks := num.Decimal(g.KS, 3)
		if f.MinWaits > 0 && !g.Tested {
			ks += fmt.Sprintf(" (untested: fewer than %d waits)", f.MinWaits)
		}
		row(&b, label+", twin", g.Twin, ks)
	}
	b.WriteString("\nfitted: " + fitted(r) + "\n")
	if rs := ranges(r); rs != "" {
		b.WriteString("ranges that fit the run as well (fit.ranges): " + rs + "\n")
	}
	if f.RefusalCost != "" {
		b.WriteString("refusal cost (refusal-cost): " + f.RefusalCost + "\n")
	}
	if f.Agreement != nil {
		fmt.Fprintf(&b, "refusals matched, second by second: %s%% of the recorded sends\n", num.Decimal(100**f.Agreement, 1))
	}
	fmt.Fprintf(&b, "quality: %s: %s\n", f.Quality, f.Why)
	printSuggestion(&b, r.suggestion)
	_, err := io.WriteString(w, b.String())
	return err
}

func row(b *strings.Builder, label string, w sim.Waits, ks string) {
	if w.Count == 0 {
		fmt.Fprintf(b, "| %s | 0 | – | – | – | – | %s |\n", label, ks)
		return
	}
	fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s |\n", label, w.Count,
		num.Millis(w.P50, 1), num.Millis(w.P90, 1), num.Millis(w.P99, 1), num.Millis(w.Max, 1), ks)
}

// fitted words the kept model's settings as their flags take them.
func fitted(r Result) string {
	var parts []string
	for _, s := range r.fitted {
		v := num.Decimal(s.Value, 4)
		if strings.Contains(v, ".") {
			v = strings.TrimRight(strings.TrimRight(v, "0"), ".")
		}
		if f, err := s.Param.field(&sim.Config{}); err == nil && f.Type() == durationType {
			v = time.Duration(s.Value * float64(time.Second)).Round(time.Millisecond).String()
		}
		parts = append(parts, "--sim-"+s.Param.Name+" "+v)
	}
	c := r.Profile.Config
	lat := "--sim-ttft " + c.TTFT.String() + " --sim-tpot " + c.TPOT.String()
	if r.latencyRead {
		lat += " (read from the recorded answers)"
	}
	return strings.Join(parts, " ") + "; " + lat
}

// ranges words the fitted settings' ranges, each marked pinned (within
// 25% of the value) or not.
func ranges(r Result) string {
	var parts []string
	for _, s := range r.fitted {
		if r.ranges == nil {
			return ""
		}
		rg, ok := r.ranges[s.Param.Name]
		if !ok {
			continue
		}
		w := func(v float64) string {
			if f, err := s.Param.field(&sim.Config{}); err == nil && f.Type() == durationType {
				return time.Duration(v * float64(time.Second)).Round(time.Millisecond).String()
			}
			d := num.Decimal(v, 4)
			if strings.Contains(d, ".") {
				d = strings.TrimRight(strings.TrimRight(d, "0"), ".")
			}
			return d
		}
		state := "pinned"
		v := s.Value
		if s.Param.OffAtMax && v == 0 {
			v = s.Param.Max
		}
		if !pinned(v, rg) {
			state = "not pinned"
		}
		parts = append(parts, fmt.Sprintf("%s %s–%s (%s)", s.Param.Name, w(rg[0]), w(rg[1]), state))
	}
	return strings.Join(parts, ", ")
}
