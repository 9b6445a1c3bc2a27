package fit

import (
	"context"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/ptuprobe/ptuprobe/sim"
)

// What the run cannot tell apart (docs/fit.md): a parameter the run
// pins is recovered; one it does not is reported as the range of values
// that fit the run within its tolerance, from every point the search
// tried and a scan along each parameter from the best one.

// rangeSlack is how much more than the best objective a point may reach
// and still fit the run, when the best is poor (a good fit's points fit
// when the judgement calls them good too; an insufficient fit's, when it
// does not call them poor: the run is too short to tell them apart).
const rangeSlack = 0.05

// scanSteps are the distances (a share of a parameter's range, each way)
// of the scan along each parameter from the best point: doubling, so the
// edge of a range of any width is found to within a factor of 2 of its
// distance.
var scanSteps = []float64{0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64}

// tried is one point the search replayed: its settings' values (as
// written: param.written), its objective and the judgement's quality.
type tried struct {
	u         []float64
	values    []float64
	objective float64
	quality   string
}

// triedPoints are the points of one model's search, by their settings'
// key (a point is replayed once; two replays of one key are the same).
type triedPoints struct {
	mu sync.Mutex
	m  map[string]tried
}

func (t *triedPoints) add(key string, p tried) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.m[key]; !ok {
		t.m[key] = p
	}
}

// anyGood says whether the judgement calls any point tried good.
func (t *triedPoints) anyGood() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range t.m {
		if p.quality == sim.FitGood {
			return true
		}
	}
	return false
}

// scanPoints is how many points scan makes over n parameters.
func scanPoints(n int) int { return 2 * n * len(scanSteps) }

// scan is the points along each parameter from best, both ways, at
// scanSteps (clamped to the box; phase too, though its range is not
// reported).
func scan(best []float64) [][]float64 {
	var out [][]float64
	for i := range best {
		for _, d := range scanSteps {
			for _, sgn := range []float64{-1, 1} {
				u := slices.Clone(best)
				u[i] = min(max(u[i]+sgn*d, 0), 1)
				out = append(out, u)
			}
		}
	}
	return out
}

// valueRanges are, per parameter, the least and the most value (as
// written) over the tried points that fit the run (fits). The best
// point, at, is always inside. The result is a function of the set of
// points (min and max), whatever the order they were tried in.
func valueRanges(at []float64, bestScore score, bestQuality string, pts *triedPoints) [][2]float64 {
	out := make([][2]float64, len(at))
	for i, v := range at {
		out[i] = [2]float64{v, v}
	}
	pts.mu.Lock()
	defer pts.mu.Unlock()
	for _, p := range pts.m {
		if !fits(p, bestScore, bestQuality) {
			continue
		}
		for i, v := range p.values {
			out[i][0], out[i][1] = min(out[i][0], v), max(out[i][1], v)
		}
	}
	return out
}

// fits says whether a tried point fits the run as the best does: judged
// good, when the best is good; judged not poor, when the best is
// insufficient; within rangeSlack of its objective, when it is poor.
func fits(p tried, best score, bestQuality string) bool {
	switch {
	case math.IsInf(p.objective, 0):
		return false
	case bestQuality == sim.FitGood:
		return p.quality == sim.FitGood
	case bestQuality == sim.FitInsufficient:
		return p.quality != sim.FitPoor
	}
	return p.objective <= best.objective+rangeSlack
}

// written is the row's value in c as a range reports it: the field
// (seconds for a duration; a PerDepth row's percent, not the allowance
// it is searched as), an OffAtMax row's off (0) as its Max, which does
// the same; phaseParam's 0.
func (p param) written(c sim.Config) float64 {
	v := p.raw(c)
	if p.OffAtMax && v == 0 {
		return p.Max
	}
	return v
}

// settingRanges words a model's ranges as a profile's settings write
// them, keyed by setting (phaseParam, not a setting, left out).
func settingRanges(params []param, r [][2]float64) (map[string][2]json.RawMessage, error) {
	out := map[string][2]json.RawMessage{}
	for i, p := range params {
		if p.Field == "" {
			continue
		}
		var ends [2]json.RawMessage
		for k, v := range r[i] {
			c := sim.DefaultConfig()
			raw := p
			raw.OffAtMax, raw.PerDepth = false, false
			if err := raw.set(&c, v); err != nil {
				return nil, err
			}
			b, err := sim.EncodeSetting(c, p.Name)
			if err != nil {
				return nil, err
			}
			ends[k] = b
		}
		out[p.Name] = ends
	}
	return out, nil
}

