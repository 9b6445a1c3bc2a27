package fit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/sim"
)

// Job is one fit: where the sends come from, which groups it fits, and
// how the result is judged.
type Job struct {
	// inputs are recorded runs to replay (results files); or, with Plan,
	// events are published waits to fit the plan's sends to.
	inputs []input
	Plan   string
	events *events
	// HoldOut names groups of a replay the fit does not see; FitGroups
	// names the groups a plan is fitted to (the others are held out).
	// Either way every group is reported.
	HoldOut   []string
	FitGroups []string
	// Threshold is the largest KS of a fitted group in a good fit;
	// MinAgreement the least share of sends refused or admitted alike.
	Threshold, MinAgreement float64
	// PromptTokens and MaxTokens are the sends' request shape under a
	// plan, and a recorded send's when its row does not say.
	PromptTokens, MaxTokens int
	// Name is the profile's name.
	Name string
	// budget is the search's; zero is defaultBudget (tests spend less).
	// others, when set, is the budget of every model but the first (a
	// test that checks the first model is kept needs the others searched,
	// not searched as far).
	budget, others budget
	// models are the models fitted; nil is allModels (a test that checks one
	// model's settings fits that one alone: each model's search is its own).
	models []string
	// MaxWork caps the fit's work, estimated before it replays anything:
	// the sends times the points it may try (DefaultMaxWork: the
	// command's default).
	MaxWork int64
	// status, when set, is kept up to date as the fit goes (report
	// prints it).
	status *progress
	// SuggestPlan asks for the characterize plan that would tell apart
	// the settings this run does not pin (Result.suggestion).
	SuggestPlan bool
	// Warn, when set, is told what the fit does not refuse but a reader
	// should know (duplicated rows).
	Warn func(msg string)
}

// DefaultMaxWork is the fit's default cap on its work: sends replayed,
// summed over every point tried. The main job's results (331 sends,
// about 5,000 points over the three models, the first refusal's line
// and its teeth included) are some 1,660,000; a send replayed costs
// 4–9 µs of a core (docs/fit.md), so the default, 15 times that, is
// some 2 to 4 minutes of a core: a file of up to about 5,000 sends. Job.MaxWork (--max-work) raises it deliberately.
const DefaultMaxWork = 25_000_000

// progress is a running fit's advance, safe to read while it runs.
type progress struct {
	rows        atomic.Int64
	done, total atomic.Int64
	model       atomic.Pointer[string]
}

// snapshot is what progress says at one moment: rows read so far, then
// points tried of about total, and the model being fitted ("" while the
// files are read).
type snapshot struct {
	Rows        int64
	Done, Total int64
	Model       string
}

// snapshot reads s.
func (s *progress) Snapshot() snapshot {
	out := snapshot{Rows: s.rows.Load(), Done: s.done.Load(), Total: s.total.Load()}
	if m := s.model.Load(); m != nil {
		out.Model = *m
	}
	return out
}

// Result is a fit's outcome: the twin's profile (its settings and its
// Fit) and what Print shows.
type Result struct {
	Profile sim.Profile
	// Fitted are the kept model's parameters, as set (seconds for a
	// duration), in table order, phaseParam excluded.
	fitted []setting
	// LatencyRead: the latency model came from the recorded answers.
	latencyRead bool
	// Replays is the number of replays the fit made.
	Replays int
	// Ranges are the kept model's ranges, by setting name (values as
	// Fitted's: seconds for a duration; an OffAtMax row's off as its
	// Max), as fit.ranges writes them.
	ranges map[string][2]float64
	// suggestion is the plan proposed to pin what this run does not
	// (Job.SuggestPlan); nil when not asked.
	suggestion *suggestion
}

// setting is one fitted parameter and its value.
type setting struct {
	Param param
	Value float64
}

