package fit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/internal/charplan"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/schedule"
	"github.com/ptuprobe/ptuprobe/sim"
)

// A suggested plan (--suggest-plan): for the settings the run does not
// pin (pinned), the fit takes the two tried points that fit the run at
// the ends of each one's range (the least and the most of it; the
// refill's, the points whose PTU, depth and allowance give its range's
// ends: refillSpan), replays each candidate characterize plan's sends
// under both, and proposes the plan under which the two answer most
// differently: a plan whose run would tell them apart. The first
// candidate is the plan as the run sent it (its recorded sends: the burst
// waves as they grew to first contact, the ramp as they sized it, the
// refill probe's parts of a request); the others are the main job's
// schedule after burst plans given by their flags (which keep their
// size: given waves do not grow) of larger waves (to spend an allowance
// the run's waves leave), more of them, and longer gaps (to let an
// allowance refill between them, which shows its refill), each without a
// refill probe and with one after a rest of 20 s, 1 minute or 3 minutes
// (--refill-rest: what the allowance gives back in the rest is what the
// probe counts, so a longer rest tells a longer refill), none longer
// than half the main job's cap. A candidate's probe is sent as the main
// job sends it (campaign.RefillProbe): its parts of a request set by
// what the first wave admitted at the point replayed, until its first
// refusal.

// suggestion is the plan proposed and what it separates.
type suggestion struct {
	// Flags are characterize's flags for the plan (the burst plan's; the
	// schedule is the default's). Empty when every setting is pinned, or
	// when no candidate tells them apart better than the plan the run
	// sent.
	Flags []string
	// Settings are the settings not pinned, each with its range's ends
	// and how far apart the two ends answer under the plan the run sent
	// and under the suggested plan.
	Settings []separation
	// Sent is the plan the run sent, for a reader (sentPlan).
	Sent string
}

// separation is one setting not pinned: its range and how far apart the
// tried points at its two ends answer a plan (the KS of their waits at
// the resolution, or the share their 429 counts differ by, whichever
// is more: 0, alike; 1, nothing alike).
type separation struct {
	Name            string
	Low, High       float64
	Sent, Suggested float64
}

// candidate is a plan weighed: a burst plan given by its flags, the
// main job's schedule, and the refill probe after a rest of rest (0:
// none).
type candidate struct {
	burst burst.Config
	rest  time.Duration
}

// candidateRests are the probe's rests weighed: none, the main job's,
// and two longer (a rest of r tells a refill up to some r × the
// allowance ÷ a send's cost from above).
var candidateRests = []time.Duration{0, charplan.RefillRest, time.Minute, 3 * time.Minute}

// candidatePlans are the plans weighed after the plan the run sent (a
// tie keeps the earlier: the run's, then the shorter plans, those
// without a probe first): each burst plan, without a probe and with each
// rest, whose gaps and rest together take no more than half the main
// job's cap. The default's flags are among them: given, its waves stay
// 40.
func candidatePlans() []candidate {
	var out []candidate
	for _, rest := range candidateRests {
		for _, gap := range []time.Duration{charplan.BurstGap, 20 * time.Second, time.Minute} {
			for _, waves := range []int{4, 8} {
				for _, size := range []int{40, 80, 160} {
					b := burst.Config{Size: size, Waves: waves, Gap: gap}
					if time.Duration(waves-1)*gap+rest > charplan.Cap/2 {
						continue
					}
					out = append(out, candidate{burst: b, rest: rest})
				}
			}
		}
	}
	return out
}

// flags are characterize's flags for c: its burst plan's, and the rest
// when a probe follows (a burst plan given by its flags has the probe
// only when --refill-rest is given).
func (c candidate) flags() []string {
	out := burstFlags(c.burst)
	if c.rest > 0 {
		out = append(out, "--refill-rest", c.rest.String())
	}
	return out
}

// burstFlags are characterize's flags for b.
func burstFlags(b burst.Config) []string {
	return []string{"--burst-size", fmt.Sprint(b.Size), "--burst-waves", fmt.Sprint(b.Waves), "--burst-gap", b.Gap.String()}
}

// The refill probe as the main job sends it (campaign.RefillProbe,
// ProbeSpacing, ProbeUnits, ProbeFactor, ProbeSends, whose rule fit
// cannot import: docs/ARCHITECTURE.md): TestCandidateProbeAsSent checks
// these against a run of it.
const (
	probeSpacing = 25 * time.Millisecond
	probeUnits   = 4
	probeFactor  = 2
	probeSends   = 120
)

// probeUnitsFor is the probe's parts of a request after a first wave of
// size that admitted first (campaign's rule of the same name).
func probeUnitsFor(first, size int) int {
	switch {
	case first < 0 || first >= size:
		return 1
	case first == 0:
		return probeUnits
	}
	return min(max(probeSends/first, 1), probeUnits)
}

