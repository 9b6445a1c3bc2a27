package analyze

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Run over run: every published figure of an Analysis beside a baseline
// run's (analyze --baseline), with its change and whether the change is
// beyond the runs' noise.
//
// The noise is estimated by a bootstrap over the requests of both runs:
// each run's requests are resampled with replacement, Resamples times,
// each time the figure is computed of both resamples and their
// difference kept; the change is beyond the noise when the central 95%
// of those differences (the percentile interval) leaves out 0. The draws
// are seeded (BootstrapSeed, and the figure's place in the list), so a
// comparison is the same on every run and machine.
//
// A resample's figure is drawn without building the resample. For a
// percentile (type 7 of n values, between the order statistics of rank
// r and r+1), the r-th smallest of n uniform draws is Beta(r, n−r+1),
// and the resample's r-th smallest value is the original's of rank
// ⌈n·U(r)⌉; the next, U(r+1) = U(r) + (1 − U(r))·Beta(1, n−r). So each
// resample costs two Beta draws, and the values at the ranks drawn are
// found by one selection over the values (orderStats) — an exact
// bootstrap of the percentile, in the time of one pass, whatever the
// number of requests. For a share (success, 429s, goodput) a resample's
// count is Binomial(n, k/n), drawn exactly (normal approximation when
// n·p·(1−p) > 100, where it is within a fraction of a count).
// Rates over a run's span (requests/s, tokens/s) are compared without a
// noise estimate: the span is not resampled.

// Resamples is the number of bootstrap resamples of each figure.
const Resamples = 1000

// BootstrapSeed seeds the draws of a comparison.
const BootstrapSeed = 37

// Noise says what the bootstrap found of a change.
type Noise string

const (
	NoiseBeyond      Noise = "beyond"        // the 95% interval of the change leaves out 0
	NoiseWithin      Noise = "within"        // the interval holds 0: the change may be noise
	NoiseNotEstimate Noise = "not estimated" // a rate over the span, or too few values
)

// Change is one published figure of one group in both runs.
type Change struct {
	Group  string // the published label, Overall included
	Figure string // as --fail-if names it: "ttft_p99_ms", "p99_ms", "success_pct"
	Base   float64
	Now    float64
	// Delta is Now − Base; Pct is Delta in percent of Base (NaN when Base
	// is 0).
	Delta, Pct float64
	// Low and High bound the 95% bootstrap interval of Delta (NaN when
	// Noise is NoiseNotEstimate).
	Low, High float64
	Noise     Noise
}

// Comparison is an Analysis beside its baseline's.
type Comparison struct {
	Resamples int
	Seed      uint64
	// Changes are the figures both runs measure, by group (Overall
	// first, then the groups of both runs by label), in the order of
	// comparedFigures.
	Changes []Change
	// OnlyHere and OnlyBase are the groups of one run only.
	OnlyHere, OnlyBase []string
}

// Find returns the change of figure in group, or nil.
func (c *Comparison) Find(group, figure string) *Change {
	for i := range c.Changes {
		if c.Changes[i].Group == group && c.Changes[i].Figure == figure {
			return &c.Changes[i]
		}
	}
	return nil
}

// figureKind is how a compared figure is computed and resampled.
type figureKind int

const (
	kindWaitPercentile figureKind = iota // a percentile of the usable advised waits
	kindRequestPercentile
	kindShare // a share in percent, k of n
	kindRate  // per second over the span: no noise estimate
)

type comparedFigure struct {
	name    string
	kind    figureKind
	percent float64
	// family names the percentiles of one kind of value, bootstrapped
	// together; "" for a figure of its own.
	family string
	// values returns a group's values of a percentile figure; share its
	// k and n; rate its value.
	values func(g *Group) rankedValues
	share  func(a *Analysis, g *Group) (k, n int, ok bool)
	rate   func(g *Group) (float64, bool)
}

// rankedValues are values whose order statistics a bootstrap reads: how many,
// and those of the ranks asked (ascending, distinct).
type rankedValues struct {
	n  int
	at func(ks []int) []float64
}

func selectedRanks(s *selected) rankedValues {
	return rankedValues{n: s.len(), at: func(ks []int) []float64 { return orderStats(s.v, ks) }}
}