// check validates what can be checked before any file is read.
func (j *Job) check() error {
	switch {
	case len(j.inputs) == 0 && j.Plan == "":
		return valid.Errorf("Inputs", "are missing: give results files to replay, or --plan characterize with --events")
	case len(j.inputs) > 0 && j.Plan != "":
		return valid.Errorf("Plan", "replaces the results files: give one or the other")
	case j.Plan != "" && j.events == nil:
		return valid.Errorf("Events", "are needed by {Plan}: the published waits to fit it to")
	case j.Plan == "" && j.events != nil:
		return valid.Errorf("Events", "go with {Plan} (the sends the waits are fitted under)")
	case j.Plan != "" && len(j.HoldOut) > 0:
		return valid.Errorf("HoldOut", "is for a replay: under {Plan}, the groups not named by {FitGroups} are held out")
	case j.Plan == "" && len(j.FitGroups) > 0:
		return valid.Errorf("FitGroups", "go with {Plan}: a replay fits every group but {HoldOut}")
	case !(j.Threshold > 0 && j.Threshold <= 1):
		return valid.Errorf("Threshold", "%v: want a KS distance above 0 and at most 1", j.Threshold)
	case !(j.MinAgreement >= 0 && j.MinAgreement <= 1):
		return valid.Errorf("MinAgreement", "%v: want a share from 0 to 1", j.MinAgreement)
	case j.PromptTokens < 1 || j.MaxTokens < 1 || j.PromptTokens > maxPromptTokens || j.MaxTokens > maxCompletionTokens:
		return valid.Errorf("PromptTokens", "and {MaxTokens} must be from 1 to %d", maxPromptTokens)
	case j.MaxWork < 1:
		return valid.Errorf("MaxWork", "%d: must be at least 1", j.MaxWork)
	}
	return nil
}

// budgetOf is model's search budget.
func (j *Job) budgetOf(model string) budget {
	if j.others != (budget{}) && len(j.models) > 0 && model != j.models[0] {
		return j.others
	}
	return j.budget
}

// points is about how many points the fit tries, over every model: the
// budget's bound (a point tried before is not replayed again, so fewer
// are replayed).
func (j *Job) points() int64 {
	total := int64(0)
	for _, m := range j.models {
		for _, params := range tables(m) {
			b := j.budgetOf(m)
			// Only the allowance's table is seeded (seedLine).
			b.seeds = b.seeds && m == sim.ProfilePTU && slices.ContainsFunc(params, func(p param) bool { return p.PerDepth })
			total += int64(b.evaluations(len(params)) + scanPoints(len(params)) + 2*len(params)*edgeBisections)
			if m == sim.ProfilePTU {
				total += 3 // the run's refill at the table's best (runsRefill)
			}
		}
		if m == sim.ProfilePTU {
			// The run's refill and the mechanisms off at the model's
			// last point (plainest), and that point's ranges again
			// when it moves there.
			n := len(paramsOf(m))
			total += int64(3 + 4 + scanPoints(n) + 2*n*edgeBisections)
		}
	}
	return total
}

// tooMuch says why a fit of sends sends is refused; more: the files hold
// more than sends, the most the cap allows (reading stopped there).
func (j *Job) tooMuch(sends int, more bool) error {
	const remedy = ": raise it deliberately (a send replayed is some 4-9 µs of a core), or fit fewer or shorter runs"
	if more {
		return valid.Errorf("MaxWork", "%s: the results hold more than %s sent attempts, the most it allows at each of the fit's about %s points"+remedy,
			num.Grouped(float64(j.MaxWork), 0), num.Grouped(float64(sends), 0), num.Grouped(float64(j.points()), 0))
	}
	return valid.Errorf("MaxWork", "%s: the fit would replay %s sends at each of about %s points, %s in all"+remedy,
		num.Grouped(float64(j.MaxWork), 0), num.Grouped(float64(sends), 0), num.Grouped(float64(j.points()), 0),
		num.Grouped(float64(int64(sends)*j.points()), 0))
}

// heldOut checks the named groups against the sends' groups and returns
// the groups the fit does not see.
func (j *Job) heldOut(s *workload) (map[string]bool, error) {
	names := make([]string, len(s.Groups))
	for i, g := range s.Groups {
		names[i] = g.Group
	}
	field, named := "HoldOut", j.HoldOut
	if j.Plan != "" {
		field, named = "FitGroups", j.FitGroups
	}
	for _, n := range named {
		if !slices.Contains(names, n) {
			return nil, valid.Errorf(field, "%q: no such group (the groups: %s)", clip(n), strings.Join(names, ", "))
		}
	}
	out := map[string]bool{}
	for _, n := range names {
		if j.Plan != "" {
			out[n] = len(named) > 0 && !slices.Contains(named, n)
		} else {
			out[n] = slices.Contains(named, n)
		}
	}
	usable := 0
	for _, g := range s.Groups {
		if !out[g.Group] {
			usable += len(g.Waits)
		}
	}
	if len(out) > 0 && !slices.ContainsFunc(names, func(n string) bool { return !out[n] }) {
		return nil, valid.Errorf(field, "leaves no group to fit")
	}
	if usable == 0 {
		return nil, valid.Errorf("Inputs", "hold no 429 with a usable advised wait in the groups fitted: there is nothing to fit")
	}
	return out, nil
}

