package fit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
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
// pin (pinned), the fit weighs candidate characterize plans by the
// range of each setting a plan's run would tell, and proposes the plan
// whose widest such range (least ÷ most) is the narrowest, then whose
// mean is. A plan's run is its sends replayed at the fitted settings
// (syntheticRun); the range it tells a setting is, over the points that
// fit this run (fit.ranges' points), those that fit that run too
// (toldRanges), and for the refill the range that run's sends tell
// (refillReading, read as fit.ranges reads a run). A plan is proposed
// over the plan the run sent only where it tells a range narrower than
// fit.ranges' own. The first
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
// than half the main job's cap nor of more than maxCandidateSends
// sends. A candidate's probe is sent as the main job sends it
// (campaign.RefillProbe): its parts of a request set by what the first
// wave admitted at the point replayed, until its first refusal.

// suggestion is the plan proposed and what it separates.
type suggestion struct {
	// Flags are characterize's flags for the plan (the burst plan's; the
	// schedule is the default's). Empty when every setting is pinned, or
	// when no candidate tells them apart better than the plan the run
	// sent.
	Flags []string
	// Settings are the settings not pinned, each with its range's ends
	// and the ranges the plan the run sent and the suggested plan tell.
	Settings []separation
	// Sent is the plan the run sent, for a reader (sentPlan).
	Sent string
}

