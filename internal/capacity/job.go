package capacity

import (
	"context"
	"errors"
	"math"
	"os"
	"sync"
	"time"

	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/trace"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
)

// Job is a capacity search as a command runs it: its steps, the target (its requests
// streamed), the directory of json and its chart and, when a
// trace is replayed, its rows' sizes (the steps' arrivals stay constant:
// the trace gives the mix of sizes, the search the rate).
type Job struct {
	Config      Config
	Target      campaign.Target
	OutDir      string
	MaxInFlight int
	// Trace, when set, sizes request seq as its row seq mod its rows,
	// max_tokens the output × MaxTokensFactor (TraceShapes).
	Trace           *trace.Trace
	MaxTokensFactor float64
	RunID, Group    string
}

// Validate checks every setting and the target, without side effects.
func (c *Job) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	if c.OutDir == "" {
		return valid.Errorf("OutDir", "must name a directory")
	}
	if c.MaxInFlight < 0 {
		return valid.Errorf("MaxInFlight", "must not be negative")
	}
	if c.Trace != nil {
		if len(c.Trace.Rows) == 0 {
			return valid.Errorf("Trace", "has no rows")
		}
		if _, err := campaign.TraceShapes(c.Trace, c.MaxTokensFactor); err != nil {
			return err
		}
	}
	c.Target.Spec.Stream = true
	if c.Target.Embedded() {
		if c.Target.Prompts != "" {
			return valid.Errorf("Prompts", "is sent by a named target's client: on the embedded simulator a capacity search sizes its requests by {PromptTokens} and {MaxTokens}, or a replayed trace's rows")
		}
		p := c.inProcess()
		if err := p.Validate(); err != nil {
			return err
		}
		return p.Sim.Validate()
	}
	return c.Target.Validate()
}

// inProcess is the in-process measure of an embedded target.
func (c *Job) inProcess() *InProcess {
	return &InProcess{Sim: c.Target.SimConfig(), Shape: c.shape()}
}

// shape sizes request seq: a trace's row, else the lengths drawn, else
// the Spec's fixed sizes.
func (c *Job) shape() func(seq int) (int, int) {
	var s client.Shaper
	if c.Trace != nil {
		s, _ = campaign.TraceShapes(c.Trace, c.MaxTokensFactor)
		n := len(c.Trace.Rows)
		return func(seq int) (int, int) { sh := s.Shape(seq % n); return sh.PromptTokens, sh.MaxTokens }
	}
	if s = c.Target.Shapes(); s != nil {
		return func(seq int) (int, int) { sh := s.Shape(seq); return sh.PromptTokens, sh.MaxTokens }
	}
	p, m := c.Target.Spec.PromptTokens, c.Target.Spec.MaxTokens
	if p <= 0 {
		p = client.DefaultPromptTokens
	}
	if m <= 0 {
		m = client.DefaultMaxTokens
	}
	return func(int) (int, int) { return p, m }
}

// WorstCase is the most a search can send: its steps, requests, tokens
// (each request its largest prompt and max_tokens) and time (every step
// at its full length, a pause between them), the ramp run to MaxRate and
// every later step at MaxRate; the caps bound it further.
type WorstCase struct {
	Steps, Requests int
	Tokens          float64
	Time            time.Duration
}

// WorstCase of c (validated).
func (c *Job) WorstCase() WorstCase {
	cf := c.Config
	var w WorstCase
	add := func(rate float64) {
		n := int(math.Floor(rate*cf.StepDuration.Seconds() + 1e-9))
		if cf.MaxRequests > 0 && w.Requests+n > cf.MaxRequests || cf.MaxTime > 0 && w.Time+cf.StepDuration+cf.Pause > cf.MaxTime {
			return
		}
		w.Steps++
		w.Requests += n
		w.Time += cf.StepDuration + cf.Pause
	}
	for rate := cf.MinRate; ; rate = math.Min(rate*cf.Factor, cf.MaxRate) {
		add(rate)
		if rate >= cf.MaxRate {
			break
		}
	}
	for range cf.Depth + 2*(cf.Repeats-1) {
		add(cf.MaxRate)
	}
	if w.Steps > 0 {
		w.Time -= cf.Pause
	}
	w.Tokens = float64(w.Requests) * float64(c.largest())
	return w
}

// largest is the most tokens (prompt and max_tokens) a request carries.
func (c *Job) largest() int {
	if c.Trace != nil {
		most := 0
		for _, r := range c.Trace.Rows {
			most = max(most, r.InputTokens+int(math.Round(float64(r.OutputTokens)*c.MaxTokensFactor)))
		}
		return most
	}
	l := c.Target.Lengths
	p, m := c.Target.Spec.PromptTokens, c.Target.Spec.MaxTokens
	if l.Prompt.Valid() {
		p = l.Prompt.Largest()
	}
	if l.MaxTokens.Valid() {
		m = l.MaxTokens.Largest()
	}
	return p + m
}