// Run reads the sends, fits every model of allModels and keeps the one
// whose objective is lowest (PTU on a tie).
func Run(ctx context.Context, j Job) (Result, error) {
	if err := j.check(); err != nil {
		return Result{}, err
	}
	if j.budget == (budget{}) {
		j.budget = defaultBudget
		if j.others == (budget{}) {
			j.others = othersBudget
		}
	}
	if j.models == nil {
		j.models = allModels
	}
	if j.status == nil {
		j.status = &progress{}
	}
	// A replay allocates as it simulates (a fresh simulator, an HTTP
	// request and answer per send): a larger heap between collections
	// cuts what collecting costs the fit (fitGCPercent).
	defer raiseGC()()
	s, err := j.sends(ctx)
	if err != nil {
		return Result{}, err
	}
	if s.Duplicates > 0 && j.Warn != nil {
		j.Warn(fmt.Sprintf("%d rows repeat a row already read (the same run, shape, group, worker, seq and attempt): each is replayed as a send of its own; was a file given twice, or concatenated?", s.Duplicates))
	}
	sends := 0
	for _, r := range s.Runs {
		for _, p := range r.Plans {
			sends += len(p.Sends)
		}
	}
	if int64(sends)*j.points() > j.MaxWork {
		return Result{}, j.tooMuch(sends, false)
	}
	held, err := j.heldOut(&s)
	if err != nil {
		return Result{}, err
	}
	f := fitter{job: &j, sends: &s, held: held, rp: newReplayer(&s)}
	j.status.total.Store(j.points())
	var fits []modelFit
	for _, m := range j.models {
		mf, err := f.fit(ctx, m)
		if err != nil {
			return Result{}, err
		}
		fits = append(fits, mf)
	}
	i := slices.IndexFunc(fits, func(mf modelFit) bool { return mf.model == bestOf(fits).model })
	if fits[i], err = f.refusalCost(ctx, fits[i]); err != nil {
		return Result{}, err
	}
	out := f.result(fits)
	if j.SuggestPlan {
		if out.suggestion, err = f.suggest(ctx, bestOf(fits)); err != nil {
			return Result{}, err
		}
	}
	return out, nil
}

// fitGCPercent is the collector's target while a fit runs (GOGC 100 by
// default; the policy lab's is 300): on the main job's results GOGC 400
// took main's fit from 20.0 and 19.6 s of CPU to 13.7 and 14.5 s, its
// peak memory from 37 MB to some 55 (docs/fit.md, round 9); 800 saved
// 1–4% more for 65–70 MB (three pairs at load 10–13).
const fitGCPercent = 400

// gcRaised counts the fits running (raiseGC): the first sets the
// collector's target, the last puts back the one before.
var gcRaised struct {
	sync.Mutex
	n      int
	before int
}

// raiseGC sets the collector's target to fitGCPercent while any fit
// runs, and returns the function that ends this one's part. Fits that
// overlap (tests in parallel, a caller's goroutines) leave the target as
// it was before the first, whatever order they end in: each putting
// back what it found would leave a later one's 400 in place.
func raiseGC() func() {
	gcRaised.Lock()
	defer gcRaised.Unlock()
	if gcRaised.n == 0 {
		gcRaised.before = debug.SetGCPercent(fitGCPercent)
	}
	gcRaised.n++
	return func() {
		gcRaised.Lock()
		defer gcRaised.Unlock()
		if gcRaised.n--; gcRaised.n == 0 {
			debug.SetGCPercent(gcRaised.before)
		}
	}
}

// bestOf is the model of lowest objective (the first on a tie).
func bestOf(fits []modelFit) modelFit {
	best := fits[0]
	for _, mf := range fits[1:] {
		if mf.score.objective < best.score.objective {
			best = mf
		}
	}
	return best
}

func (j *Job) sends(ctx context.Context) (workload, error) {
	if j.Plan != "" {
		return fromPlan(ctx, j.Plan, *j.events, j.PromptTokens, j.MaxTokens)
	}
	// The most sends the cap allows, at least 1 (0 would be no limit).
	most := int(min(max(j.MaxWork/max(j.points(), 1), 1), math.MaxInt32))
	s, err := fromResults(ctx, j.inputs, j.PromptTokens, j.MaxTokens, most, &j.status.rows)
	if errors.Is(err, errTooMuchWork) {
		return s, j.tooMuch(most, true)
	}
	return s, err
}