// edgeBisections is how many times the scan's outermost fitting step
// along a parameter and the next step out are bisected (halfway in the
// step's logarithm): the scan's doubling steps find a range's edge to
// within a factor of 2 of its distance, three bisections to within
// 2^(1/8), 9%.
const edgeBisections = 3

// scanRanges replays the scan around best, bisects towards each edge
// the scan found (edgeBisections), and returns the ranges.
func (f *fitter) scanRanges(ctx context.Context, s *search, best, at []float64, bestScore score, pts *triedPoints) ([][2]float64, error) {
	if !s.b.noScan {
		if _, err := s.batchBelow(ctx, scan(best), bestScore.objective); err != nil {
			return nil, err
		}
		if err := f.bisectEdges(ctx, s, best, bestScore, pts); err != nil {
			return nil, err
		}
	}
	return valueRanges(at, bestScore, f.quality(bestScore), pts), nil
}

// bisectEdges narrows, along each parameter and each way from best, the
// gap between the farthest scanned step that fits and the next step
// out (within the box), edgeBisections times: each round's midpoints in
// one batch. Where no step fits, or the farthest is the last, nothing is
// bisected.
func (f *fitter) bisectEdges(ctx context.Context, s *search, best []float64, bestScore score, pts *triedPoints) error {
	bestQuality := f.quality(bestScore)
	at := func(i int, d float64) []float64 {
		u := slices.Clone(best)
		u[i] = min(max(u[i]+d, 0), 1)
		return u
	}
	fitsAt := func(u []float64) bool {
		pts.mu.Lock()
		defer pts.mu.Unlock()
		t, ok := pts.m[s.key(u)]
		return ok && fits(t, bestScore, bestQuality)
	}
	type gap struct {
		i       int
		in, out float64 // signed distances: the farthest that fits, the next out
	}
	var gaps []gap
	for i := range best {
		for _, sgn := range []float64{-1, 1} {
			k := -1
			for j, d := range scanSteps {
				if fitsAt(at(i, sgn*d)) {
					k = j
				}
			}
			if k < 0 || k+1 == len(scanSteps) {
				continue
			}
			room := best[i] // how far the box goes this way
			if sgn > 0 {
				room = 1 - best[i]
			}
			if scanSteps[k] >= room {
				continue // the fitting step is the box's edge
			}
			gaps = append(gaps, gap{i, sgn * scanSteps[k], sgn * min(scanSteps[k+1], room)})
		}
	}
	for range edgeBisections {
		if len(gaps) == 0 {
			return nil
		}
		pts2 := make([][]float64, len(gaps))
		for k, g := range gaps {
			pts2[k] = at(g.i, sign(g.in)*math.Sqrt(abs(g.in)*abs(g.out)))
		}
		if _, err := s.batchBelow(ctx, pts2, bestScore.objective); err != nil {
			return err
		}
		for k := range gaps {
			mid := sign(gaps[k].in) * math.Sqrt(abs(gaps[k].in)*abs(gaps[k].out))
			if fitsAt(pts2[k]) {
				gaps[k].in = mid
			} else {
				gaps[k].out = mid
			}
		}
	}
	return nil
}

// quality is the judgement's of a score.
func (f *fitter) quality(sc score) string {
	q, _ := judge(sc, f.job.Threshold, f.job.MinAgreement, minWaitsAt(f.job.Threshold))
	return q
}

// pinned says whether a fitted value's range lies within
// percentileTolerance of it: the run pins the setting as closely as the
// judgement tells waits apart. A setting not pinned is one the run
// cannot tell apart over its range (--suggest-plan proposes a plan that
// would).
func pinned(v float64, r [2]float64) bool {
	return r[0] >= (1-percentileTolerance)*v && r[1] <= (1+percentileTolerance)*v
}