// Run validates c, runs the search (in process on the virtual
// clock on the embedded simulator, else against the named target on the
// wall clock) and writes json and its chart into OutDir, also
// when the search stopped early: what was measured is kept.
func Run(ctx context.Context, c Job) (Result, error) {
	if err := c.Validate(); err != nil {
		return Result{}, err
	}
	if err := os.MkdirAll(c.OutDir, 0o755); err != nil {
		return Result{}, err
	}
	var measure Measure
	if c.Target.Embedded() {
		measure = c.inProcess().Measure
	} else {
		if c.Target.MaxConns == 0 {
			c.Target.MaxConns = c.MaxInFlight
		}
		s, closeTarget, err := c.Target.Open(ctx)
		if err != nil {
			return Result{}, err
		}
		defer closeTarget()
		if c.Trace != nil {
			shapes, _ := campaign.TraceShapes(c.Trace, c.MaxTokensFactor)
			if s, err = campaign.WithShapes(s, cycled{shapes, len(c.Trace.Rows)}); err != nil {
				return Result{}, err
			}
		}
		measure = c.wallMeasure(s)
	}
	res, runErr := Search(ctx, c.Config, measure)
	if err := res.WriteDir(c.OutDir); err != nil {
		return res, err
	}
	return res, runErr
}

// cycled is a trace's sizes, its rows cycled.
type cycled struct {
	client.Shaper
	n int
}

func (c cycled) Shape(seq int) client.Shape { return c.Shaper.Shape(seq % c.n) }

// wallMeasure runs each step through the dispatch engine on the wall
// clock: constant arrivals at the step's rate, each Record an Outcome; a
// pause before every step but the first.
func (c *Job) wallMeasure(s dispatch.Sender) Measure {
	first := true
	return func(ctx context.Context, p Probe, t *Tally) error {
		if !first && c.Config.Pause > 0 {
			timer := time.NewTimer(c.Config.Pause)
			select {
			case <-ctx.Done():
				timer.Stop()
				return ctx.Err()
			case <-timer.C:
			}
		}
		first = false
		stepCtx, stop := context.WithCancel(ctx)
		defer stop()
		sink := &outcomes{t: t, stop: stop}
		_, err := dispatch.Run(stepCtx, &constant{t: t}, s, sink, dispatch.Options{
			RunID: c.RunID, Shape: results.ShapeScheduled, Group: c.Group, MaxInFlight: c.MaxInFlight,
			MaxRequests: t.Planned() + 1, // the step's plan whole (0 is dispatch's default cap)
		})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && !errors.Is(err, dispatch.ErrInterrupted) {
			return err
		}
		if c.Config.SLO.NeedsStream() && t.Untimed() {
			return ErrUntimed
		}
		return nil
	}
}

// ErrUntimed is a search whose SLO names ttft, tpot or itl against a
// target whose answers the client timed no stream of.
var ErrUntimed = errors.New("capacity: the client measured no time to first token on any answer of the step: an SLO on ttft, tpot or itl cannot be judged (is the target streaming?)")

// constant paces a step's arrivals: request seq at seq/rate.
type constant struct {
	t   *Tally
	seq int
}

func (c *constant) Next() (time.Duration, int, bool) {
	if c.seq >= c.t.Planned() {
		return 0, 0, false
	}
	c.seq++
	return c.t.Offset(c.seq - 1), results.None, true
}

// outcomes turns a step's Records into Outcomes (a request's last
// attempt: the client makes one unless told more) and stops the step
// when the tally says so.
type outcomes struct {
	mu   sync.Mutex
	t    *Tally
	stop func()
}

func (o *outcomes) Write(r *results.Record) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := Outcome{Seq: r.Seq, Status: r.Status, Latency: millis(r.LatencyMS), TTFT: millis(r.TTFTMS), TPOT: millis(r.TPOTMS), ITLMax: millis(r.ITLMaxMS)}
	if r.Error != "" {
		out.Status = 0
	}
	if r.PromptTokens > 0 {
		out.Tokens += r.PromptTokens
	}
	if r.CompletionTokens > 0 {
		out.Tokens += r.CompletionTokens
	}
	if o.t.Add(out) {
		o.stop()
	}
	return nil
}

// millis is a results column in milliseconds as a duration (-1: none).
func millis(v float64) time.Duration {
	if v < 0 || math.IsNaN(v) {
		return -1
	}
	return time.Duration(v * float64(time.Millisecond))
}