// fitter fits the models to one set of sends.
type fitter struct {
	job   *Job
	sends *workload
	held  map[string]bool
	rp    *replayer
	// replays counts the replays made (a point whose settings were tried
	// before is not replayed again).
	replays atomic.Int64
}

// modelFit is one model's best settings and their score.
type modelFit struct {
	model  string
	params []param
	cfg    sim.Config
	values []float64
	score  score
	// ranges are, per parameter, the least and the most value (as
	// written) that fit the run within its tolerance (valueRanges).
	ranges [][2]float64
	// pts are the points its search tried.
	pts *triedPoints
	// phase is where its run started in the limiter's windows.
	phase time.Duration
	// refusalCost says how its cfg's RefusalCost was set (refusalCost).
	refusalCost string
}

// base is the twin's settings before the fit moves any: the defaults,
// the model's profile (the latency read from the recorded answers is
// set with the PTU tried: settings), and
// the advice a recorded refusal carried (the gateway advises retry-after
// only when told to; its organization ceilings are out of the way, since
// a recorded run is one key's traffic).
func (f *fitter) base(model string) sim.Config {
	c := sim.DefaultConfig()
	c.Profile = model
	if model == sim.ProfileGateway {
		c.GatewayRetryAfter = true
		c.GatewayOrgRPS, c.GatewayOrgTPM, c.GatewayOrgs = 1<<30, 1<<30, 1
	}
	return c
}

// settings are the settings and the phase the unit point u makes.
func (f *fitter) settings(model string, params []param, u []float64) (sim.Config, time.Duration, error) {
	c := f.base(model)
	phaseShare := 0.0
	for i, p := range params {
		if p.Name == phaseParam {
			phaseShare = p.value(u[i])
			continue
		}
		if err := p.set(&c, p.value(u[i])); err != nil {
			return c, 0, err
		}
	}
	if f.sends.LatencyOK {
		// The recorded latencies read at this size's prefill rate.
		c.TTFT, c.TPOT = f.sends.Latency.At(c)
	}
	return c, time.Duration(phaseShare * float64(longestWindow(c))).Round(time.Millisecond), nil
}

// longestWindow is the longest clock-aligned window of c's limiter: the
// span the phase moves the run's start over.
func longestWindow(c sim.Config) time.Duration {
	switch c.Profile {
	case sim.ProfileWindow:
		return c.WindowSize
	case sim.ProfileGateway:
		return time.Minute
	}
	return 0
}

// fit searches model's parameters from the defaults, in each of its
// tables (tables), then along each parameter of every table from the
// best so far (alongLines: a bucket's depth at one allowance is a line of
// the allowance's table, at one percent of the percent's), and keeps the
// best (the first on a tie); the ranges are over the points of every
// search.
func (f *fitter) fit(ctx context.Context, model string) (modelFit, error) {
	var fits []modelFit
	var searches []*search
	b := f.job.budgetOf(model)
	for _, params := range tables(model) {
		mf, s, seededGood, err := f.fitTable(ctx, model, params, b)
		if err != nil {
			return modelFit{}, err
		}
		fits, searches = append(fits, mf), append(searches, s)
		if seededGood && f.quality(mf.score) == sim.FitGood {
			b = b.seeded()
		}
	}
	best := bestOf(fits)
	if len(fits) > 1 {
		for k, params := range tables(model) {
			u := make([]float64, len(params))
			for i, p := range params {
				u[i] = p.unit(p.get(best.cfg))
			}
			sc, err := f.score(ctx, model, params, u)
			if err != nil {
				return modelFit{}, err
			}
			moved, msc, err := searches[k].alongLines(ctx, point{u, sc.objective})
			if err != nil {
				return modelFit{}, err
			}
			if msc >= fits[k].score.objective {
				continue // the table's own best stands
			}
			if fits[k], err = f.finish(ctx, model, params, searches[k], fits[k].pts, moved); err != nil {
				return modelFit{}, err
			}
		}
		best = bestOf(fits)
	}
	// The run's own refill at the best point, and a mechanism the run
	// does not show off, kept when the objective cannot tell them from
	// the best (plainest).
	k := slices.IndexFunc(fits, func(mf modelFit) bool { return mf.score.objective == best.score.objective })
	u := make([]float64, len(best.params))
	for i, p := range best.params {
		u[i] = p.unit(p.get(best.cfg))
	}
	moved, ok, err := f.plainest(ctx, searches[k], model, best.params, point{u, best.score.objective})
	if err != nil {
		return modelFit{}, err
	}
	if ok {
		if fits[k], err = f.finish(ctx, model, best.params, searches[k], fits[k].pts, moved); err != nil {
			return modelFit{}, err
		}
		best = fits[k]
	}
	all := &triedPoints{m: map[string]tried{}}
	for k, mf := range fits {
		mf.pts.mu.Lock()
		for key, t := range mf.pts.m {
			all.add(fmt.Sprint(k)+" "+key, t)
		}
		mf.pts.mu.Unlock()
	}
	at := make([]float64, len(best.params))
	for i, p := range best.params {
		at[i] = p.written(best.cfg)
	}
	best.pts, best.ranges = all, valueRanges(at, best.score, f.quality(best.score), all)
	if i, r, ok := f.refillRange(best); ok {
		best.ranges[i] = r
	}
	return best, nil
}

