package fit

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/internal/charplan"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/schedule"
	"github.com/ptuprobe/ptuprobe/sim"
)

// A suggested plan (--suggest-plan): for the settings the run does not
// pin (pinned), the fit takes the two tried points that fit the run at
// the ends of each one's range (the least and the most of it), replays
// each candidate characterize plan's sends under both, and proposes the
// plan under which the two answer most differently: a plan whose run
// would tell them apart. The candidates are the main job's schedule after
// burst plans of larger waves (to spend an allowance the default waves
// leave), more of them, and longer gaps (to let an allowance refill
// between them, which shows its refill), none longer than the main job's
// cap.

// suggestion is the plan proposed and what it separates.
type suggestion struct {
	// Flags are characterize's flags for the plan (the burst plan's; the
	// schedule is the default's). Empty when every setting is pinned.
	Flags []string
	// Settings are the settings not pinned, each with its range's ends
	// and how far apart the two ends answer under the recorded run's
	// plan's default and under the suggested plan.
	Settings []separation
}

// separation is one setting not pinned: its range and how far apart the
// tried points at its two ends answer a plan (the KS of their waits at
// the resolution, or the share their 429 counts differ by, whichever
// is more: 0, alike; 1, nothing alike).
type separation struct {
	Name               string
	Low, High          float64
	Default, Suggested float64
}

// candidateBursts are the burst plans weighed, the default's first (a
// tie keeps the earlier: the default, then the shorter plans).
func candidateBursts() []burst.Config {
	out := []burst.Config{charplan.Burst()}
	for _, gap := range []time.Duration{charplan.BurstGap, 20 * time.Second, time.Minute} {
		for _, waves := range []int{4, 8} {
			for _, size := range []int{40, 80, 160} {
				b := burst.Config{Size: size, Waves: waves, Gap: gap}
				if b == charplan.Burst() || time.Duration(waves-1)*gap > charplan.Cap/2 {
					continue
				}
				out = append(out, b)
			}
		}
	}
	return out
}

// burstFlags are characterize's flags for b.
func burstFlags(b burst.Config) []string {
	return []string{"--burst-size", fmt.Sprint(b.Size), "--burst-waves", fmt.Sprint(b.Waves), "--burst-gap", b.Gap.String()}
}

// ends are a setting not pinned (its row i) and the tried points that
// fit the run at the two ends of its range.
type ends struct {
	i       int
	low, hi tried
}

// openSettings are mf's settings not pinned, each with its ends.
func openSettings(mf modelFit, bestQuality string) []ends {
	var open []ends
	mf.pts.mu.Lock()
	defer mf.pts.mu.Unlock()
	keys := slices.Sorted(maps.Keys(mf.pts.m))
	for i, p := range mf.params {
		if p.Field == "" {
			continue
		}
		v := mf.values[i]
		if p.OffAtMax && v == 0 {
			v = p.Max
		}
		if pinned(v, mf.ranges[i]) {
			continue
		}
		e := ends{i: i}
		first := true
		for _, k := range keys {
			t := mf.pts.m[k]
			if !fits(t, mf.score, bestQuality) {
				continue
			}
			if first || t.values[i] < e.low.values[i] {
				e.low = t
			}
			if first || t.values[i] > e.hi.values[i] {
				e.hi = t
			}
			first = false
		}
		if !first {
			open = append(open, e)
		}
	}
	return open
}

// suggest proposes a plan for mf's settings not pinned.
func (f *fitter) suggest(ctx context.Context, mf modelFit) (*suggestion, error) {
	open := openSettings(mf, f.quality(mf.score))
	out := &suggestion{}
	if len(open) == 0 {
		return out, nil
	}
	cands := candidateBursts()
	sep := make([][]float64, len(cands)) // candidate → setting → separation
	for k, b := range cands {
		var err error
		if sep[k], err = f.separations(ctx, mf, b, open); err != nil {
			return nil, err
		}
	}
	// The plan whose least separation is the most (every setting told
	// apart), then whose mean is; a tie keeps the earlier.
	best := 0
	for k := range cands {
		if cmpSep(sep[k], sep[best]) > 0 {
			best = k
		}
	}
	out.Flags = burstFlags(cands[best])
	for j, e := range open {
		p := mf.params[e.i]
		out.Settings = append(out.Settings, separation{Name: p.Name, Low: e.low.values[e.i], High: e.hi.values[e.i], Default: round6(sep[0][j]), Suggested: round6(sep[best][j])})
	}
	return out, nil
}

