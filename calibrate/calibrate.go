package calibrate

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/montanaflynn/stats"

	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/schedule"
)

// Defaults of a calibration.
const (
	DefaultMinRate       = 0.5
	DefaultMaxRate       = 32
	DefaultFactor        = 2
	DefaultProbeDuration = 30 * time.Second
	DefaultDepth         = 4
	DefaultCooldown      = 10 * time.Second
	// DefaultMaxPause bounds the pause between probes however long a wait
	// the last probe was advised: a target advising hours must not stall a
	// calibration for hours.
	DefaultMaxPause = 2 * time.Minute
	// AdmitShare is the share of the offered rate that must be admitted
	// over the probe's last part for a 429-free probe to count as capacity.
	AdmitShare = 0.7
	// LastPart is the trailing share of a probe that is judged: the start
	// of a probe rides on whatever headroom the target had banked.
	LastPart = 0.5
)

// Verdicts of a probe.
const (
	VerdictAdmitted = "admitted" // no 429s, and the target kept up
	VerdictRefused  = "429"      // the target answered 429 at least once
	VerdictSlow     = "slow"     // no 429s, but under AdmitShare was admitted
	// VerdictInterrupted: the probe was cut short by a cancel; it judges
	// nothing.
	VerdictInterrupted = "interrupted"
)

// Config describes a calibration.
type Config struct {
	MinRate, MaxRate float64 // requests per second
	Factor           float64 // geometric step of the grid
	ProbeDuration    time.Duration
	Depth            int // bisection steps after the grid brackets the knee
	// Cooldown is the least pause between probes; after a refused probe
	// the pause is at least the longest advised wait seen, so the next
	// probe starts from a target that has recovered.
	Cooldown time.Duration
	// MaxPause bounds the pause between probes; 0 means DefaultMaxPause.
	MaxPause time.Duration
	// MaxRequests caps the requests of the whole calibration.
	MaxRequests int
	MaxInFlight int
	RunID       string
	Group       string
	// Wait is how probes wait for each arrival's time (dispatch.Options.Wait);
	// nil means the engine's precise wait.
	Wait dispatch.WaitFunc
	// OnProbe, when set, sees each probe as it is judged.
	OnProbe func(Probe)
	// Instrument, when set, is called as each probe starts, with the
	// requests it plans and the Sender it would use: it returns the
	// Sender to use instead and a function that sees every Record as it
	// completes (either may be nil), e.g. to count the probes for live
	// metrics.
	Instrument func(planned int, s dispatch.Sender) (dispatch.Sender, func(*results.Record))
}

// Probe is the evidence of one constant-rate probe.
type Probe struct {
	Step     int     // 1-based order of the probe
	Phase    string  // "grid" or "bisect"
	Offered  float64 // planned requests per second
	Sent     int
	Admitted float64 // 2xx per second among requests sent in the last part
	N429     int
	WaitP50  float64 // advised wait p50 (ms) of the 429s, or results.None
	WaitMax  float64
	Errors   int
	Verdict  string
}

// Result is a calibration's outcome.
type Result struct {
	Probes []Probe
	// Knee is the highest offered rate admitted without 429s, or 0 when
	// even MinRate was refused or slow.
	Knee float64
	// Ceiling is the lowest offered rate that drew 429s (or was slow), or
	// 0 when every rate up to MaxRate was admitted.
	Ceiling float64
	// Interrupted: the calibration was canceled; Knee and Ceiling are
	// what was measured until then.
	Interrupted bool
}

func (c Config) maxPause() time.Duration {
	if c.MaxPause <= 0 {
		return DefaultMaxPause
	}
	return c.MaxPause
}

// Validate reports the first problem as a *valid.Error naming the field.
func (c Config) Validate() error {
	switch {
	case !(c.MinRate > 0) || math.IsInf(c.MinRate, 0):
		return valid.Errorf("MinRate", "must be greater than zero")
	case !(c.MaxRate > c.MinRate) || c.MaxRate > schedule.MaxRate:
		return valid.Errorf("MaxRate", "must be greater than {MinRate} and at most %g/s", float64(schedule.MaxRate))
	case !(c.Factor > 1) || c.Factor > 16:
		return valid.Errorf("Factor", "must be above 1 and at most 16")
	case c.ProbeDuration <= 0 || c.ProbeDuration > time.Hour:
		return valid.Errorf("ProbeDuration", "must be positive and at most 1h")
	case c.Depth < 0 || c.Depth > 20:
		return valid.Errorf("Depth", "must be between 0 and 20")
	case c.Cooldown < 0:
		return valid.Errorf("Cooldown", "must not be negative")
	case c.MaxPause < 0 || c.MaxPause > time.Hour:
		return valid.Errorf("MaxPause", "must be between 0 and 1h")
	case c.Cooldown > c.maxPause():
		return valid.Errorf("Cooldown", "is longer than {MaxPause} (%s)", c.maxPause())
	}
	if n := c.PlannedRequests(); c.MaxRequests > 0 && n > c.MaxRequests {
		return valid.Errorf("MaxRequests", "is %d, but the calibration may send up to %d requests; raise it deliberately, or lower {MaxRate} or {ProbeDuration}", c.MaxRequests, n)
	}
	return nil
}

// Grid returns the rates of the geometric grid: MinRate, MinRate×Factor, …
// up to MaxRate, which is always the last.
func (c Config) Grid() []float64 {
	var g []float64
	for r := c.MinRate; r < c.MaxRate*(1-1e-9); r *= c.Factor {
		g = append(g, r)
	}
	return append(g, c.MaxRate)
}