// settingsKey names the settings of params that c and phase make: two
// points of one name are replayed once (search's memo).
func settingsKey(params []param, c sim.Config, phase time.Duration) string {
	var b strings.Builder
	for _, p := range params {
		b.WriteString(strconv.FormatFloat(p.get(c), 'g', -1, 64))
		b.WriteByte(' ')
	}
	b.WriteString(phase.String())
	return b.String()
}

// tableSearch is the search of model's rows params on budget b, each
// point it scores kept in pts, and the point it starts from (the
// defaults).
func (f *fitter) tableSearch(model string, params []param, b budget) (*search, *triedPoints, []float64) {
	base := f.base(model)
	start := make([]float64, len(params))
	var offAtMax []int
	logSpan := make([]float64, len(params))
	for i, p := range params {
		start[i] = p.unit(p.get(base))
		if p.OffAtMax {
			offAtMax = append(offAtMax, i)
		}
		if p.Scale == logScale {
			logSpan[i] = math.Log(p.Max / p.Min)
		}
	}
	pts := &triedPoints{m: map[string]tried{}}
	s := &search{
		n: len(params), b: b, offAtMax: offAtMax, logSpan: logSpan,
		key: func(u []float64) string {
			c, phase, _ := f.settings(model, params, u)
			return settingsKey(params, c, phase)
		},
		progress: func() { f.job.status.done.Add(1) },
	}
	// keep records a point scored: the settings are made once a point
	// (settings reads the latency line, a few % of a fit).
	keep := func(u []float64, c sim.Config, phase time.Duration, sc score) {
		v := make([]float64, len(params))
		for i, p := range params {
			v[i] = p.written(c)
		}
		pts.add(settingsKey(params, c, phase), tried{u: slices.Clone(u), values: v, objective: sc.objective, quality: f.quality(sc)})
	}
	s.eval = func(ctx context.Context, u []float64) (float64, error) {
		c, phase, err := f.settings(model, params, u)
		if err != nil {
			return 0, err
		}
		sc, err := f.scoreConfig(ctx, c, phase)
		if err == nil {
			keep(u, c, phase, sc)
		}
		return sc.objective, err
	}
	s.below = func(ctx context.Context, u []float64, limit float64) (float64, bool, error) {
		c, phase, err := f.settings(model, params, u)
		if err != nil {
			return inf, false, err
		}
		sc, done, err := f.scoreBelow(ctx, c, phase, limit)
		if err != nil || !done {
			return inf, false, err
		}
		keep(u, c, phase, sc)
		return sc.objective, true, nil
	}
	return s, pts, start
}

