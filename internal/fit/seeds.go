package fit

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/ptuprobe/ptuprobe/sim"
)

// sameWave is how far after a run's first refusal an admitted send of
// its wave may have been recorded: a served target spreads a wave over
// some 15 ms, and admits every send it admits before its first refusal
// (the level stays past 100% once the allowance is spent), whatever
// order the file's times put them in.
const sameWave = 100 * time.Millisecond

// firstRefusal is what a recorded run says of the PTU model up to its
// first refusal: a fresh deployment admits every arrival while its
// level is at most 100% (capacity C), then those its burst allowance A
// covers, and then refuses, advising the time its level needs to drain
// back to C. The level is the admitted sends' estimated costs, less
// what drained (at the drain D tried, never below 0) and what their
// completions gave back (estimate − actual: the recorded completion),
// so at each D the first refusal's advised wait w gives C = level − D·w,
// and the admitted sends split into those admitted at or under C and
// those A covered. The refill is taken as too slow to matter before the
// first refusal (the main job's is in its first wave).
type firstRefusal struct {
	events []runEvent // in time order (admissions only before the refusal)
	// at is the first refusal's time (seconds), wait its advised wait
	// (seconds), cost its estimated cost.
	at, wait, cost float64
}

// readFirstRefusal reads the first run's first plan up to its first
// refusal; ok is false when nothing was admitted or refused with a
// usable wait before it.
func readFirstRefusal(w *workload, outputWeight float64) (firstRefusal, bool) {
	if !w.Replay || len(w.Runs) == 0 || len(w.Runs[0].Plans) == 0 {
		return firstRefusal{}, false
	}
	s := w.Runs[0].Plans[0].Sends
	r := slices.IndexFunc(s, func(snd send) bool { return snd.Refused })
	if r < 0 || s[r].wait < 0 {
		return firstRefusal{}, false
	}
	cost := func(snd send) float64 { return float64(snd.PromptTokens) + outputWeight*float64(snd.MaxTokens) }
	fr := firstRefusal{at: s[r].At.Seconds(), wait: s[r].wait / 1000, cost: cost(s[r])}
	for _, snd := range s {
		if snd.Refused || snd.At > s[r].At+sameWave {
			continue
		}
		t := min(snd.At.Seconds(), fr.at)
		fr.events = append(fr.events, runEvent{t: t, cost: cost(snd), arrival: true})
		if end := t + snd.took/1000; snd.completion > 0 && snd.took > 0 && end < fr.at {
			fr.events = append(fr.events, runEvent{t: end, cost: outputWeight * float64(snd.completion-snd.MaxTokens)})
		}
	}
	slices.SortStableFunc(fr.events, func(a, b runEvent) int { return cmp.Compare(a.t, b.t) })
	return fr, len(fr.events) > 0
}

// levelAt plays the events at drain d and returns the level at the
// first refusal, and, given a capacity (> 0), the allowance its
// admissions over it spent.
func (fr firstRefusal) levelAt(d, capacity float64) (level, spent float64) {
	last := 0.0
	for _, e := range fr.events {
		level = max(0, level-d*(e.t-last))
		last = e.t
		if e.arrival && capacity > 0 && level > capacity {
			spent += e.cost
		}
		level = max(0, level+e.cost)
	}
	return max(0, level-d*(fr.at-last)), spent
}

// settingsAt is the bucket's depth (s) and the burst allowance (seconds
// of drain) the run says a deployment of drain d (tokens a second) has;
// ok is false when no depth fits (the wait is longer than the level
// drains in). The allowance is put halfway through the refused send's
// cost: the run tells it to within that.
func (fr firstRefusal) settingsAt(d float64) (depth, allowance float64, ok bool) {
	level, _ := fr.levelAt(d, 0)
	capacity := level - d*fr.wait
	if capacity <= 0 {
		return 0, 0, false
	}
	_, spent := fr.levelAt(d, capacity)
	return capacity / d, (spent + fr.cost/2) / d, true
}

