package fit

import (
	"cmp"
	"context"
	"slices"
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
	events []levelEvent // in time order
	// at is the first refusal's time (seconds), wait its advised wait
	// (seconds), cost its estimated cost.
	at, wait, cost float64
}

// levelEvent is an admission (arrival true: its estimate added, the
// allowance spent when over C) or a completion (delta, the actual cost
// less the estimate) at t seconds.
type levelEvent struct {
	t, delta float64
	arrival  bool
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
		fr.events = append(fr.events, levelEvent{t: t, delta: cost(snd), arrival: true})
		if end := t + snd.took/1000; snd.completion > 0 && snd.took > 0 && end < fr.at {
			fr.events = append(fr.events, levelEvent{t: end, delta: outputWeight * float64(snd.completion-snd.MaxTokens)})
		}
	}
	slices.SortStableFunc(fr.events, func(a, b levelEvent) int { return cmp.Compare(a.t, b.t) })
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
			spent += e.delta
		}
		level = max(0, level+e.delta)
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

// The first refusal's line (lineSeeds): the PTU from the most the run
// allows (a bucket of no depth: the level at the first refusal drained
// in the time to it and its advised wait) down to seedSpan times less,
// at seedStep apart on a log scale, each PTU with the depth and
// allowance the run gives at it
// (settingsAt), the refill at seedRefill, the cold forecast off. The
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

// The refill is not on the line: the seedBest best points of the line
// are tried at each of seedRefills (seconds) too. A refill decides how
// much of the allowance the later waves find again (served target d's,
// 20 s: its line at a refill of 60 s scores 0.84 at best).
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
	// The most: the level at the first refusal without drain, drained
	// in the time to it and its wait.
	total, _ := fw.levelAt(0, 0)
	most := total / (fw.at + fw.wait) * 60 / base.TokensPerPTU
	var out [][]float64
	for _, ptu := range logSteps(most/seedSpan, most, seedStep)[:maxSeeds] {
		c := base
		c.PTU = ptu
		depth, allowance, ok := fw.settingsAt(c.DrainTokensPerSecond())
		if !ok {
			continue
		}
		u := make([]float64, len(params))
		for i, p := range params {
			switch p.Field {
			case "PTU":
				u[i] = p.unit(ptu)
			case "BucketDepth":
				u[i] = p.unit(depth)
			case "BurstPct":
				v := allowance
				if !p.PerDepth {
					v = 100 * allowance / depth
				}
				u[i] = p.unit(v)
			case "BurstRefill":
				u[i] = p.unit(seedRefill)
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