// probePlan is the probe's sends after a rest, in u-ths of the job's
// request (prompt and maxTokens), probeSpacing ÷ u apart, at most u ×
// probeFactor × the wave size: all of them, where the main job stops at
// its first refusal (separations reads the answers up to it; a send
// after it does not change the answers before it).
func probePlan(rest time.Duration, u, size, prompt, maxTokens int) sendPlan {
	var out sendPlan
	for i := range u * probeFactor * size {
		out.Sends = append(out.Sends, send{Group: results.GroupRefillProbe, At: rest + time.Duration(i)*probeSpacing/time.Duration(u),
			PromptTokens: max(prompt/u, 1), MaxTokens: max(maxTokens/u, 1)})
	}
	return out
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
	if i, _, at, ok := f.refillSpan(mf); ok && at[0] != nil && at[1] != nil {
		for k := range open {
			if open[k].i == i {
				open[k].low, open[k].hi = *at[0], *at[1]
			}
		}
	}
	cands := candidatePlans()
	// Candidate 0 is the plan the run sent (its recorded sends, f.rp);
	// candidate k > 0 is cands[k-1].
	sep := make([][]float64, len(cands)+1) // candidate → setting → separation
	var err error
	if sep[0], err = f.separations(ctx, mf, open, func(tried, sim.Config, time.Duration) (*replayer, error) { return f.rp, nil }); err != nil {
		return nil, err
	}
	errs := make([]error, len(cands))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for k := w; k < len(cands); k += workers {
				sep[k+1], errs[k] = f.separations(ctx, mf, open, f.candidateReplayer(ctx, cands[k]))
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// The plan whose least separation is the most (every setting told
	// apart), then whose mean is; a tie keeps the earlier.
	best := 0
	for k := range sep {
		if cmpSep(sep[k], sep[best]) > 0 {
			best = k
		}
	}
	out.Sent = sentPlan(f.sends, f.job.MaxTokens)
	if best > 0 {
		out.Flags = cands[best-1].flags()
	}
	for j, e := range open {
		p := mf.params[e.i]
		out.Settings = append(out.Settings, separation{Name: p.Name, Low: e.low.values[e.i], High: e.hi.values[e.i], Sent: round6(sep[0][j]), Suggested: round6(sep[best][j])})
	}
	return out, nil
}

// burstReplayer replays the plan of burst b given by its flags (its
// waves as given), then the main job's schedule, of the job's requests,
// then probe's sends (none: no probe).
func burstReplayer(b burst.Config, prompt, maxTokens int, probe sendPlan) *replayer {
	run := timeline{Plans: []sendPlan{
		offsets(burst.NewPlan(b), results.GroupBurst, prompt, maxTokens),
		offsets(schedule.NewPlan(schedule.Config{Phases: charplan.Phases()}), results.GroupScheduled, prompt, maxTokens),
	}}
	if len(probe.Sends) > 0 {
		run.Plans = append(run.Plans, probe)
	}
	return newReplayer(&workload{Runs: []timeline{run}})
}

// candidateReplayer is, for a point's settings, the replayer of c's
// sends as the main job would send them to it: its probe's parts of a
// request set by what c's first wave admits there (a wave of c's size
// to a fresh deployment: the first thing the run sends).
func (f *fitter) candidateReplayer(ctx context.Context, c candidate) func(tried, sim.Config, time.Duration) (*replayer, error) {
	prompt, maxTokens := f.job.PromptTokens, f.job.MaxTokens
	byUnits := map[int]*replayer{}
	return func(_ tried, cfg sim.Config, phase time.Duration) (*replayer, error) {
		u := 0
		if c.rest > 0 {
			wave := newReplayer(&workload{Runs: []timeline{{Plans: []sendPlan{offsets(burst.NewPlan(burst.Config{Size: c.burst.Size, Waves: 1}), results.GroupBurst, prompt, maxTokens)}}}})
			got, err := wave.replay(ctx, cfg, phase)
			if err != nil {
				return nil, err
			}
			admitted := 0
			for _, a := range got {
				admitted += b01(!a.refused)
			}
			u = probeUnitsFor(admitted, c.burst.Size)
		}
		if byUnits[u] == nil {
			var probe sendPlan
			if u > 0 {
				probe = probePlan(c.rest, u, c.burst.Size, prompt, maxTokens)
			}
			byUnits[u] = burstReplayer(c.burst, prompt, maxTokens, probe)
		}
		return byUnits[u], nil
	}
}

// separations replays, under each open setting's two ends, the sends of
// the replayer rpAt gives for that end, and returns how far apart each
// pair answers: the KS of their waits at the resolution, the share their
// 429 counts differ by, or the share the refill probe's admitted tokens
// differ by, whichever is most. A refill probe's sends are read up to
// its first refusal, where the main job stops it.
func (f *fitter) separations(ctx context.Context, mf modelFit, open []ends, rpAt func(tried, sim.Config, time.Duration) (*replayer, error)) ([]float64, error) {
	var out []float64
	for _, e := range open {
		var waits [2][]float64
		var refused [2]int
		var probed [2]float64
		for side, t := range []tried{e.low, e.hi} {
			c, phase, err := f.settings(mf.model, mf.params, t.u)
			if err != nil {
				return nil, err
			}
			rp, err := rpAt(t, c, phase)
			if err != nil {
				return nil, err
			}
			got, err := rp.replay(ctx, c, phase)
			if err != nil {
				return nil, err
			}
			stopped := rp.probeStop(got)
			for i, a := range got {
				snd := rp.sends[i]
				if snd.Group == results.GroupRefillProbe {
					if snd.At > stopped {
						continue
					}
					if !a.refused {
						probed[side] += float64(snd.PromptTokens + snd.MaxTokens)
					}
				}
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
		probe := math.Abs(probed[0]-probed[1]) / max(probed[0], probed[1], 1)
		out = append(out, max(ks(waits[0], waits[1]), count, probe))
	}
	return out, nil
}

// probeStop is the offset of the refill probe's first send answered 429
// in got (r's sends' answers), after which the main job sends no more;
// the longest offset when none is.
func (r *replayer) probeStop(got []answer) time.Duration {
	stop := time.Duration(math.MaxInt64)
	for i, a := range got {
		if snd := r.sends[i]; snd.Group == results.GroupRefillProbe && a.refused {
			stop = min(stop, snd.At)
		}
	}
	return stop
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

// sentPlan words the plan w's first run sent, for a reader: its burst
// waves' first attempts, wave by wave (a wave's sends go at one instant:
// a pause of over waveBreak starts the next), its scheduled sends, and
// its refill probe's sends with the part of the job's request
// (maxTokens) each carried; "" when w is no recorded run.
func sentPlan(w *workload, maxTokens int) string {
	if !w.Replay || len(w.Runs) == 0 {
		return ""
	}
	const waveBreak = 500 * time.Millisecond
	var waves []int
	var last time.Duration
	scheduled, probe, probeTokens := 0, 0, 0
	for _, p := range w.Runs[0].Plans {
		for _, snd := range p.Sends {
			if snd.attempt > 1 {
				continue
			}
			switch snd.Group {
			case results.GroupBurst:
				if len(waves) == 0 || snd.At-last > waveBreak {
					waves = append(waves, 0)
				}
				waves[len(waves)-1]++
				last = snd.At
			case results.GroupRefillProbe:
				probe++
				probeTokens = max(probeTokens, snd.MaxTokens)
			default:
				scheduled++
			}
		}
	}
	var parts []string
	if len(waves) > 0 {
		sizes := make([]string, len(waves))
		for i, n := range waves {
			sizes[i] = strconv.Itoa(n)
		}
		parts = append(parts, "burst waves of "+strings.Join(sizes, ", "))
	}
	if scheduled > 0 {
		parts = append(parts, fmt.Sprintf("%d scheduled sends", scheduled))
	}
	if probe > 0 {
		part := "whole requests"
		if u := maxTokens / max(probeTokens, 1); probeTokens > 0 && u > 1 {
			part = fmt.Sprintf("a %s of the request", ordinal(u))
		}
		parts = append(parts, fmt.Sprintf("a refill probe of %d sends, each %s", probe, part))
	}
	if len(w.Runs) > 1 {
		parts = append(parts, fmt.Sprintf("its first run of %d", len(w.Runs)))
	}
	return strings.Join(parts, "; ")
}

// ordinal words the part 1/u of a request: "half", "third", "quarter",
// else "u-th".
func ordinal(u int) string {
	switch u {
	case 2:
		return "half"
	case 3:
		return "third"
	case 4:
		return "quarter"
	}
	return fmt.Sprintf("%d-th", u)
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
	sent := "the plan this run sent"
	if s.Sent != "" {
		sent += " (" + s.Sent + ")"
	}
	if len(s.Flags) == 0 {
		fmt.Fprintf(w, "suggested plan: none tells apart what this run cannot better than %s\n", sent)
	} else {
		probe := "and no refill probe follows them"
		if i := slices.Index(s.Flags, "--refill-rest"); i >= 0 && i+1 < len(s.Flags) {
			probe = "and the refill probe follows the schedule after a rest of " + s.Flags[i+1]
		}
		fmt.Fprintf(w, "suggested plan, to tell apart what this run cannot: ptuprobe characterize %s (its waves as given: they do not grow, %s)\n", strings.Join(s.Flags, " "), probe)
		fmt.Fprintf(w, "  weighed against %s\n", sent)
	}
	for _, e := range s.Settings {
		fmt.Fprintf(w, "  %s from %s to %s: its ends answer %s apart under the plan this run sent, %s under the suggested one\n",
			e.Name, fmtSetting(e.Name, e.Low), fmtSetting(e.Name, e.High), fmtFloat(e.Sent), fmtFloat(e.Suggested))
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