// refillRange is the refill's entry of mf's ranges (its row, i) as the
// run's sends tell it: the judgement's tolerance (fits) holds a refill
// its sends contradict by one or two, a run's whole evidence of it
// (served target b, 45 s: every refill from 17.7 s to the search's
// bound of 1 h fitted good, its objective 0.0019 from 23.5 to 46 s and
// 0.0109 past them, one send's 429 apart). So the range is, over the
// points that fit the run (as valueRanges), each at its PTU, depth and
// allowance, the refills from least to most that its sends contradict
// the fewest (refillRun), where that fewest is the least of any of
// them (a point whose sends contradict more is told apart from those by
// the run); with mf's refill. The allowance's own range moves the
// refill's with it (the run tells the rate the allowance comes back at,
// allowance ÷ refill): b's fitted 589.4% puts the run's most at 44.7 s,
// the truth's 600% at 45.5 s. Served target e's run (testdata/served-e.csv:
// 300 PTU, 1 s, 175%, 5 minutes) fitted a point whose split of bucket
// and allowance contradicts 11 of its sends (the refill probe's
// admissions); over every point that fits and contradicts no more, its
// range was 6.2 s – 1 h, over those that contradict none 187.9 s – 1 h.
// ok is false when the run does not tell the refill (no send bounds it
// at mf's point): the range is the judgement's.
// fittingSplits is the points of mf's search that fit, once each for
// their PTU, depth and allowance (the values in rows ptu, depth and pct),
// in the order of their keys, leaving out those already seen (which it
// marks).
func (f *fitter) fittingSplits(mf modelFit, ptu, depth, pct int, seen map[[3]float64]bool) [][3]float64 {
	bestQuality := f.quality(mf.score)
	var splits [][3]float64
	mf.pts.mu.Lock()
	defer mf.pts.mu.Unlock()
	for _, k := range slices.Sorted(maps.Keys(mf.pts.m)) {
		t := mf.pts.m[k]
		v := [3]float64{t.values[ptu], t.values[depth], t.values[pct]}
		if fits(t, mf.score, bestQuality) && !seen[v] {
			seen[v] = true
			splits = append(splits, v)
		}
	}
	return splits
}

func (f *fitter) refillRange(mf modelFit) (i int, r [2]float64, ok bool) {
	i = slices.IndexFunc(mf.params, func(p param) bool { return p.Field == "BurstRefill" })
	if mf.model != sim.ProfilePTU || i < 0 || !f.sends.Replay || mf.pts == nil {
		return 0, r, false
	}
	row := func(field string) int {
		return slices.IndexFunc(mf.params, func(p param) bool { return p.Field == field })
	}
	ptu, depth, pct := row("PTU"), row("BucketDepth"), row("BurstPct")
	if ptu < 0 || depth < 0 || pct < 0 {
		return 0, r, false
	}
	run := readRun(f.sends, mf.cfg.OutputWeight)
	lo, hi := mf.params[i].Min, mf.params[i].Max
	at := func(v [3]float64) (runsRefills, bool) {
		c := mf.cfg
		c.PTU, c.BucketDepth, c.BurstPct = v[0], time.Duration(v[1]*float64(time.Second)), v[2]
		capacity := c.CapacityTokens()
		return refillRun(run, c.DrainTokensPerSecond(), capacity, capacity*c.BurstPct/100, lo, hi)
	}
	own, ok := at([3]float64{mf.cfg.PTU, mf.cfg.BucketDepth.Seconds(), mf.cfg.BurstPct})
	if !ok {
		return 0, r, false
	}
	others := f.fittingSplits(mf, ptu, depth, pct, map[[3]float64]bool{})
	found := make([]runsRefills, len(others))
	told := make([]bool, len(others))
	onEveryCore(len(others), func(k int) { found[k], told[k] = at(others[k]) })
	// The fewest any point that fits contradicts: the points that
	// contradict more are told apart from them by the run's sends.
	fewest := own.fewest
	for k := range others {
		if told[k] {
			fewest = min(fewest, found[k].fewest)
		}
	}
	v := mf.params[i].written(mf.cfg)
	r = [2]float64{v, v}
	if own.fewest == fewest {
		r = [2]float64{min(own.least, v), max(own.most, v)}
	}
	for k := range others {
		if told[k] && found[k].fewest == fewest {
			r[0], r[1] = min(r[0], found[k].least), max(r[1], found[k].most)
		}
	}
	return i, r, true
}