// mostDrain is the drain (tokens a second) at which the run's level at
// its first refusal is what drains in the refusal's advised wait: a
// bucket of no depth; at any faster drain no depth fits (settingsAt).
// The level falls as the drain quickens, the wait's drain rises, so the
// two meet once, found by halving (mostHalvings, in the logarithm) from
// the level without drain drained in the time to the refusal and its
// wait, where they meet when the level never empties before the
// refusal (the main job's first wave) and below which they never do: a
// run whose first refusal comes after an idle gap (waves of 40 a minute
// apart against a deep allowance, TestSuggestedPlanNarrowsTheAllowance's:
// the first refusal in the third wave) drains its level to nothing in
// each gap, and that bound (2.9 PTU against its 60) put the whole line
// below the truth.
func (fr firstRefusal) mostDrain() float64 {
	total, _ := fr.levelAt(0, 0)
	lo := total / (fr.at + fr.wait)
	over := func(d float64) bool {
		level, _ := fr.levelAt(d, 0)
		return level > d*fr.wait
	}
	if lo <= 0 || !over(lo*(1+1e-9)) {
		return lo
	}
	hi := lo * 2
	for over(hi) && hi < lo*1e9 {
		hi *= 2
	}
	for range mostHalvings {
		mid := math.Sqrt(lo * hi)
		if over(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// mostHalvings puts mostDrain within 2^(1/2^20) of where the level and the
// wait's drain meet: far closer than the line's steps (seedStep).
const mostHalvings = 40

// The first refusal's line (lineSeeds): the PTU from the most the run
// allows (a bucket of no depth: the level at the first refusal drained
// in the time to it and its advised wait) down to seedSpan times less,
// at seedStep apart on a log scale, each PTU with the depth and
// allowance the run gives at it
// (settingsAt), the refill the run gives there (refillAt; seedRefill
// when it gives none), the cold forecast off. The
// truth lies on the line, to within one send's cost in its depth and
// allowance, and its basin there is about 1% wide in the PTU (the
// objective a saw-tooth of period some 5%, one send's cost moving from
// the allowance to the depth: served target a's run scores 0.029 at
// 250.3 PTU, 0.36 and 0.41 at 249.1 and 251.6, and 0.11–0.16 at the
// teeth's other floors), so the steps are half of that. A PTU at an
// eighth of the most is a burst allowance of a seventh of the depth
// (the ratio is allowance ÷ (allowance + depth)).
const (
	seedStep   = 0.005
	seedSpan   = 8.0
	seedRefill = 60.0 // seconds
)

// The seedBest best points of the line are tried at each of seedRefills
// (seconds) too: a refill decides how much of the allowance the later
// waves find again, and the run's (refillAt) is a few sends' reading.
const seedBest = 6

var seedRefills = []float64{2, 5, 10, 20, 40, 80, 160, 320, 640, 1280, 3600}

// maxSeeds bounds how many points seedLine tries.
var maxSeeds = len(logSteps(1/seedSpan, 1, seedStep)) + seedBest*len(seedRefills)

// seedLine tries the first refusal's line (lineSeeds), then its best
// points at each of seedRefills, in s (its memo keeps the scores) and
// returns every point tried: the search's first batch holds them.
func (f *fitter) seedLine(ctx context.Context, s *search, model string, params []param) ([][]float64, error) {
	line := f.lineSeeds(model, params)
	if len(line) == 0 {
		return nil, nil
	}
	scores, err := s.batch(ctx, line)
	if err != nil {
		return nil, err
	}
	order := make([]int, len(line))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[a], scores[b]) })
	out := slices.Clone(line)
	r := slices.IndexFunc(params, func(p param) bool { return p.Field == "BurstRefill" })
	if r < 0 {
		return out, nil
	}
	for _, k := range order[:min(seedBest, len(order))] {
		for _, v := range seedRefills {
			u := slices.Clone(line[k])
			u[r] = params[r].unit(v)
			out = append(out, u)
		}
	}
	if _, err := s.batch(ctx, out[len(line):]); err != nil {
		return nil, err
	}
	return out, nil
}

// searchTeeth adds to s's seeds (seedLine's points, scored in its memo)
// the points its line's teeth descend to (descendTeeth). It runs once
// the seeded share is decided: that is the line's own say (a line point
// judged good), as before the teeth.
func (s *search) searchTeeth(ctx context.Context, params []param) error {
	scores := make([]float64, len(s.seeds))
	s.mu.Lock()
	for k, u := range s.seeds {
		sc, ok := s.memo[s.key(u)]
		if !ok {
			sc = inf
		}
		scores[k] = sc
	}
	s.mu.Unlock()
	found, err := s.descendTeeth(ctx, s.seeds, scores, params)
	if err != nil {
		return err
	}
	s.seeds = append(s.seeds, found...)
	return nil
}