func waitRanks(g *Group) rankedValues {
	w := g.sorted()
	return rankedValues{n: w.len(), at: func(ks []int) []float64 {
		out := make([]float64, len(ks))
		for i, k := range ks {
			out[i] = w.at(k)
		}
		return out
	}}
}

// comparedFigures lists every figure compared, in order.
func comparedFigures() []comparedFigure {
	var out []comparedFigure
	for _, p := range []struct {
		name    string
		percent float64
	}{{"p50_ms", 50}, {"p90_ms", 90}, {"p99_ms", 99}} {
		out = append(out, comparedFigure{name: p.name, kind: kindWaitPercentile, percent: p.percent, values: waitRanks, family: "waits"})
	}
	out = append(out, comparedFigure{name: "share_429", kind: kindShare, share: func(_ *Analysis, g *Group) (int, int, bool) {
		return g.Refused, g.Attempts, g.Attempts > 0
	}})
	out = append(out,
		comparedFigure{name: "success_pct", kind: kindShare, share: func(_ *Analysis, g *Group) (int, int, bool) {
			return g.Requests.Succeeded, g.Requests.Requests, g.Requests.Requests > 0
		}},
		comparedFigure{name: "planned_success_pct", kind: kindShare, share: func(_ *Analysis, g *Group) (int, int, bool) {
			return min(g.Requests.Succeeded, g.Requests.Planned), g.Requests.Planned, g.Requests.Planned > 0
		}},
		comparedFigure{name: "goodput", kind: kindShare, share: func(a *Analysis, g *Group) (int, int, bool) {
			gp := goodputOf(g)
			return gp.Met, gp.Planned, !a.SLO.IsZero() && gp.Planned > 0
		}},
	)
	kinds := []struct {
		name string
		of   func(r *Requests) *selected
		ps   []float64
	}{
		{"latency", func(r *Requests) *selected { return &r.latency }, []float64{50, 90, 99}},
		{"ttfb", func(r *Requests) *selected { return &r.ttfb }, []float64{50, 99}},
		{"ttft", func(r *Requests) *selected { return &r.ttft }, []float64{50, 90, 99}},
		{"tpot", func(r *Requests) *selected { return &r.tpot }, []float64{50, 90, 99}},
		{"itl", func(r *Requests) *selected { return &r.itl }, []float64{50, 90, 99}},
	}
	for _, k := range kinds {
		for _, p := range k.ps {
			out = append(out, comparedFigure{
				name: k.name + "_p" + formatPercent(p) + "_ms", kind: kindRequestPercentile, percent: p, family: k.name,
				values: func(g *Group) rankedValues { return selectedRanks(k.of(&g.Requests)) },
			})
		}
	}
	out = append(out,
		comparedFigure{name: "requests_per_s", kind: kindRate, rate: func(g *Group) (float64, bool) { return g.Requests.RequestsPerS() }},
		comparedFigure{name: "output_tokens_per_s", kind: kindRate, rate: func(g *Group) (float64, bool) { return g.Requests.OutputTokensPerS() }},
	)
	return out
}

// ComparedFigures names the figures a Comparison holds, as --fail-if
// names them.
func ComparedFigures() []string {
	var out []string
	for _, f := range comparedFigures() {
		out = append(out, f.name)
	}
	return out
}

func formatPercent(p float64) string {
	switch p {
	case 50:
		return "50"
	case 90:
		return "90"
	}
	return "99"
}

