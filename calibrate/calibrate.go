package calibrate

import (
	"context"
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
	// MaxRequests caps the requests of the whole calibration.
	MaxRequests int
	MaxInFlight int
	RunID       string
	Group       string
	// Wait is how probes wait for each arrival's time (dispatch.Options.Wait);
	// nil means dispatch.WaitPrecise.
	Wait dispatch.WaitFunc
	// OnProbe, when set, sees each probe as it is judged.
	OnProbe func(Probe)
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
}

// Validate reports the first problem as a *valid.Error naming the field.
func (c Config) Validate() error {
	switch {
	case !(c.MinRate > 0) || math.IsInf(c.MinRate, 0):
		return valid.Errorf("MinRate", "must be greater than zero")
	case !(c.MaxRate > c.MinRate) || math.IsInf(c.MaxRate, 0):
		return valid.Errorf("MaxRate", "must be greater than {MinRate}")
	case !(c.Factor > 1) || c.Factor > 16:
		return valid.Errorf("Factor", "must be above 1 and at most 16")
	case c.ProbeDuration <= 0:
		return valid.Errorf("ProbeDuration", "must be positive")
	case c.Depth < 0 || c.Depth > 20:
		return valid.Errorf("Depth", "must be between 0 and 20")
	case c.Cooldown < 0:
		return valid.Errorf("Cooldown", "must not be negative")
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
// that one. Every attempt goes to sink.
func Run(ctx context.Context, c Config, s dispatch.Sender, sink dispatch.Sink) (Result, error) {
	var res Result
	if err := c.Validate(); err != nil {
		return res, err
	}
	var lastWait float64
	probe := func(phase string, rate float64) (Probe, error) {
		if len(res.Probes) > 0 {
			pause := max(c.Cooldown, time.Duration(lastWait*float64(time.Millisecond)))
			if err := sleep.For(ctx, pause); err != nil {
				return Probe{}, dispatch.ErrInterrupted
			}
		}
		p, err := runProbe(ctx, c, s, sink, rate)
		p.Step, p.Phase = len(res.Probes)+1, phase
		res.Probes = append(res.Probes, p)
		lastWait = max(p.WaitMax, 0)
		if c.OnProbe != nil && err == nil {
			c.OnProbe(p)
		}
		return p, err
	}
	lo, hi := 0.0, 0.0
	for _, r := range c.Grid() {
		p, err := probe("grid", r)
		if err != nil {
			return res, err
		}
		if p.Verdict != VerdictAdmitted {
			hi = r
			break
		}
		lo = r
	}
	if hi == 0 || lo == 0 {
		res.Knee, res.Ceiling = lo, hi
		return res, nil
	}
	for i := 0; i < c.Depth; i++ {
		mid := math.Sqrt(lo * hi)
		p, err := probe("bisect", mid)
		if err != nil {
			return res, err
		}
		if p.Verdict == VerdictAdmitted {
			lo = mid
		} else {
			hi = mid
		}
	}
	res.Knee, res.Ceiling = lo, hi
	return res, nil
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
	out, err := dispatch.Run(ctx, schedule.NewPlan(plan), s, j, dispatch.Options{
		RunID: c.RunID, Shape: results.ShapeScheduled, Group: c.Group,
		MaxInFlight: c.MaxInFlight, MaxRequests: plan.Total() + 1, Wait: c.Wait,
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