// fitTable searches model's parameters, the rows params, from the
// defaults.
//
// A table whose first refusal's line (seedLine) holds a point the
// judgement calls good is searched on the budget's seeded share, and so
// are the tables after it when its fit is good too.
func (f *fitter) fitTable(ctx context.Context, model string, params []param, b budget) (modelFit, *search, bool, error) {
	s, pts, start := f.tableSearch(model, params, b)
	seededGood := false
	if s.b.seeds && slices.ContainsFunc(params, func(p param) bool { return p.PerDepth }) {
		s.memo = map[string]float64{}
		var err error
		if s.seeds, err = f.seedLine(ctx, s, model, params); err != nil {
			return modelFit{}, nil, false, err
		}
		if seededGood = pts.anyGood(); seededGood {
			s.b = s.b.seeded()
		}
		if err := s.searchTeeth(ctx, params); err != nil {
			return modelFit{}, nil, false, err
		}
	}
	f.job.status.model.Store(&model)
	best, sc, err := s.run(ctx, start)
	if err != nil {
		return modelFit{}, nil, false, err
	}
	if best, _, err = f.runsRefill(ctx, s, model, params, point{best, sc}, 0); err != nil {
		return modelFit{}, nil, false, err
	}
	mf, err := f.finish(ctx, model, params, s, pts, best)
	return mf, s, seededGood, err
}

// finish is a table's fit at its best point: its score, settings and
// ranges.
func (f *fitter) finish(ctx context.Context, model string, params []param, s *search, pts *triedPoints, best []float64) (modelFit, error) {
	sc, err := f.score(ctx, model, params, best)
	if err != nil {
		return modelFit{}, err
	}
	c, phase, _ := f.settings(model, params, best)
	at := make([]float64, len(params))
	for i, p := range params {
		at[i] = p.written(c)
	}
	ranges, err := f.scanRanges(ctx, s, best, at, sc, pts)
	if err != nil {
		return modelFit{}, err
	}
	values := make([]float64, len(params))
	for i, p := range params {
		values[i] = p.value(best[i])
		if p.Field != "" {
			values[i] = p.raw(c)
		}
	}
	return modelFit{model: model, params: params, cfg: c, phase: phase, values: values, score: sc, ranges: ranges, pts: pts}, nil
}

// score replays the sends under the settings u makes and compares.
// Settings the simulator refuses score +Inf.
func (f *fitter) score(ctx context.Context, model string, params []param, u []float64) (score, error) {
	c, phase, err := f.settings(model, params, u)
	if err != nil {
		return score{}, err
	}
	return f.scoreConfig(ctx, c, phase)
}

// scoreConfig replays the sends under c, the run started phase into the
// epoch's minute, and compares.
func (f *fitter) scoreConfig(ctx context.Context, c sim.Config, phase time.Duration) (score, error) {
	if c.Validate() != nil {
		return score{objective: inf}, nil
	}
	f.replays.Add(1)
	got, err := f.rp.replay(ctx, c, phase)
	if err != nil {
		if errors.Is(err, ctx.Err()) && ctx.Err() != nil {
			return score{}, ctx.Err()
		}
		return score{}, fmt.Errorf("replay: %w", err)
	}
	return compare(f.sends, f.rp, got, f.held), nil
}

// scoreBelow is score, or done false once the replay shows the point
// cannot fit (the ranges' fits) whatever the fit's best and cannot
// score at most limit: its refusals disagree with the recorded ones,
// second by second, for more than 1 − MinAgreement of the fitted sends
// (the judgement calls it poor), and that share alone, a part of the
// objective, is above limit + rangeSlack. A point that is not a replay
// (a plan's fit) is scored in full.
func (f *fitter) scoreBelow(ctx context.Context, c sim.Config, phase time.Duration, limit float64) (score, bool, error) {
	if !f.sends.Replay || math.IsInf(limit, 1) || c.Validate() != nil {
		sc, err := f.scoreConfig(ctx, c, phase)
		return sc, err == nil, err
	}
	fitted := 0
	for _, snd := range f.rp.sends {
		if !f.held[snd.Group] {
			fitted++
		}
	}
	if fitted == 0 {
		sc, err := f.scoreConfig(ctx, c, phase)
		return sc, err == nil, err
	}
	count := f.rp.newOffCount(f.held, func(off int) bool {
		// As compare computes them.
		agreement := 1 - float64(off)/float64(fitted)
		return agreement < f.job.MinAgreement && 1-agreement > limit+rangeSlack
	})
	f.replays.Add(1)
	got, done, err := f.rp.replayUntil(ctx, c, phase, count)
	if err != nil {
		if errors.Is(err, ctx.Err()) && ctx.Err() != nil {
			return score{}, false, ctx.Err()
		}
		return score{}, false, fmt.Errorf("replay: %w", err)
	}
	if !done {
		return score{}, false, nil
	}
	return compare(f.sends, f.rp, got, f.held), true, nil
}