// Compare sets every figure of a beside base's, group by group (groups
// matched by their published label), with the bootstrap of each change.
// It only reads the two analyses (their values are selected from, not
// reordered).
func Compare(a, base *Analysis) *Comparison {
	c := &Comparison{Resamples: Resamples, Seed: BootstrapSeed}
	type pair struct{ now, base *Group }
	pairs := []pair{{&a.Overall, &base.Overall}}
	for i := range a.Groups {
		if b := base.GroupByLabel(a.Groups[i].Label); b != nil {
			pairs = append(pairs, pair{&a.Groups[i], b})
		} else {
			c.OnlyHere = append(c.OnlyHere, a.Groups[i].Label)
		}
	}
	for i := range base.Groups {
		if a.GroupByLabel(base.Groups[i].Label) == nil {
			c.OnlyBase = append(c.OnlyBase, base.Groups[i].Label)
		}
	}
	// The percentiles of one kind of value are bootstrapped together: one
	// selection over each run's values serves them all.
	figs := comparedFigures()
	var families [][]int // indices into figs
	for i, f := range figs {
		if n := len(families); n > 0 && f.family != "" && figs[families[n-1][0]].family == f.family {
			families[n-1] = append(families[n-1], i)
			continue
		}
		families = append(families, []int{i})
	}
	type job struct {
		p      pair
		family []int
		out    []Change
		ok     []bool
	}
	jobs := make([]*job, 0, len(pairs)*len(families))
	for _, p := range pairs {
		for _, fam := range families {
			j := &job{p: p, family: fam, out: make([]Change, len(fam)), ok: make([]bool, len(fam))}
			for k, fi := range fam {
				j.out[k] = Change{Group: p.now.Label, Figure: figs[fi].name}
			}
			jobs = append(jobs, j)
		}
	}
	parallel(len(jobs), func(i int) {
		j := jobs[i]
		rng := rand.New(rand.NewPCG(BootstrapSeed, uint64(i)))
		fs := make([]comparedFigure, len(j.family))
		for k, fi := range j.family {
			fs[k] = figs[fi]
		}
		compareFamily(a, base, j.p.now, j.p.base, fs, j.out, j.ok, rng)
	})
	for _, j := range jobs {
		for k := range j.out {
			if j.ok[k] {
				c.Changes = append(c.Changes, j.out[k])
			}
		}
	}
	return c
}

// compareFamily fills out[k] for each figure of fs (one, or the
// percentiles of one kind of value); ok[k] false when either run does not
// measure it.
func compareFamily(a, base *Analysis, now, was *Group, fs []comparedFigure, out []Change, ok []bool, rng *rand.Rand) {
	f := fs[0]
	if f.kind != kindWaitPercentile && f.kind != kindRequestPercentile {
		ok[0] = compareFigure(a, base, now, was, f, &out[0], rng)
		return
	}
	rn, rb := f.values(now), f.values(was)
	if f.kind == kindWaitPercentile && (now.BelowMinGroup() || was.BelowMinGroup()) || rn.n == 0 || rb.n == 0 {
		return
	}
	percents := make([]float64, len(fs))
	for k, f := range fs {
		percents[k] = f.percent
	}
	pn, dn := bootstrapPercentiles(rn, percents, rng)
	pb, db := bootstrapPercentiles(rb, percents, rng)
	for k := range fs {
		ch := &out[k]
		ch.Now, ch.Base = pn[k], pb[k]
		var diffs []float64
		if dn != nil && db != nil {
			diffs = make([]float64, Resamples)
			for i := range diffs {
				diffs[i] = dn[k][i] - db[k][i]
			}
		}
		settle(ch, diffs)
		ok[k] = true
	}
}

// compareFigure fills ch for a share or a rate; false when either run
// does not measure it.
func compareFigure(a, base *Analysis, now, was *Group, f comparedFigure, ch *Change, rng *rand.Rand) bool {
	var diffs []float64
	switch f.kind {
	case kindShare:
		kn, nn, okn := f.share(a, now)
		kb, nb, okb := f.share(base, was)
		if !okn || !okb {
			return false
		}
		ch.Now, ch.Base = 100*float64(kn)/float64(nn), 100*float64(kb)/float64(nb)
		diffs = make([]float64, Resamples)
		for i := range diffs {
			diffs[i] = 100 * (float64(binomial(rng, nn, float64(kn)/float64(nn)))/float64(nn) - float64(binomial(rng, nb, float64(kb)/float64(nb)))/float64(nb))
		}
	case kindRate:
		vn, okn := f.rate(now)
		vb, okb := f.rate(was)
		if !okn || !okb {
			return false
		}
		ch.Now, ch.Base = vn, vb
	}
	settle(ch, diffs)
	return true
}