// The line's teeth (descendTeeth): the truth's basin is a thin set next
// to the first refusal's line, not on it (the line's depth and
// allowance are the first refusal's to within a send's cost, its refill
// a few sends' reading), so the line's point nearest the truth can score
// worse than a point of a neighbouring tooth (some 5% of the PTU apart:
// a send's cost moved from the allowance to the depth) that the line
// crosses nearer its floor. Served target d's recording of round 11
// (testdata/served-d2.csv) scores 0.096 on the line at 150 PTU, 1.503 s,
// 299%, and 0.0216 at 162.4 PTU, 1.038 s, 437%, where the fit ended;
// but 0.0102 at 148.6 PTU, 1.514 s, 301%. The search's other stages
// start from its best points (Nelder–Mead, grids, hops of 10%), all in
// the one tooth, and move the table's coordinates, each of which moves
// the capacity. So each of the best teethBest points of the line (its
// refills swept included) that lie more than teethGap apart in the PTU
// (each another tooth) is searched near: a grid in the drain and the
// capacity (teethGridDrain, teethGridCapacity steps each way), then a
// Nelder–Mead of teethEval evaluations from the grid's best along the
// run's own directions (toothEdges), teethWidth at once.
const (
	teethBest  = 4
	teethGap   = 0.02
	teethEval  = 40
	teethWidth = 4
)

