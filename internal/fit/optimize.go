package fit

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"math"
	"runtime"
	"slices"
	"sync"
)

// The search's budget. The objective is a step function of the settings
// (KS and agreement count sends) with long curved valleys where settings
// trade against each other (a deeper bucket for a smaller allowance), so
// no one method does: quasi-random points over the whole box (a Halton
// sequence, deterministic) find the valleys, Nelder–Mead from the best few
// follows them, and a last pass of grids along each parameter settles the
// steps.
const (
	simplexStep = 0.08
	finePoints  = 7 // points of each grid of the last passes, over ±span
	fineSpan    = 0.04
)

// budget is how much of each stage a search spends.
type budget struct {
	global  int // Halton points per parameter
	starts  int // Nelder–Mead searches, from the best global points
	simplex int // evaluations each Nelder–Mead search may make
	passes  int // passes of grids at the end; the span halves after each
	lines   int // rounds of scans along each parameter's whole range
	hops    int // local searches from points around the best, last (hop)
	hopEval int // evaluations each of them may make
	// seeds: the search's first batch holds the points the run's first
	// refusal puts on a line (seedLine), besides the quasi-random ones.
	seeds bool
	// noScan skips the ranges' scan (scanRanges): the ranges are the
	// points the search tried alone (the tests of what a fit does around
	// its search).
	noScan bool
}

// defaultBudget fits the main job's results (~400 sends, ~5 ms a replay)
// in a few seconds on two cores; othersBudget is the models' after the
// first (the gateway and the window: three parameters each, whose
// objectives on a PTU deployment's run are far from the PTU model's).
var (
	defaultBudget = budget{global: 80, starts: 4, simplex: 60, passes: 2, lines: 3, hops: 8, hopEval: 40, seeds: true}
	othersBudget  = budget{global: 40, starts: 2, simplex: 40, passes: 2, lines: 2}
)

// seeded is b once the first refusal's line (seedLine) has found a point
// the judgement calls good: the quasi-random points, there to find the
// valley the line found, are fewer, and so are the Nelder–Mead starts
// and the hops (which reach a basin from within some 10% of it: the
// line's point is in it).
func (b budget) seeded() budget {
	b.global = min(b.global, seededGlobal)
	b.starts = min(b.starts, 2)
	b.hops = min(b.hops, 4)
	return b
}

// seededGlobal is the Halton points per parameter of a seeded search.
const seededGlobal = 20

// evaluations bounds how many points a search over n parameters visits,
// for the progress line.
func (b budget) evaluations(n int) int {
	seeds := 0
	if b.seeds {
		seeds = maxSeeds + teethPoints
	}
	return 1 + seeds + b.global*n + b.starts*(b.simplex+n) + b.passes*n*finePoints + b.lines*scanPoints(n) + b.hops*(1+b.hopEval+n)
}

// search minimizes an objective over parameters' unit coordinates.
type search struct {
	n    int
	b    budget
	eval func(ctx context.Context, u []float64) (float64, error)
	// key names the settings u makes (after rounding), so two points that
	// make the same settings are replayed once.
	key func(u []float64) string
	// offAtMax are the coordinates of OffAtMax rows, at 1 in every
	// other quasi-random point.
	offAtMax []int
	progress func()
	// seeds are points the first batch tries besides the quasi-random
	// ones (seedLine).
	seeds [][]float64
	// logSpan is, for each coordinate searched on a log scale, the
	// natural log of its range's Max/Min (0 for a linear one): how far a
	// factor moves it (unitOf).
	logSpan []float64
	// below, when set, is eval of a point that matters only if it could
	// score at most limit: done false (and +Inf) when its replay showed
	// it cannot and stopped early; such a point is not kept in the memo
	// (a later step that needs its objective replays it in full).
	below func(ctx context.Context, u []float64, limit float64) (float64, bool, error)
	mu    sync.Mutex
	memo  map[string]float64
}