// settle sets ch's change and, from the bootstrap's differences (nil: not
// estimated), its interval and noise.
func settle(ch *Change, diffs []float64) {
	ch.Low, ch.High, ch.Noise = math.NaN(), math.NaN(), NoiseNotEstimate
	ch.Delta = ch.Now - ch.Base
	ch.Pct = math.NaN()
	if ch.Base != 0 {
		ch.Pct = 100 * ch.Delta / ch.Base
	}
	if diffs != nil {
		slices.Sort(diffs)
		ch.Low, ch.High = percentileSorted(diffs, 2.5), percentileSorted(diffs, 97.5)
		ch.Noise = NoiseWithin
		if ch.Low > 0 || ch.High < 0 {
			ch.Noise = NoiseBeyond
		}
	}
}

// bootstrapPercentiles returns the percentiles (type 7) of r and, for
// each, Resamples bootstrap replicates of it (nil with fewer than two
// values), the values at every rank drawn found by one selection.
func bootstrapPercentiles(r rankedValues, percents []float64, rng *rand.Rand) ([]float64, [][]float64) {
	n := r.n
	est := make([]float64, len(percents))
	if n == 1 {
		v := r.at([]int{0})[0]
		for k := range est {
			est[k] = v
		}
		return est, nil
	}
	// For each percentile: its point ranks, then the replicates' order
	// statistics of (1-based) rank k+1 and k+2.
	type draw struct {
		k      int
		f      float64
		lo, hi []int
	}
	draws := make([]draw, len(percents))
	var wanted []int
	for p, percent := range percents {
		k, f := closestRank(percent, n)
		d := draw{k: k, f: f, lo: make([]int, Resamples), hi: make([]int, Resamples)}
		for i := range Resamples {
			u := beta(rng, float64(k+1), float64(n-k))
			u2 := u
			if k+2 <= n {
				u2 = u + (1-u)*beta(rng, 1, float64(n-k-1))
			}
			d.lo[i], d.hi[i] = rankOf(u, n), rankOf(u2, n)
		}
		wanted = append(append(append(wanted, k, min(k+1, n-1)), d.lo...), d.hi...)
		draws[p] = d
	}
	slices.Sort(wanted)
	wanted = slices.Compact(wanted)
	vals := r.at(wanted)
	value := func(rank int) float64 {
		j, _ := slices.BinarySearch(wanted, rank)
		return vals[j]
	}
	reps := make([][]float64, len(percents))
	for p, d := range draws {
		lo, hi := value(d.k), value(min(d.k+1, n-1))
		est[p] = lo + d.f*(hi-lo)
		reps[p] = make([]float64, Resamples)
		for i := range Resamples {
			a, b := value(d.lo[i]), value(d.hi[i])
			reps[p][i] = a + d.f*(b-a)
		}
	}
	return est, reps
}

// rankOf is the 0-based rank ⌈n·u⌉ − 1 of the original value a uniform
// draw u picks.
func rankOf(u float64, n int) int {
	return min(max(int(math.Ceil(u*float64(n)))-1, 0), n-1)
}

// beta draws Beta(a, b), a, b ≥ 1, as G(a)/(G(a)+G(b)).
func beta(rng *rand.Rand, a, b float64) float64 {
	x := gamma(rng, a)
	return x / (x + gamma(rng, b))
}

// gamma draws Gamma(shape, 1), shape ≥ 1, by Marsaglia and Tsang's method.
func gamma(rng *rand.Rand, shape float64) float64 {
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// binomial draws Binomial(n, p): by the normal approximation when
// n·p·(1−p) > 100, else exactly, counting the rarer outcome by its
// geometric gaps (O(n·min(p, 1−p)) ≤ 200 steps on average).
func binomial(rng *rand.Rand, n int, p float64) int {
	switch {
	case p <= 0:
		return 0
	case p >= 1:
		return n
	}
	q := min(p, 1-p)
	var k int
	if v := float64(n) * q * (1 - q); v > 100 {
		k = int(math.Round(float64(n)*q + math.Sqrt(v)*rng.NormFloat64()))
		k = min(max(k, 0), n)
	} else {
		// Trials up to and including the next success are geometric.
		lq := math.Log1p(-q)
		for i := 0; ; k++ {
			i += int(math.Floor(math.Log(1-rng.Float64())/lq)) + 1
			if i > n {
				break
			}
		}
	}
	if q != p {
		return n - k
	}
	return k
}