// separations replays the plan of burst b (then the main job's schedule)
// under each open setting's two ends, and returns how far apart each
// pair answers: the KS of their waits at the resolution or the share
// their 429 counts differ by, whichever is more.
func (f *fitter) separations(ctx context.Context, mf modelFit, b burst.Config, open []ends) ([]float64, error) {
	run := timeline{Plans: []sendPlan{
		offsets(burst.NewPlan(b), results.GroupBurst, f.job.PromptTokens, f.job.MaxTokens),
		offsets(schedule.NewPlan(schedule.Config{Phases: charplan.Phases()}), results.GroupScheduled, f.job.PromptTokens, f.job.MaxTokens),
	}}
	rp := newReplayer(&workload{Runs: []timeline{run}})
	var out []float64
	for _, e := range open {
		var waits [2][]float64
		var refused [2]int
		for side, t := range []tried{e.low, e.hi} {
			c, phase, err := f.settings(mf.model, mf.params, t.u)
			if err != nil {
				return nil, err
			}
			got, err := rp.replay(ctx, c, phase)
			if err != nil {
				return nil, err
			}
			for _, a := range got {
				if a.refused {
					refused[side]++
					if a.wait >= 0 {
						waits[side] = append(waits[side], a.wait)
					}
				}
			}
			slices.Sort(waits[side])
		}
		count := float64(absInt(refused[0]-refused[1])) / float64(max(refused[0], refused[1], 1))
		out = append(out, max(ks(waits[0], waits[1]), count))
	}
	return out, nil
}

// cmpSep orders two candidates' separations: by their least, then their
// mean.
func cmpSep(a, b []float64) int {
	mean := func(s []float64) float64 {
		t := 0.0
		for _, v := range s {
			t += v
		}
		return t / float64(len(s))
	}
	if d := slices.Min(a) - slices.Min(b); d > 1e-9 {
		return 1
	} else if d < -1e-9 {
		return -1
	}
	if d := mean(a) - mean(b); d > 1e-9 {
		return 1
	} else if d < -1e-9 {
		return -1
	}
	return 0
}

// printSuggestion writes the suggested plan for a person.
func printSuggestion(w *strings.Builder, s *suggestion) {
	if s == nil {
		return
	}
	if len(s.Settings) == 0 {
		w.WriteString("suggested plan: none needed: the run pins every fitted setting within 25%\n")
		return
	}
	fmt.Fprintf(w, "suggested plan, to tell apart what this run cannot: ptuprobe characterize %s\n", strings.Join(s.Flags, " "))
	for _, e := range s.Settings {
		fmt.Fprintf(w, "  %s from %s to %s: its ends answer %s apart under the main job's default plan, %s under this one\n",
			e.Name, fmtSetting(e.Name, e.Low), fmtSetting(e.Name, e.High), fmtFloat(e.Default), fmtFloat(e.Suggested))
	}
}

func fmtFloat(v float64) string { return fmt.Sprintf("%.3f", v) }

// fmtSetting words v of the setting name as its flag takes it.
func fmtSetting(name string, v float64) string {
	for _, p := range paramRows {
		if p.Name == name {
			if f, err := p.field(&sim.Config{}); err == nil && f.Type() == durationType {
				return time.Duration(v * float64(time.Second)).Round(time.Millisecond).String()
			}
		}
	}
	return strconv.FormatFloat(roundSignificant(v), 'f', -1, 64)
}