// run searches from start and returns the best point and its objective.
// Every step keeps, among points of equal objective, the one found
// first in a fixed order, so the result is a function of the objective
// alone, whatever the order the workers finish in.
func (s *search) run(ctx context.Context, start []float64) ([]float64, float64, error) {
	if s.memo == nil {
		s.memo = map[string]float64{}
	}
	pts := append([][]float64{start}, halton(s.n, s.b.global*s.n)...)
	for k := 2; k < len(pts); k += 2 {
		for _, i := range s.offAtMax {
			pts[k][i] = 1
		}
	}
	pts = append(pts, s.seeds...)
	scores, err := s.batch(ctx, pts)
	if err != nil {
		return nil, 0, err
	}
	order := make([]int, len(pts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[a], scores[b]) })
	starts := diverse(pts, order, s.b.starts)
	found := make([]point, len(starts))
	errs := make([]error, len(found))
	var wg sync.WaitGroup
	for k := range found {
		wg.Go(func() { found[k], errs[k] = s.simplex(ctx, pts[starts[k]], scores[starts[k]]) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, 0, err
	}
	best := found[0]
	for _, f := range found[1:] {
		if f.score < best.score {
			best = f
		}
	}
	u, sc, err := s.refine(ctx, best)
	if err != nil {
		return nil, 0, err
	}
	u, sc, err = s.alongLines(ctx, point{u, sc})
	if err != nil {
		return nil, 0, err
	}
	p, err := s.hop(ctx, point{u, sc})
	return p.u, p.score, err
}

// alongLines scans along each parameter from p, both ways, over its
// whole range (scan: doubling steps), and moves to the best point
// scanned when it is better; for at most the budget's lines rounds. The
// grids and Nelder–Mead move all parameters a little; where the run's
// objective has basins far apart along one parameter (a bucket's depth
// and its percent, at one allowance: the served target b's 0.16 s and
// 0.5 s fit, 0.32 s does not), a line reaches the other.
func (s *search) alongLines(ctx context.Context, p point) ([]float64, float64, error) {
	for range s.b.lines {
		pts := scan(p.u)
		scores, err := s.batchBelow(ctx, pts, p.score)
		if err != nil {
			return nil, 0, err
		}
		moved := false
		for k, sc := range scores {
			if sc < p.score {
				p, moved = point{pts[k], sc}, true
			}
		}
		if !moved {
			break
		}
	}
	return p.u, p.score, nil
}

// The hops (hop): each setting moved by up to ±hopRadius of itself
// (a share of the range for a linear one), then Nelder–Mead from there,
// its first simplex hopStep of each setting; hopWidth hops at once (more
// than the cores: a short one leaves no core idle for long), from
// the best so far.
const (
	hopRadius = 0.10
	hopStep   = 0.02
	hopWidth  = 4
)

// unitOf is how far a change of rel of coordinate i's value (a share of
// the value, for a log scale; of the range, for a linear one) moves it
// in the unit box.
func (s *search) unitOf(i int, rel float64) float64 {
	if i < len(s.logSpan) && s.logSpan[i] > 0 {
		return math.Log1p(rel) / s.logSpan[i]
	}
	return rel
}

// hop is an iterated local search from p: the budget's hops, each a
// short Nelder–Mead of small steps from a point around the best so far
// (a Halton point in the box of ±hopRadius of each setting), moving to
// what it finds when that is better. Where the run pins its settings
// the good points are a thin set (a served target's 150 PTU fits at
// objective 0.015, at 149 or 151 PTU 0.05–0.27: a wave's last admitted
// send flips), found from within some 10% of them, not from the
// quasi-random points' spacing; the grids and scans move one setting at
// a time, where the set is reached by moving several together.
func (s *search) hop(ctx context.Context, p point) (point, error) {
	if s.b.hops == 0 {
		return p, nil
	}
	offs := halton(s.n, s.b.hops)
	step := make([]float64, s.n)
	for i := range step {
		step[i] = s.unitOf(i, hopStep)
	}
	for h := 0; h < len(offs); h += hopWidth {
		from := p
		k := min(h+hopWidth, len(offs))
		found := make([]point, k-h)
		errs := make([]error, k-h)
		var wg sync.WaitGroup
		for j := h; j < k; j++ {
			u := slices.Clone(from.u)
			for i := range u {
				u[i] += (2*offs[j][i] - 1) * s.unitOf(i, hopRadius)
			}
			clampUnit(u)
			wg.Go(func() {
				f0, err := s.one(ctx, u)
				if err != nil {
					errs[j-h] = err
					return
				}
				found[j-h], errs[j-h] = s.simplexFrom(ctx, u, f0, step, s.b.hopEval)
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return point{}, err
		}
		for _, f := range found {
			if f.score < p.score {
				p = f
			}
		}
	}
	return p, nil
}

// startDistance is the least distance (the largest difference of one
// coordinate) between two starts of Nelder–Mead: the best quasi-random
// points often lie in one valley, and searches from it all end in its
// basin, the true one elsewhere.
const startDistance = 0.2

// diverse picks up to n starts from the points in order (best first):
// each at least startDistance from every start picked before it; when
// too few are that far apart, the best of the others in order.
func diverse(pts [][]float64, order []int, n int) []int {
	var out []int
	far := func(i int) bool {
		for _, j := range out {
			d := 0.0
			for k := range pts[i] {
				d = max(d, abs(pts[i][k]-pts[j][k]))
			}
			if d < startDistance {
				return false
			}
		}
		return true
	}
	for _, i := range order {
		if len(out) < n && far(i) {
			out = append(out, i)
		}
	}
	for _, i := range order {
		if len(out) < n && !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	return out
}

// point is a place in the unit box and its objective.
type point struct {
	u     []float64
	score float64
}

// refine runs the last passes of grids along each parameter around p.
func (s *search) refine(ctx context.Context, p point) ([]float64, float64, error) {
	span := fineSpan
	for range s.b.passes {
		for i := 0; i < s.n; i++ {
			grid := linspace(max(0, p.u[i]-span), min(1, p.u[i]+span), finePoints)
			pts := make([][]float64, len(grid))
			for k, u := range grid {
				pts[k] = append([]float64(nil), p.u...)
				pts[k][i] = u
			}
			scores, err := s.batchBelow(ctx, pts, p.score)
			if err != nil {
				return nil, 0, err
			}
			for k, sc := range scores {
				if sc < p.score {
					p = point{pts[k], sc}
				}
			}
		}
		span /= 2
	}
	return p.u, p.score, nil
}

// simplex is Nelder–Mead (reflection 1, expansion 2, contraction ½,
// shrink ½) from u0, in the unit box (points clamped to it), for at most
// budget's simplex evaluations.
func (s *search) simplex(ctx context.Context, u0 []float64, f0 float64) (point, error) {
	step := make([]float64, s.n)
	for i := range step {
		step[i] = simplexStep
	}
	return s.simplexFrom(ctx, u0, f0, step, s.b.simplex)
}

// simplexFrom is Nelder–Mead from u0, its first simplex step[i] along
// each coordinate, for at most budget evaluations.
func (s *search) simplexFrom(ctx context.Context, u0 []float64, f0 float64, step []float64, budget int) (point, error) {
	edges := make([][]float64, s.n)
	for i := range edges {
		edges[i] = make([]float64, s.n)
		if u0[i]+step[i] <= 1 {
			edges[i][i] = step[i]
		} else {
			edges[i][i] = -step[i]
		}
	}
	return s.simplexAlong(ctx, u0, f0, edges, budget)
}

// simplexAlong is Nelder–Mead from u0, its first simplex u0 and u0 +
// each of edges (as many as the directions it searches: fewer than the
// coordinates leave the others where u0 has them), for at most budget
// evaluations.
func (s *search) simplexAlong(ctx context.Context, u0 []float64, f0 float64, edges [][]float64, budget int) (point, error) {
	evals := 0
	f := func(u []float64) (float64, error) {
		evals++
		return s.one(ctx, u)
	}
	n := len(edges)
	simp := []point{{clampUnit(u0), f0}}
	for _, e := range edges {
		u := slices.Clone(u0)
		for i := range u {
			u[i] += e[i]
		}
		sc, err := f(u)
		if err != nil {
			return point{}, err
		}
		simp = append(simp, point{u, sc})
	}
	for evals < budget {
		slices.SortStableFunc(simp, func(a, b point) int { return cmp.Compare(a.score, b.score) })
		worst := simp[n]
		c := centroid(simp[:n])
		r := clampUnit(along(c, worst.u, -1))
		fr, err := f(r)
		if err != nil {
			return point{}, err
		}
		switch {
		case fr < simp[0].score:
			e := clampUnit(along(c, worst.u, -2))
			fe, err := f(e)
			if err != nil {
				return point{}, err
			}
			if fe < fr {
				simp[n] = point{e, fe}
			} else {
				simp[n] = point{r, fr}
			}
		case fr < simp[n-1].score:
			simp[n] = point{r, fr}
		default:
			k := clampUnit(along(c, worst.u, 0.5))
			fk, err := f(k)
			if err != nil {
				return point{}, err
			}
			if fk < worst.score {
				simp[n] = point{k, fk}
				continue
			}
			for i := 1; i <= n; i++ {
				u := along(simp[0].u, simp[i].u, 0.5)
				sc, err := f(u)
				if err != nil {
					return point{}, err
				}
				simp[i] = point{u, sc}
			}
		}
	}
	slices.SortStableFunc(simp, func(a, b point) int { return cmp.Compare(a.score, b.score) })
	return simp[0], nil
}

// along is c + t·(w − c).
func along(c, w []float64, t float64) []float64 {
	out := make([]float64, len(c))
	for i := range c {
		out[i] = c[i] + t*(w[i]-c[i])
	}
	return out
}

func centroid(ps []point) []float64 {
	out := make([]float64, len(ps[0].u))
	for _, p := range ps {
		for i, v := range p.u {
			out[i] += v / float64(len(ps))
		}
	}
	return out
}

func clampUnit(u []float64) []float64 {
	for i := range u {
		u[i] = min(max(u[i], 0), 1)
	}
	return u
}

// halton is n points of the Halton sequence in d dimensions (bases the
// first primes), skipping the first: spread evenly over the unit box,
// the same every time.
func halton(d, n int) [][]float64 {
	primes := []int{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37}
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, d)
		for k := 0; k < d; k++ {
			b := primes[k%len(primes)]
			f, r := 1.0, 0.0
			for j := i + 1; j > 0; j /= b {
				f /= float64(b)
				r += f * float64(j%b)
			}
			out[i][k] = r
		}
	}
	return out
}

// one evaluates one point, through the memo.
func (s *search) one(ctx context.Context, u []float64) (float64, error) {
	k := s.key(u)
	s.mu.Lock()
	sc, ok := s.memo[k]
	s.mu.Unlock()
	if !ok {
		var err error
		if sc, err = s.eval(ctx, u); err != nil {
			return 0, err
		}
		s.mu.Lock()
		s.memo[k] = sc
		s.mu.Unlock()
	}
	s.tick()
	return sc, nil
}

func (s *search) tick() {
	if s.progress != nil {
		s.mu.Lock()
		s.progress()
		s.mu.Unlock()
	}
}

// batch evaluates points on every core; a point whose settings were
// evaluated before is not replayed again.
func (s *search) batch(ctx context.Context, pts [][]float64) ([]float64, error) {
	return s.batchBelow(ctx, pts, inf)
}

// batchBelow is batch for points that matter only if they score at most
// limit (below): a point shown not to is +Inf in the answer, and not
// kept.
func (s *search) batchBelow(ctx context.Context, pts [][]float64, limit float64) ([]float64, error) {
	out := make([]float64, len(pts))
	keys := make([]string, len(pts))
	todo := map[string]int{} // key → first index
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range pts {
		keys[i] = s.key(p)
		if _, ok := s.memo[keys[i]]; ok {
			continue
		}
		if _, ok := todo[keys[i]]; !ok {
			todo[keys[i]] = i
		}
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		first   error
		jobs    = make(chan int)
		scores  = map[string]float64{}
		stopped = map[string]bool{}
	)
	for range min(runtime.GOMAXPROCS(0), max(len(todo), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				// A cancel stops the batch: the points left are not
				// replayed (each can take seconds on a large file).
				if ctx.Err() != nil {
					mu.Lock()
					first = cmp.Or(first, ctx.Err())
					mu.Unlock()
					continue
				}
				sc, done, err := s.evalBelow(ctx, pts[i], limit)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				if done {
					scores[keys[i]] = sc
				} else {
					stopped[keys[i]] = true
				}
				mu.Unlock()
				if err == nil && s.progress != nil {
					s.progress() // as it is done: a batch of a large file is long
				}
			}
		}()
	}
	for _, i := range sortedIndexes(todo) {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	if first != nil {
		return nil, first
	}
	maps.Copy(s.memo, scores)
	for i := range pts {
		if stopped[keys[i]] {
			out[i] = inf
		} else {
			out[i] = s.memo[keys[i]]
		}
		if _, replayed := todo[keys[i]]; s.progress != nil && (!replayed || todo[keys[i]] != i) {
			s.progress() // a point not replayed again
		}
	}
	return out, nil
}

// evalBelow evaluates u, through below when the limit is finite: done
// false when its replay stopped (below).
func (s *search) evalBelow(ctx context.Context, u []float64, limit float64) (float64, bool, error) {
	if s.below != nil && !math.IsInf(limit, 1) {
		return s.below(ctx, u, limit)
	}
	sc, err := s.eval(ctx, u)
	return sc, true, err
}

// sortedIndexes are todo's indexes in order: the points go to the
// workers in the batch's order, not the map's.
func sortedIndexes(todo map[string]int) []int {
	return slices.Sorted(maps.Values(todo))
}

// linspace is n evenly spaced points from a to b, both included.
func linspace(a, b float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = a + (b-a)*float64(i)/float64(n-1)
	}
	return out
}

// inf is the objective of settings the simulator refuses.
var inf = math.Inf(1)

// onEveryCore calls fn(k) for each k in [0, n), on GOMAXPROCS goroutines
// taking every GOMAXPROCS-th k, and returns when every call has; fn
// writes only what is k's, so the result does not depend on the order.
func onEveryCore(n int, fn func(k int)) {
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for k := w; k < n; k += workers {
				fn(k)
			}
		})
	}
	wg.Wait()
}