// separation is one setting not pinned: its range, the ranges the plan
// the run sent (SentTold: fit.ranges') and the suggested plan
// (SuggestedTold, its run replayed at the fitted settings: toldRanges,
// refillReading) tell, and how narrowly (Sent, Suggested: the least ÷
// the most; 1, pinned).
type separation struct {
	Name                    string
	Low, High               float64
	Sent, Suggested         float64
	SentTold, SuggestedTold [2]float64
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

// maxCandidateSends bounds a candidate's sends: a fit's time grows with
// the sends it replays, and a plan's run must fit within fit's 10 s.
// Served target e's main job (some 390 sends) fitted in 4.5–9.2 s; its
// round-13 suggestion, 160 sends 8 times 20 s apart and a probe after 20
// s (1,508 sends, 1,222 refused), in 24.8 s (load 0.8–1.8), and fitted
// its allowance 69.8–10,000% where the main job's run had 118.3–309.6%.
const maxCandidateSends = 800

// candidatePlans are the plans weighed after the plan the run sent (a
// tie keeps the earlier: the run's, then the shorter plans, those
// without a probe first): each burst plan, without a probe and with each
// rest, whose gaps and rest together take no more than half the main
// job's cap, and whose sends (its waves', the schedule's, and charplan.ProbeSends
// for a probe, which stops at its first refusal) are at most
// maxCandidateSends. The default's flags are among them: given, its
// waves stay 40.
func candidatePlans() []candidate {
	scheduled := len(offsets(schedule.NewPlan(schedule.Config{Phases: charplan.Phases()}), results.GroupScheduled, 1, 1).Sends)
	var out []candidate
	for _, rest := range candidateRests {
		for _, gap := range []time.Duration{charplan.BurstGap, 20 * time.Second, time.Minute} {
			for _, waves := range []int{4, 8} {
				for _, size := range []int{40, 80, 160} {
					b := burst.Config{Size: size, Waves: waves, Gap: gap}
					sends := waves*size + scheduled
					if rest > 0 {
						sends += charplan.ProbeSends
					}
					if time.Duration(waves-1)*gap+rest > charplan.Cap/2 || sends > maxCandidateSends {
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

// probePlan is the probe's sends after a rest, in u-ths of the job's
// request (prompt and maxTokens), charplan.ProbeSpacing ÷ u apart, at most u ×
// charplan.ProbeFactor × the wave size: all of them, where the main job stops at
// its first refusal (separations reads the answers up to it; a send
// after it does not change the answers before it).
func probePlan(rest time.Duration, u, size, prompt, maxTokens int) sendPlan {
	var out sendPlan
	for i := range u * charplan.ProbeFactor * size {
		out.Sends = append(out.Sends, send{Group: results.GroupRefillProbe, At: rest + time.Duration(i)*charplan.ProbeSpacing/time.Duration(u),
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
	refill, reads := f.newRefillReading(mf)
	if reads {
		// The refill's row spans fit.ranges' entry (the run's sends',
		// refillRange), not the tried points' extent.
		for k := range open {
			if open[k].i == refill.i {
				open[k].low.values = slices.Clone(open[k].low.values)
				open[k].hi.values = slices.Clone(open[k].hi.values)
				open[k].low.values[refill.i], open[k].hi.values[refill.i] = mf.ranges[refill.i][0], mf.ranges[refill.i][1]
			}
		}
	} else {
		refill = nil
	}
	pts, err := f.toldPoints(mf)
	if err != nil {
		return nil, err
	}
	cands := candidatePlans()
	// Candidate 0 is the plan the run sent (its recorded sends, f.rp);
	// candidate k > 0 is cands[k-1].
	sep := make([][]float64, len(cands)+1) // candidate → setting → narrowness
	told := make([][][2]float64, len(cands)+1)
	if sep[0], told[0], err = f.separations(ctx, mf, open, nil, f.sends, refill, pts, 0); err != nil {
		return nil, err
	}
	errs := make([]error, len(cands))
	onEveryCore(len(cands), func(k int) {
		run, err := f.candidateRun(ctx, mf, cands[k])
		if err != nil {
			errs[k] = err
			return
		}
		sep[k+1], told[k+1], errs[k] = f.separations(ctx, mf, open, wholeReplayer(run), run, refill, pts, maxToldReplays)
	})
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
		// The plan proposed tells the ranges its walks find without
		// a bound (those weighed may be wider: maxToldReplays).
		run, err := f.candidateRun(ctx, mf, cands[best-1])
		if err != nil {
			return nil, err
		}
		if sep[best], told[best], err = f.separations(ctx, mf, open, wholeReplayer(run), run, refill, pts, len(pts)); err != nil {
			return nil, err
		}
	}
	for j, e := range open {
		p := mf.params[e.i]
		out.Settings = append(out.Settings, separation{Name: p.Name, Low: e.low.values[e.i], High: e.hi.values[e.i], Sent: round6(sep[0][j]), Suggested: round6(sep[best][j]),
			SentTold: roundRange(told[0][j]), SuggestedTold: roundRange(told[best][j])})
	}
	return out, nil
}

func roundRange(r [2]float64) [2]float64 { return [2]float64{round6(r[0]), round6(r[1])} }

// refillReading reads the refill a run's sends tell as fit.ranges does
// (refillRange): over the points that fit this run (the fitted one
// first), each at its PTU, depth and allowance, the refills its sends
// contradict the fewest (refillRun), where that fewest is the least of
// any point's.
type refillReading struct {
	i      int // the refill's row
	lo, hi float64
	cfg    sim.Config
	points [][3]float64 // PTU, depth (s), allowance (%)
}

// newRefillReading is mf's refill reading; false when mf's run does not
// tell the refill (refillRange's conditions).
func (f *fitter) newRefillReading(mf modelFit) (*refillReading, bool) {
	i := slices.IndexFunc(mf.params, func(p param) bool { return p.Field == "BurstRefill" })
	if mf.model != sim.ProfilePTU || i < 0 || !f.sends.Replay || mf.pts == nil {
		return nil, false
	}
	row := func(field string) int {
		return slices.IndexFunc(mf.params, func(p param) bool { return p.Field == field })
	}
	ptu, depth, pct := row("PTU"), row("BucketDepth"), row("BurstPct")
	if ptu < 0 || depth < 0 || pct < 0 {
		return nil, false
	}
	rr := &refillReading{i: i, lo: mf.params[i].Min, hi: mf.params[i].Max, cfg: mf.cfg}
	rr.points = append(rr.points, [3]float64{mf.cfg.PTU, mf.cfg.BucketDepth.Seconds(), mf.cfg.BurstPct})
	all := f.fittingSplits(mf, ptu, depth, pct, map[[3]float64]bool{rr.points[0]: true})
	// Each candidate reads its run at every point kept: the points whose
	// refills give this run's range its ends (read here at all of them),
	// and at most refillPoints more, evenly over their order.
	rr.points = append(rr.points, all...)
	run := readRun(f.sends, mf.cfg.OutputWeight)
	found := make([]runsRefills, len(rr.points))
	told := make([]bool, len(rr.points))
	onEveryCore(len(rr.points), func(k int) { found[k], told[k] = rr.at(k, run) })
	fewest := -1
	r := [2]float64{math.Inf(1), math.Inf(-1)}
	for k := range found {
		if told[k] && (fewest < 0 || found[k].fewest < fewest) {
			fewest = found[k].fewest
		}
	}
	for k := range found {
		if told[k] && found[k].fewest == fewest {
			r = [2]float64{min(r[0], found[k].least), max(r[1], found[k].most)}
		}
	}
	keep := []bool{true} // the fitted point
	for k := 1; k < len(rr.points); k++ {
		keep = append(keep, told[k] && found[k].fewest == fewest && (found[k].least == r[0] || found[k].most == r[1]))
	}
	for k := range min(len(all), refillPoints) {
		keep[1+k*len(all)/min(len(all), refillPoints)] = true
	}
	var kept [][3]float64
	for k, v := range rr.points {
		if keep[k] {
			kept = append(kept, v)
		}
	}
	rr.points = kept
	return rr, true
}

// at is refillRun of run at rr's point k.
func (rr *refillReading) at(k int, run []runEvent) (runsRefills, bool) {
	v := rr.points[k]
	c := rr.cfg
	c.PTU, c.BucketDepth, c.BurstPct = v[0], time.Duration(v[1]*float64(time.Second)), v[2]
	capacity := c.CapacityTokens()
	return refillRun(run, c.DrainTokensPerSecond(), capacity, capacity*c.BurstPct/100, rr.lo, rr.hi)
}

// refillPoints is how many more of the points that fit refillReading
// reads a candidate's run at, besides the fitted one and those at this
// run's range's ends: at all 691 of testdata/served-e.csv's,
// --suggest-plan took 11.4 s (21.5 s of CPU, load 2.0), at 64 of them
// 6.5 s (11.7 s, load 1.7), the fit alone some 3 s.
const refillPoints = 64

// span is the refills run tells (refillReading); ok is false when no
// send bounds it at any point.
func (rr *refillReading) span(run []runEvent) (r [2]float64, ok bool) {
	fewest := -1
	for k := range rr.points {
		got, told := rr.at(k, run)
		switch {
		case !told:
		case fewest < 0 || got.fewest < fewest:
			fewest, r = got.fewest, [2]float64{got.least, got.most}
		case got.fewest == fewest:
			r = [2]float64{min(r[0], got.least), max(r[1], got.most)}
		}
	}
	return r, fewest >= 0
}

// recorded is r's first run as a recorded run whose sends were answered
// got (a replay's) by a deployment of cfg: each send's refusal, an
// admitted one's time to its last token (cfg's TTFT and TPOT for its
// max_tokens: readRun starts each plan at the one before it's last
// answer), a refill probe's sends to its first refusal.
func (r *replayer) recorded(got []answer, cfg sim.Config) *workload {
	stop := r.probeStop(got)
	var run timeline
	for _, plan := range r.runs[0] {
		var sp sendPlan
		for _, i := range plan {
			s := r.sends[i]
			if s.Group == results.GroupRefillProbe && s.At > stop {
				continue
			}
			s.Refused = got[i].refused
			s.answered, s.took, s.completion = 0, 0, 0
			if !s.Refused {
				s.took = float64(cfg.TTFT+time.Duration(s.MaxTokens)*cfg.TPOT) / float64(time.Millisecond)
			}
			sp.Sends = append(sp.Sends, s)
		}
		run.Plans = append(run.Plans, sp)
	}
	return &workload{Replay: true, Runs: []timeline{run}}
}

// burstReplayer replays the plan of burst b given by its flags (its
// waves as given), then the main job's schedule, of the job's requests,
// then probe's sends (none: no probe). whole: each send admitted is
// answered its whole max_tokens (not a length drawn), so the answers read
// as a recorded run (replayer.recorded) hold their cost.
func burstReplayer(b burst.Config, prompt, maxTokens int, probe sendPlan, whole bool) *replayer {
	run := timeline{Plans: []sendPlan{
		offsets(burst.NewPlan(b), results.GroupBurst, prompt, maxTokens),
		offsets(schedule.NewPlan(schedule.Config{Phases: charplan.Phases()}), results.GroupScheduled, prompt, maxTokens),
	}}
	if len(probe.Sends) > 0 {
		run.Plans = append(run.Plans, sendPlan{Sends: slices.Clone(probe.Sends)})
	}
	if whole {
		for _, p := range run.Plans {
			for i := range p.Sends {
				p.Sends[i].completion = p.Sends[i].MaxTokens
			}
		}
	}
	return newReplayer(&workload{Runs: []timeline{run}})
}

// candidateReplayer is, for a point's settings, the replayer of c's
// sends as the main job would send them to it: its probe's parts of a
// request set by what c's first wave admits there (a wave of c's size
// to a fresh deployment: the first thing the run sends); whole as
// burstReplayer's.
func (f *fitter) candidateReplayer(ctx context.Context, c candidate) func(bool, sim.Config, time.Duration) (*replayer, error) {
	prompt, maxTokens := f.job.PromptTokens, f.job.MaxTokens
	byUnits := map[[2]int]*replayer{}
	return func(whole bool, cfg sim.Config, phase time.Duration) (*replayer, error) {
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
			u = charplan.ProbeUnitsFor(admitted, c.burst.Size)
		}
		k := [2]int{u, b01(whole)}
		if byUnits[k] == nil {
			var probe sendPlan
			if u > 0 {
				probe = probePlan(c.rest, u, c.burst.Size, prompt, maxTokens)
			}
			byUnits[k] = burstReplayer(c.burst, prompt, maxTokens, probe, whole)
		}
		return byUnits[k], nil
	}
}

// separations is how narrowly a plan's run tells each open setting:
// the least ÷ the most of the range it would leave (1: pinned; 0 when
// it bounds none); told is each setting's range. run is the run the
// plan would record (the plan the run sent: its own sends); pts are the
// points that fit this run (toldPoints). The refill's row (refill's,
// when it reads one) is the range refillReading reads in that run; any
// other setting's, the span of the points that fit that run too, each
// replayed on its sends (toldRanges; for the plan the run sent, fit.ranges'
// own). Two points at the ends of a setting's range differ in more than
// it, and a plan tells those apart without narrowing it: weighed (round
// 13) by how far apart the ends answered a plan (their waits' KS, their
// 429 counts), served target e's suggestion, 160 sends 8 times 20 s
// apart, had its run leave the allowance 69.8–10,000% where the main
// job's left 118.3–309.6%.
func (f *fitter) separations(ctx context.Context, mf modelFit, open []ends, rp *replayer, run *workload, refill *refillReading, pts []toldPoint, replays int) (out []float64, told [][2]float64, err error) {
	var spans [][2]float64
	if rp == nil {
		// The run sent: fit.ranges' own.
		for _, e := range open {
			spans = append(spans, mf.ranges[e.i])
		}
	} else {
		skip := -1
		if refill != nil {
			skip = refill.i
		}
		if spans, err = f.toldRanges(ctx, open, skip, rp, run, pts, replays); err != nil {
			return nil, nil, err
		}
	}
	for j, e := range open {
		r := spans[j]
		if refill != nil && e.i == refill.i {
			var ok bool
			if r, ok = refill.span(readRun(run, mf.cfg.OutputWeight)); !ok {
				told, out = append(told, [2]float64{refill.lo, refill.hi}), append(out, 0)
				continue
			}
		}
		told, out = append(told, r), append(out, narrowness(r))
	}
	return out, told, nil
}

// narrowness is a range's least ÷ its most (1: a point; 0 when its
// least is not above 0).
func narrowness(r [2]float64) float64 {
	if r[1] <= 0 || r[0] <= 0 {
		return b01f(r[0] == r[1])
	}
	return r[0] / r[1]
}

func b01f(b bool) float64 { return float64(b01(b)) }

// toldPoint is a point that fits the run (fit.ranges' point set): its
// settings, phase and values (as written).
type toldPoint struct {
	cfg    sim.Config
	phase  time.Duration
	values []float64
}

// toldPoints are the points that fit mf's run, as fit.ranges keeps them
// (valueRanges: fits), the fitted one first, the others in their keys'
// order.
func (f *fitter) toldPoints(mf modelFit) ([]toldPoint, error) {
	at := make([]float64, len(mf.params))
	for i, p := range mf.params {
		at[i] = p.written(mf.cfg)
	}
	out := []toldPoint{{cfg: mf.cfg, phase: mf.phase, values: at}}
	bestQuality := f.quality(mf.score)
	mf.pts.mu.Lock()
	var us [][]float64
	var vs [][]float64
	for _, k := range slices.Sorted(maps.Keys(mf.pts.m)) {
		if t := mf.pts.m[k]; fits(t, mf.score, bestQuality) {
			us, vs = append(us, t.u), append(vs, t.values)
		}
	}
	mf.pts.mu.Unlock()
	for k, u := range us {
		c, phase, err := f.settings(mf.model, mf.params, u)
		if err != nil {
			return nil, err
		}
		out = append(out, toldPoint{cfg: c, phase: phase, values: vs[k]})
	}
	return out, nil
}

// syntheticRun is the run a plan's sends (rp's, whole: burstReplayer)
// would record were cfg's settings the truth, whose answers were got:
// each send's refusal, an admitted one's
// time to its last token (replayer.recorded), the refill probe's sends to
// its first refusal, and each group's waits and 429s, as a recorded
// run's (workload.Groups).
func syntheticRun(rp *replayer, got []answer, cfg sim.Config) *workload {
	w := rp.recorded(got, cfg)
	byName := map[string]*recordedGroup{}
	stop := rp.probeStop(got)
	for _, plan := range rp.runs[0] {
		for _, i := range plan {
			s := rp.sends[i]
			if s.Group == results.GroupRefillProbe && s.At > stop {
				continue
			}
			g := byName[s.Group]
			if g == nil {
				g = &recordedGroup{Group: s.Group}
				byName[s.Group] = g
			}
			g.Sends++
			if got[i].refused {
				g.Refused++
				if got[i].wait >= 0 {
					g.Waits = append(g.Waits, got[i].wait)
				}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		g := byName[name]
		slices.Sort(g.Waits)
		w.Groups = append(w.Groups, *g)
	}
	return w
}

// wholeReplayer replays run's sends, each admitted one answered its
// whole max_tokens, as the plan's were (burstReplayer's whole) when run
// was recorded.
func wholeReplayer(run *workload) *replayer {
	w := &workload{Replay: true}
	for _, tl := range run.Runs {
		var c timeline
		for _, p := range tl.Plans {
			sp := sendPlan{Sends: slices.Clone(p.Sends)}
			for i := range sp.Sends {
				if !sp.Sends[i].Refused {
					sp.Sends[i].completion = sp.Sends[i].MaxTokens
				}
			}
			c.Plans = append(c.Plans, sp)
		}
		w.Runs = append(w.Runs, c)
	}
	return newReplayer(w)
}

// candidateRun is the run c would record were mf's settings the truth
// (syntheticRun).
func (f *fitter) candidateRun(ctx context.Context, mf modelFit, c candidate) (*workload, error) {
	rp, err := f.candidateReplayer(ctx, c)(true, mf.cfg, mf.phase)
	if err != nil {
		return nil, err
	}
	got, err := rp.replay(ctx, mf.cfg, mf.phase)
	if err != nil {
		return nil, err
	}
	return syntheticRun(rp, got, mf.cfg), nil
}

// toldRanges are, for each open setting, the least and the most of it
// over the points pts (which fit this run) that fit run too, each
// replayed on run's sends and compared with it as the fit compares a
// point with this run (compare; fits, against the fitted point's own
// score, pts[0]'s). Along each setting the points are tried from its
// least and from its most inwards to the first that fits (a point
// tried once for all settings), so the span is that over every point,
// and a plan narrows a setting only where its run contradicts the
// points at the ends. The row skip (the refill's, read otherwise) is
// not walked. A replay ends once its refusals disagree with
// run's more than any point that fits can (scoreBelow's rule).
func (f *fitter) toldRanges(ctx context.Context, open []ends, skip int, rp *replayer, run *workload, pts []toldPoint, replays int) ([][2]float64, error) {
	fitted := 0
	for _, snd := range rp.sends {
		if !f.held[snd.Group] {
			fitted++
		}
	}
	replayAt := func(k int, limit float64) (score, bool, error) {
		var count *offCount
		if fitted > 0 && !math.IsInf(limit, 1) {
			count = rp.newOffCount(f.held, func(off int) bool {
				agreement := 1 - float64(off)/float64(fitted)
				return agreement < f.job.MinAgreement && 1-agreement > limit+rangeSlack
			})
		}
		if pts[k].cfg.Validate() != nil {
			return score{objective: inf}, true, nil
		}
		got, done, err := rp.replayUntil(ctx, pts[k].cfg, pts[k].phase, count)
		if err != nil || !done {
			return score{}, false, err
		}
		return compare(run, rp, got, f.held), true, nil
	}
	best, _, err := replayAt(0, math.Inf(1))
	if err != nil {
		return nil, err
	}
	bestQuality := f.quality(best)
	fitsRun := map[int]bool{0: true}
	fitsAt := func(k int) (bool, error) {
		if v, ok := fitsRun[k]; ok {
			return v, nil
		}
		sc, done, err := replayAt(k, best.objective)
		if err != nil {
			return false, err
		}
		fitsRun[k] = done && fits(tried{objective: sc.objective, quality: f.quality(sc)}, best, bestQuality)
		return fitsRun[k], nil
	}
	replayed := func(k int) bool { _, ok := fitsRun[k]; return ok }
	return walkEnds(open, skip, pts, fitsAt, replayed, replays)
}

// walkEnds are, for each open setting but skip, the least and the most
// of it over the points pts that fit (fitsAt; replayed says a point
// was), each end walked in from the outermost point. A walk is one end
// of one setting's range: the points in its order from that end, and
// how far in it has come. The walks take turns, a replay each, until
// each has found a point that fits or replays are spent; a walk stopped
// there ends at the point it would try next (as though that one fits:
// its range no narrower than the run would tell). pts[0] fits, so every
// walk ends.
func walkEnds(open []ends, skip int, pts []toldPoint, fitsAt func(int) (bool, error), replayed func(int) bool, replays int) ([][2]float64, error) {
	type walk struct {
		j, side int
		order   []int
		at      int
		done    bool
	}
	out := make([][2]float64, len(open))
	spent := 1 // pts[0], fitting
	var walks []*walk
	for j, e := range open {
		if e.i == skip {
			continue
		}
		order := make([]int, len(pts))
		for k := range order {
			order[k] = k
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(pts[a].values[e.i], pts[b].values[e.i]) })
		back := slices.Clone(order)
		slices.Reverse(back)
		walks = append(walks, &walk{j: j, order: order}, &walk{j: j, side: 1, order: back})
	}
	for left := true; left; {
		left = false
		for _, w := range walks {
			for !w.done {
				k := w.order[w.at]
				if !replayed(k) && spent > replays {
					w.done = true // stopped: it ends here
					break
				}
				spent += 1 - b01(replayed(k))
				ok, err := fitsAt(k)
				if err != nil {
					return nil, err
				}
				if ok {
					w.done = true
					break
				}
				w.at++
				left = true
				if !replayed(w.order[w.at]) {
					break // its turn's replay is spent
				}
			}
		}
	}
	for _, w := range walks {
		out[w.j][w.side] = pts[w.order[w.at]].values[open[w.j].i]
	}
	return out, nil
}

// maxToldReplays bounds the points toldRanges replays for a candidate
// weighed (not for the one proposed, whose ranges are printed): unbounded,
// the walks in from the ends of served target c's ranges
// (testdata/served-c.csv: 996 points that fit) replayed up to 715 of
// them for one candidate, and --suggest-plan took 14–17 s (25–31 s of
// CPU, load 1.8) where it had taken 6 s (11 s); bounded, 8.4–9.9 s
// (15–18 s), its suggestion and the ranges printed the same.
const maxToldReplays = 160

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
		fmt.Fprintf(w, "  %s from %s to %s: the sends of the plan this run sent tell it from %s to %s, the suggested one's (replayed at the fitted settings) from %s to %s\n",
			e.Name, fmtSetting(e.Name, e.Low), fmtSetting(e.Name, e.High), fmtSetting(e.Name, e.SentTold[0]), fmtSetting(e.Name, e.SentTold[1]),
			fmtSetting(e.Name, e.SuggestedTold[0]), fmtSetting(e.Name, e.SuggestedTold[1]))
	}
}

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