// result keeps the best model and writes its profile.
func (f *fitter) result(fits []modelFit) Result {
	best := bestOf(fits)
	minWaits := minWaitsAt(f.job.Threshold)
	quality, why := judge(best.score, f.job.Threshold, f.job.MinAgreement, minWaits)
	fit := &sim.Fit{
		Quality: quality, Why: why, Threshold: f.job.Threshold, MinWaits: minWaits,
		Model: best.model, Objective: round6(best.score.objective), Source: "replay",
	}
	if f.sends.Replay {
		a := round6(best.score.agreement)
		fit.Agreement, fit.MinAgreement = &a, f.job.MinAgreement
	} else {
		fit.Source = "plan"
	}
	for _, mf := range fits {
		fit.Models = append(fit.Models, sim.ModelDistance{Model: mf.model, Objective: round6(mf.score.objective)})
	}
	for i, g := range f.sends.Groups {
		gs := best.score.groups[i]
		fit.Groups = append(fit.Groups, sim.FitGroup{Group: g.Group, HeldOut: gs.heldOut, Tested: len(g.Waits) >= minWaits,
			KS: round6(gs.ks), ExactKS: round6(exactKS(g.Waits, gs.twin)), Recorded: summary(g.Waits), Twin: summary(gs.twin)})
	}
	fit.RefusalCost = best.refusalCost
	if r, err := settingRanges(best.params, best.ranges); err == nil {
		fit.Ranges = r
	}
	cfg := best.cfg
	cfg.Fit = fit
	name := f.job.Name
	if name == "" {
		name = "twin"
	}
	out := Result{Profile: sim.Profile{Name: name, Config: cfg, Fit: fit}, latencyRead: f.sends.LatencyOK, Replays: int(f.replays.Load())}
	out.ranges = map[string][2]float64{}
	for i, p := range best.params {
		if p.Name != phaseParam {
			out.fitted = append(out.fitted, setting{Param: p, Value: best.values[i]})
			out.ranges[p.Name] = best.ranges[i]
		}
	}
	return out
}

// round6 keeps six decimals: a file that reads 0.061538, not its bits.
func round6(v float64) float64 {
	if v > 1e6 || v < -1e6 { // +Inf: settings the simulator refused throughout
		return 1e6
	}
	return float64(int64(v*1e6+0.5*sign(v))) / 1e6
}

func sign(v float64) float64 {
	if v < 0 {
		return -1
	}
	return 1
}

// refusalCosts are the costs of a refusal (sim.Config.RefusalCost, a
// share of a request) weighed at the fitted settings.
var refusalCosts = []float64{0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5}

// refusalCostSignal is how much lower a cost's objective must be than
// none's for the fit to say a refusal costs: the twin refusing as the
// run did but advising longer waits after many refusals (a refusal that
// takes capacity raises the level the next waits drain).
const refusalCostSignal = 0.02

// refusalCost weighs refusalCosts at mf's settings (its other settings
// as fitted without one) and keeps the one of lowest objective when it
// is lower than none's by refusalCostSignal; otherwise 0. Either way it
// says why. A plan's sends (published waits) are not weighed: the
// waits of refusals whose sends are not known cannot tell what the
// refusals cost.
func (f *fitter) refusalCost(ctx context.Context, mf modelFit) (modelFit, error) {
	if !f.sends.Replay {
		mf.refusalCost = "0: not estimated from a plan's sends (which sends were refused is not known)"
		return mf, nil
	}
	best, bestSc := 0.0, score{objective: inf}
	for _, rc := range refusalCosts {
		c := mf.cfg
		c.RefusalCost = rc
		sc, err := f.scoreConfig(ctx, c, mf.phase)
		if err != nil {
			return mf, err
		}
		if sc.objective < bestSc.objective {
			best, bestSc = rc, sc
		}
	}
	if bestSc.objective > mf.score.objective-refusalCostSignal {
		mf.refusalCost = fmt.Sprintf("0: no cost of a refusal from %g to %g of a request fits the run better by %g (the best of them, %g: objective %.3f against %.3f without)",
			refusalCosts[0], refusalCosts[len(refusalCosts)-1], refusalCostSignal, best, bestSc.objective, mf.score.objective)
		return mf, nil
	}
	mf.refusalCost = fmt.Sprintf("%g of a request: the run's waits fit it (objective %.3f against %.3f without)", best, bestSc.objective, mf.score.objective)
	mf.cfg.RefusalCost, mf.score = best, bestSc
	return mf, nil
}