// descendTeeth searches near the best of pts (scores) that lie in
// distinct teeth of the line, whose PTU is more than teethGap from every
// one picked before (the constants above), and returns the points the
// searches end at. Each is a function of its start alone, so the result
// is the same whatever order the workers finish in.
func (s *search) descendTeeth(ctx context.Context, pts [][]float64, scores []float64, params []param) ([][]float64, error) {
	edges, i := s.toothEdges(params)
	if edges == nil {
		return nil, nil
	}
	order := make([]int, len(pts))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[a], scores[b]) })
	var picked []int
	for _, k := range order {
		if len(picked) == teethBest || math.IsInf(scores[k], 1) {
			break
		}
		v := params[i].value(pts[k][i])
		if !slices.ContainsFunc(picked, func(j int) bool { return math.Abs(v/params[i].value(pts[j][i])-1) <= teethGap }) {
			picked = append(picked, k)
		}
	}
	// Each tooth's grid in the drain and the capacity (teethGrid), in one
	// batch; its descent starts from the grid's best.
	var grid [][]float64
	for _, k := range picked {
		for a := -teethGridDrain; a <= teethGridDrain; a++ {
			for b := -teethGridCapacity; b <= teethGridCapacity; b++ {
				u := slices.Clone(pts[k])
				for i := range u {
					u[i] += float64(a)*edges[0][i] + float64(b)*edges[1][i]
				}
				grid = append(grid, clampUnit(u))
			}
		}
	}
	gs, err := s.batch(ctx, grid)
	if err != nil {
		return nil, err
	}
	per := len(grid) / max(len(picked), 1)
	starts := make([]point, len(picked))
	for j, k := range picked {
		starts[j] = point{pts[k], scores[k]}
		for g := j * per; g < (j+1)*per; g++ {
			if gs[g] < starts[j].score {
				starts[j] = point{grid[g], gs[g]}
			}
		}
	}
	found := make([][]float64, len(picked))
	for h := 0; h < len(picked); h += teethWidth {
		end := min(h+teethWidth, len(picked))
		errs := make([]error, end-h)
		var wg sync.WaitGroup
		for j := h; j < end; j++ {
			wg.Go(func() {
				q, err := s.simplexAlong(ctx, slices.Clone(starts[j].u), starts[j].score, edges, teethEval)
				found[j], errs[j-h] = q.u, err
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
	}
	return found, nil
}

// The first simplex of a tooth's descent (toothEdges), as shares of
// each setting: the drain up by teethDrain with the bucket's capacity
// and the allowance in tokens held (the PTU up, the depth and the
// allowance in seconds of drain down by as much); the capacity up by
// teethCapacity (the depth); the allowance by teethAllowance; the
// refill by teethRefill. A tooth's floor is a thin set in the capacity
// (served target d's recording of round 11: 0.0065 at 150 PTU and
// 1.49 s, 0.033 at 1.48 s or 150.4 PTU, some 0.5% either way), where a
// step of the table's coordinates moves the capacity with the PTU.
const (
	teethDrain     = 0.005
	teethCapacity  = 0.005
	teethAllowance = 0.01
	teethRefill    = 0.02
)

// teethGridDrain and teethGridCapacity: a tooth's grid (descendTeeth)
// is its point moved by up to that many of the first simplex's drain
// and capacity edges, each way.
const (
	teethGridDrain    = 2
	teethGridCapacity = 3
)

// teethPoints bounds how many points descendTeeth tries: each tooth's
// grid, its first simplex's other vertices and its descent.
const teethPoints = teethBest * ((2*teethGridDrain+1)*(2*teethGridCapacity+1) + 4 + teethEval)

// toothEdges are the edges of a tooth's first simplex in s's unit box
// (the constants above), and the PTU row's index; nil without the PTU
// model's rows searched as the allowance (PerDepth).
func (s *search) toothEdges(params []param) ([][]float64, int) {
	row := func(field string) int {
		return slices.IndexFunc(params, func(p param) bool { return p.Field == field })
	}
	ptu, depth, allowance, refill := row("PTU"), row("BucketDepth"), row("BurstPct"), row("BurstRefill")
	if ptu < 0 || depth < 0 || allowance < 0 || refill < 0 || !params[allowance].PerDepth {
		return nil, 0
	}
	edge := func(moves map[int]float64) []float64 {
		e := make([]float64, s.n)
		for i, rel := range moves {
			e[i] = math.Copysign(s.unitOf(i, math.Abs(rel)), rel)
		}
		return e
	}
	return [][]float64{
		edge(map[int]float64{ptu: teethDrain, depth: -teethDrain, allowance: -teethDrain}),
		edge(map[int]float64{depth: teethCapacity}),
		edge(map[int]float64{allowance: teethAllowance}),
		edge(map[int]float64{refill: teethRefill}),
	}, ptu
}

// lineSeeds are unit points of the PTU model's table params along the
// first refusal's line (the constants above). None when the run does
// not say (readFirstRefusal) or the model is not the PTU's.
func (f *fitter) lineSeeds(model string, params []param) [][]float64 {
	if model != sim.ProfilePTU {
		return nil
	}
	base := f.base(model)
	fw, ok := readFirstRefusal(f.sends, base.OutputWeight)
	if !ok {
		return nil
	}
	// The most: the drain at which the level at the first refusal is
	// all drained in its wait (a bucket of no depth: mostDrain).
	most := fw.mostDrain() * 60 / base.TokensPerPTU
	type linePoint struct{ ptu, depth, allowance, refill float64 }
	var line []linePoint
	for _, ptu := range logSteps(most/seedSpan, most, seedStep)[:maxSeeds] {
		c := base
		c.PTU = ptu
		if depth, allowance, ok := fw.settingsAt(c.DrainTokensPerSecond()); ok {
			line = append(line, linePoint{ptu, depth, allowance, seedRefill})
		}
	}
	// Each point's refill, the run's at its settings (refillAt), on
	// every core: some 40 plays of the run a point.
	if r := slices.IndexFunc(params, func(p param) bool { return p.Field == "BurstRefill" }); r >= 0 {
		run := readRun(f.sends, base.OutputWeight)
		onEveryCore(len(line), func(k int) {
			c := base
			c.PTU = line[k].ptu
			d := c.DrainTokensPerSecond()
			if v, _, _, ok := refillAt(run, d, line[k].depth*d, line[k].allowance*d, params[r].Min, params[r].Max); ok {
				line[k].refill = v
			}
		})
	}
	var out [][]float64
	for _, lp := range line {
		u := make([]float64, len(params))
		for i, p := range params {
			switch p.Field {
			case "PTU":
				u[i] = p.unit(lp.ptu)
			case "BucketDepth":
				u[i] = p.unit(lp.depth)
			case "BurstPct":
				v := lp.allowance
				if !p.PerDepth {
					v = 100 * lp.allowance / lp.depth
				}
				u[i] = p.unit(v)
			case "BurstRefill":
				u[i] = p.unit(lp.refill)
			default:
				u[i] = p.unit(p.get(base))
				if p.OffAtMax {
					u[i] = 1
				}
			}
		}
		out = append(out, u)
	}
	return out
}

// logSteps are the values from lo to hi at a factor of 1+step apart.
func logSteps(lo, hi, step float64) []float64 {
	var out []float64
	for v := lo; v <= hi*(1+1e-9); v *= 1 + step {
		out = append(out, v)
	}
	return out
}

// The refill on the line (refillAt): once a refusal has forfeited the
// allowance, it comes back at allowance ÷ refill a second, and the run
// says how fast. Each admission the level puts over 100% was covered by
// what had come back since (the allowance spent, spent + its cost, at
// most the allowance), and each refusal was not (more than the
// allowance; at whatever level, see contradictions), so at one drain, depth and allowance each such send bounds
// the refill one way: its own threshold, the same whatever the others'
// (the allowance spent at any instant falls as the refill quickens). The
// refill that contradicts the fewest of them is the run's, found on a
// grid of refillSteps over the refill's range. A served target's runs
// put it where no constant does: target d's (20 s), whose line at a
// refill of 60 s scores 0.9–1.4 at every PTU, its own settings 0.017,
// so the line's best points were no nearer the truth than its worst.

// runEvent is one event of a run as the level sees it, at t seconds
// from the run's start: an arrival of estimated cost (refused or
// admitted; its estimate added, the allowance spent when over the
// bucket's capacity), or an admitted send's completion, whose cost is
// its actual cost less the estimate. The first refusal's line
// (firstRefusal) and the run's refill (refillAt) both play them.
type runEvent struct {
	t, cost float64
	arrival bool
	refused bool
}

// instant is how close a plan's sends must arrive to be one instant, in
// which a deployment admits before it refuses (the order the level
// takes them in is not the file's): a served target spreads a wave of
// the main job over some 15 ms, and the scheduled plan's sends are 40 ms
// or more apart.
const instant = 0.02

// readRun reads the first run's sends, every plan, as the level takes
// them: each plan from the end of the one before it (its last answer),
// in each instant the admitted first, and the admitted sends'
// completions (cost: what each gave back) where recorded, all in time
// order.
func readRun(w *workload, outputWeight float64) []runEvent {
	if !w.Replay || len(w.Runs) == 0 {
		return nil
	}
	var out []runEvent
	start := 0.0
	for _, p := range w.Runs[0].Plans {
		end := start
		var plan []runEvent
		for _, snd := range p.Sends {
			t := start + snd.At.Seconds()
			plan = append(plan, runEvent{t: t, cost: float64(snd.PromptTokens) + outputWeight*float64(snd.MaxTokens), arrival: true, refused: snd.Refused})
			took := snd.took / 1000
			if snd.Refused {
				took = snd.answered / 1000
			} else if snd.completion > 0 && took > 0 {
				out = append(out, runEvent{t: t + took, cost: outputWeight * float64(snd.completion-snd.MaxTokens)})
			}
			end = max(end, t+took)
		}
		slices.SortStableFunc(plan, func(a, b runEvent) int { return cmp.Compare(a.t, b.t) })
		for i := 0; i < len(plan); {
			j := i + 1
			for j < len(plan) && plan[j].t-plan[i].t <= instant {
				j++
			}
			slices.SortStableFunc(plan[i:j], func(a, b runEvent) int { return cmp.Compare(b01(a.refused), b01(b.refused)) })
			for k := i + 1; k < j; k++ {
				plan[k].t = plan[i].t
			}
			i = j
		}
		out = append(out, plan...)
		start = end
	}
	// Completions before the arrivals of their instant.
	slices.SortStableFunc(out, func(a, b runEvent) int {
		return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(b01(a.arrival), b01(b.arrival)))
	})
	return out
}

// refillSteps is how many refills refillAt weighs in each of its two
// passes, evenly in the logarithm: over the refill's range (1 s – 1 h: a
// factor of 1.4 apart), then over the coarse pass's least-contradicting
// steps and one step either side (a factor of some 1.04 apart).
const refillSteps = 25

// refillEdgeBisections is how many times refillAt halves, in the
// logarithm, the fine pass's step at each end of its run of ties (the
// last refill of the run and the next one out): six put each end within
// 0.07% of the refill where the run's sends begin to contradict it.
const refillEdgeBisections = 6

// refillAt is the refill (seconds, within lo–hi) that contradicts the
// fewest of the run's sends at drain d, capacity and allowance (tokens):
// the geometric middle of the first run of refills that tie, and that
// run's ends (least, most), each bisected to the refill where the
// sends begin to contradict (refillEdgeBisections): every refill between
// them contradicts as few, and the run tells none of them from another.
// ok is false when every refill contradicts as many (no send bounds it).
//
// The ends are the run's, not the fine pass's steps: served target b
// (45 s) is told by one admission over 100% some 5.3 s after a refusal
// (one send's cost back, so a refill of at most 45.6 s) and one refusal
// 0.18 s after it (not two sends', so more than 23.5 s); the fine
// pass's steps put the run's most at 44.5 s, short of the truth.
func refillAt(events []runEvent, d, capacity, allowance, lo, hi float64) (refill, least, most float64, ok bool) {
	r, ok := refillRun(events, d, capacity, allowance, lo, hi)
	return r.refill, r.least, r.most, ok
}

// runsRefills is refillAt's answer, with how many of the run's sends
// its refills contradict (fewest).
type runsRefills struct {
	refill, least, most float64
	fewest              int
}

// refillRun is refillAt.
func refillRun(events []runEvent, d, capacity, allowance, lo, hi float64) (runsRefills, bool) {
	if allowance <= 0 || len(events) == 0 {
		return runsRefills{}, false
	}
	count := func(refill float64) int { return contradictions(events, d, capacity, allowance, allowance/refill) }
	type run struct {
		a, b, in, out float64 // a step out, the run's ends, a step out
		fewest        int
		flat          bool
	}
	pass := func(lo, hi float64) run {
		at := func(k int) float64 { return lo * math.Pow(hi/lo, float64(k)/float64(refillSteps-1)) }
		counts := make([]int, refillSteps)
		for k := range counts {
			counts[k] = count(at(k))
		}
		fewest := slices.Min(counts)
		from := slices.Index(counts, fewest)
		to := from
		for to+1 < len(counts) && counts[to+1] == fewest {
			to++
		}
		return run{at(max(from-1, 0)), at(min(to+1, refillSteps-1)), at(from), at(to), fewest, fewest == slices.Max(counts)}
	}
	coarse := pass(lo, hi)
	if coarse.flat {
		return runsRefills{}, false
	}
	fine := pass(coarse.a, coarse.b)
	// edge bisects between a refill of the run (in) and the next one out
	// (out), keeping in on the run's side.
	edge := func(in, out float64) float64 {
		if in == out {
			return in
		}
		for range refillEdgeBisections {
			mid := math.Sqrt(in * out)
			if count(mid) == fine.fewest {
				in = mid
			} else {
				out = mid
			}
		}
		return in
	}
	return runsRefills{math.Sqrt(fine.a * fine.b), edge(fine.in, fine.a), edge(fine.out, fine.b), fine.fewest}, true
}

// contradictions plays the events at drain d, capacity and allowance
// (tokens), the allowance coming back at rate tokens a second, and
// counts the admissions over 100% it would not have covered and the
// refusals it would have. Every refusal counts and forfeits the
// allowance, whatever level the point's drain puts it at: a deployment
// refuses only over 100%, and forfeits at each (sim/bucket.go admit), so
// a refusal the level puts a few tokens under 100% is one the drain is
// that little off on, not one that tells nothing of the refill (served
// target c's probe refusal: TestRefusalsForfeitAtEveryLevel).
func contradictions(events []runEvent, d, capacity, allowance, rate float64) int {
	level, spent, last, n := 0.0, 0.0, 0.0, 0
	for _, e := range events {
		if dt := e.t - last; dt > 0 {
			level = max(0, level-d*dt)
			spent = max(0, spent-rate*dt)
			last = e.t
		}
		over := level > capacity
		switch {
		case !e.arrival:
			level = max(0, level+e.cost)
		case e.refused:
			if spent+e.cost <= allowance {
				n++
			}
			spent = max(spent, allowance)
		default:
			if over {
				if spent+e.cost > allowance {
					n++
				}
				spent += e.cost
			}
			level += e.cost
		}
	}
	return n
}

// runsRefill tries, at the search's best point p of the PTU model's
// table params, the refill the run gives at its other settings
// (refillAt): its estimate, then the least and the most refill its
// sends contradict as little; and returns the best of them and whether
// it moved from p: to one of lower objective, or, slack above 0, to the
// best of them when it scores within slack of p's and is judged as p is
// (where the objective tells them apart by a wait or two, the run's
// sends do). The refill's basin is wide where the run tells it (served
// target a's run scores 0.008 at 117 s, 0.012 at 150–200 s, 0.018 from
// 350 s on, 0.033 at 93 s), and the scans' doubling steps along it
// cross it in one step.
func (f *fitter) runsRefill(ctx context.Context, s *search, model string, params []param, p point, slack float64) ([]float64, bool, error) {
	r := slices.IndexFunc(params, func(q param) bool { return q.Field == "BurstRefill" })
	if model != sim.ProfilePTU || r < 0 || !f.sends.Replay {
		return p.u, false, nil
	}
	c, _, err := f.settings(model, params, p.u)
	if err != nil {
		return p.u, false, nil
	}
	capacity := c.CapacityTokens()
	refill, least, most, ok := refillAt(readRun(f.sends, c.OutputWeight), c.DrainTokensPerSecond(), capacity, capacity*c.BurstPct/100, params[r].Min, params[r].Max)
	if !ok {
		return p.u, false, nil
	}
	var pts [][]float64
	for _, v := range []float64{refill, least, most} {
		u := slices.Clone(p.u)
		u[r] = params[r].unit(v)
		pts = append(pts, u)
	}
	scores, err := s.batch(ctx, pts)
	if err != nil {
		return nil, false, err
	}
	k := 0
	for j, sc := range scores {
		if sc < scores[k] {
			k = j
		}
	}
	switch {
	case scores[k] < p.score:
		return pts[k], true, nil
	case slack <= 0 || scores[k] > p.score+slack || s.key(pts[k]) == s.key(p.u):
		return p.u, false, nil
	}
	at, err := f.score(ctx, model, params, p.u)
	if err != nil {
		return nil, false, err
	}
	own, err := f.score(ctx, model, params, pts[k])
	if err != nil {
		return nil, false, err
	}
	if f.quality(own) != f.quality(at) {
		return p.u, false, nil
	}
	return pts[k], true, nil
}

// refillSlack is how much more than the best objective the model's last
// point may score with the run's refill (runsRefill at the end of fit)
// and be kept, judged as well: the objective's differences there are a
// wait or two of a group's or a send's second (another recording of
// served target a: 0.0219 at a refill of 640 s, 0.0283 at 110 s, the
// truth's 120 s; the run's sends contradict 110 s none times, 640 s
// twice).
const refillSlack = 0.01

// plainest is the model's last point from its best p, on the PTU
// model's table params: the run's own refill (runsRefill, within
// refillSlack), then every mechanism that is off at its Max (the cold
// forecast) off, when the point with it off scores within refillSlack
// of p's and is judged as p is: a run that cannot tell a mechanism's
// effect from a wait or two does not show it, and a twin that keeps it
// answers other plans with it (another recording of served target a,
// which has no cold forecast, fitted one of 93% after 100 ms: objective
// 0.0221, off 0.0250; the twin's main job on it gave Overall p50 and p90
// of 67 and 685 ms, the target's 30 and 564). A plan's fit keeps its
// best: the documents' cold forecast is the run's long tail.
func (f *fitter) plainest(ctx context.Context, s *search, model string, params []param, p point) ([]float64, bool, error) {
	u, moved, err := f.runsRefill(ctx, s, model, params, p, refillSlack)
	if err != nil || model != sim.ProfilePTU || !f.sends.Replay {
		return u, moved, err
	}
	off := slices.Clone(u)
	for i, q := range params {
		if q.OffAtMax {
			off[i] = 1
		}
	}
	if s.key(off) == s.key(u) {
		return u, moved, nil
	}
	at, err := f.score(ctx, model, params, p.u)
	if err != nil {
		return nil, false, err
	}
	plain, err := f.score(ctx, model, params, off)
	if err != nil {
		return nil, false, err
	}
	if plain.objective > p.score+refillSlack || f.quality(plain) != f.quality(at) {
		return u, moved, nil
	}
	return off, true, nil
}