// PlannedRequests bounds the requests of a whole calibration: every grid
// probe plus Depth bisection probes, none faster than MaxRate.
func (c Config) PlannedRequests() int {
	var n float64
	for _, r := range c.Grid() {
		n += math.Ceil(r * c.ProbeDuration.Seconds())
	}
	n += float64(c.Depth) * math.Ceil(c.MaxRate*c.ProbeDuration.Seconds())
	return int(n)
}

// Run calibrates: grid probes upward until the first that is not admitted,
// then geometric-midpoint bisection between the last admitted rate and
// that one. Every attempt goes to sink. When ctx is canceled it returns
// dispatch.ErrInterrupted with what was measured so far: the probes done,
// the highest rate admitted and the lowest refused up to then, and
// Interrupted set; a probe cut short is kept with the verdict
// "interrupted" and judges nothing.
func Run(ctx context.Context, c Config, s dispatch.Sender, sink dispatch.Sink) (Result, error) {
	if err := c.Validate(); err != nil {
		return Result{}, err
	}
	k := &knee{c: c, s: s, sink: sink}
	err := k.search(ctx)
	k.res.Knee, k.res.Ceiling = k.lo, k.hi
	k.res.Interrupted = errors.Is(err, dispatch.ErrInterrupted)
	return k.res, err
}

// knee is one calibration in progress: lo is the highest rate admitted so
// far, hi the lowest that was not (0 while none).
type knee struct {
	c        Config
	s        dispatch.Sender
	sink     dispatch.Sink
	res      Result
	lo, hi   float64
	lastWait time.Duration
}

func (k *knee) search(ctx context.Context) error {
	for _, r := range k.c.Grid() {
		p, err := k.probe(ctx, "grid", r)
		if err != nil {
			return err
		}
		if p.Verdict != VerdictAdmitted {
			k.hi = r
			break
		}
		k.lo = r
	}
	if k.hi == 0 || k.lo == 0 {
		return nil
	}
	for i := 0; i < k.c.Depth; i++ {
		mid := math.Sqrt(k.lo * k.hi)
		p, err := k.probe(ctx, "bisect", mid)
		if err != nil {
			return err
		}
		if p.Verdict == VerdictAdmitted {
			k.lo = mid
		} else {
			k.hi = mid
		}
	}
	return nil
}

// probe pauses after the last probe — Cooldown, or the longest wait it
// was advised if longer, but never more than MaxPause — then runs one.
func (k *knee) probe(ctx context.Context, phase string, rate float64) (Probe, error) {
	if len(k.res.Probes) > 0 {
		pause := min(max(k.c.Cooldown, k.lastWait), k.c.maxPause())
		if err := sleep.For(ctx, pause); err != nil {
			return Probe{}, dispatch.ErrInterrupted
		}
	}
	p, err := runProbe(ctx, k.c, k.s, k.sink, rate)
	p.Step, p.Phase = len(k.res.Probes)+1, phase
	if err != nil {
		p.Verdict = VerdictInterrupted
	}
	k.res.Probes = append(k.res.Probes, p)
	k.lastWait = time.Duration(max(p.WaitMax, 0) * float64(time.Millisecond))
	if k.c.OnProbe != nil && err == nil {
		k.c.OnProbe(p)
	}
	return p, err
}

// judge accumulates one probe's records.
type judge struct {
	mu       sync.Mutex
	lastFrom float64 // ms: records sent at or after this are in the last part
	admitted int
	n429     int
	errors   int
	waits    []float64
	sink     dispatch.Sink
}

func (j *judge) Write(r *results.Record) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case r.Is429():
		j.n429++
		if r.HasWait() {
			j.waits = append(j.waits, r.WaitMS)
		}
	case r.Error != "" || r.Status == 0:
		j.errors++
	case r.Status >= 200 && r.Status < 300 && r.SentMS >= j.lastFrom:
		j.admitted++
	}
	if j.sink != nil {
		return j.sink.Write(r)
	}
	return nil
}

func runProbe(ctx context.Context, c Config, s dispatch.Sender, sink dispatch.Sink, rate float64) (Probe, error) {
	p := Probe{Offered: rate, WaitP50: results.None, WaitMax: results.None}
	plan := schedule.Config{Phases: []schedule.Phase{{Name: "probe", Duration: c.ProbeDuration, From: rate, To: rate}}}
	if plan.Total() < 1 {
		return p, valid.Errorf("ProbeDuration", "is %s: a probe at %.3g/s sends nothing in it; lengthen it", c.ProbeDuration, rate)
	}
	lastPart := c.ProbeDuration.Seconds() * LastPart
	j := &judge{lastFrom: (c.ProbeDuration.Seconds() - lastPart) * 1000, sink: sink}
	var observe func(*results.Record)
	if c.Instrument != nil {
		var is dispatch.Sender
		if is, observe = c.Instrument(plan.Total(), s); is != nil {
			s = is
		}
	}
	out, err := dispatch.Run(ctx, schedule.NewPlan(plan), s, j, dispatch.Options{
		RunID: c.RunID, Shape: results.ShapeScheduled, Group: c.Group,
		MaxInFlight: c.MaxInFlight, MaxRequests: plan.Total() + 1, Wait: c.Wait, Observe: observe,
	})
	p.Sent = out.Sent
	p.N429, p.Errors = j.n429, j.errors
	p.Admitted = float64(j.admitted) / lastPart
	if len(j.waits) > 0 {
		p.WaitP50, _ = stats.Percentile(j.waits, 50)
		p.WaitMax, _ = stats.Max(j.waits)
	}
	switch {
	case p.N429 > 0:
		p.Verdict = VerdictRefused
	case p.Admitted < AdmitShare*rate:
		p.Verdict = VerdictSlow
	default:
		p.Verdict = VerdictAdmitted
	}
	return p, err
}
