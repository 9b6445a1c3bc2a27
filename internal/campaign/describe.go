package campaign

import (
	"fmt"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/internal/trace"
	"github.com/ptuprobe/ptuprobe/schedule"
)

// describeBurst is a burst plan's Description: its waves, count, peak
// and span.
func describeBurst(c burst.Config, waitWave bool, p Plan) string {
	each, peak := "each at one instant", fmt.Sprintf("peak %d at once", c.Size)
	if c.Spread > 0 {
		each = "each spread over " + num.About(c.Spread)
		peak = "peak " + num.PerSecond(float64(c.Size)/c.Spread.Seconds())
	}
	if waitWave {
		each += ", each waiting for the last to finish"
	}
	return fmt.Sprintf("burst plan: %s of %s, %s apart, %s: %d requests, %s, spans %s",
		num.Count(uint64(c.Waves), "wave", "waves"), num.Count(uint64(c.Size), "request", "requests"), num.About(c.Gap), each,
		p.Planned, peak, num.About(p.Span))
}

// describe is a growing burst plan's Description: the plan as given,
// then its rule and its bounds.
func (c Contact) describe(p Plan) string {
	return fmt.Sprintf("%s; growing to first contact: a wave after the first is %d× the one before while no first attempt of the waves before it was refused (a 429 by its time), then %d again: waves of at most %d (%d× %d, within --max-requests and --max-in-flight), at most %d requests, peak %d at once",
		p.Description, GrowFactor, c.Config.Size, c.Most, GrowBound, c.Config.Size, c.MostRequests(), c.Peak())
}

// describeSchedule is a scheduled plan's Description: its phases,
// count, peak and span.
func describeSchedule(c schedule.Config, p Plan) string {
	var phases []string
	peak := 0.0
	for _, ph := range c.Phases {
		if ph.From == ph.To {
			phases = append(phases, fmt.Sprintf("%s %s at %s", ph.Name, num.About(ph.Duration), num.PerSecond(ph.From)))
		} else {
			phases = append(phases, fmt.Sprintf("%s %s from %s to %s", ph.Name, num.About(ph.Duration), num.PerSecond(ph.From), num.PerSecond(ph.To)))
		}
		peak = max(peak, ph.From, ph.To)
	}
	arrival := c.Arrival
	if arrival == "" {
		arrival = schedule.ArrivalConstant // as ParseArrival reads it
	}
	return fmt.Sprintf("scheduled plan (%s arrivals): %s: %d requests, peak %s, spans %s",
		arrival, strings.Join(phases, ", "), p.Planned, num.PerSecond(peak), num.About(p.Span))
}

// describeReplay is a replayed plan's Description: the trace, its
// window and scale, count, sizes and span.
func describeReplay(t *trace.Trace, r Replay, p Plan) string {
	line := fmt.Sprintf("replayed plan (%s, %s format, %d rows", t.Source, t.Format, len(t.Rows))
	if r.Window != "" {
		line += ", window " + r.Window
	}
	if r.Scale != "" && r.Scale != "1" {
		line += ", time × " + r.Scale
	}
	line += fmt.Sprintf("): %d requests, max_tokens the output × %g, spans %s", p.Planned, r.Factor, num.About(p.Span))
	if t.Clipped+t.ZeroOutput > 0 {
		line += fmt.Sprintf("; %d sizes clipped to 1–%d tokens, %d outputs of 0 sent as 1", t.Clipped, trace.MaxTokens, t.ZeroOutput)
	}
	return line
}

// Kind is what a plan says of the target: its kind (the embedded
// simulator's profile and dialect, or the API), never its host,
// deployment or model.
func (t *Target) Kind() string {
	s, named := &t.Spec, t.Spec.Endpoint != "" || t.Spec.URL != ""
	switch {
	case !named && t.Sim.ProfileSource != "":
		return fmt.Sprintf("the embedded simulator (--sim-profile %s: %s, --sim-dialect %s)", t.Sim.ProfileSource, t.Sim.Profile, t.Sim.Dialect)
	case !named:
		return fmt.Sprintf("the embedded simulator (--sim-profile %s, --sim-dialect %s)", t.Sim.Profile, t.Sim.Dialect)
	case s.API != "":
		return s.API + " (host not shown)"
	case s.Endpoint != "":
		return client.APIAzure + " (host not shown)"
	case s.Body != "" || s.Method != "" || len(s.Headers) > 0:
		return client.APIRaw + " (host not shown)"
	}
	return "url, an OpenAI-compatible server (host not shown)"
}

// Describe is a traffic job's plan in lines for a reader (a dry run):
// each plan, how its requests are counted in tokens, the whole, and this
// worker's share.
func (j *Job) Describe() []string {
	var lines []string
	for _, p := range j.Plans {
		lines = append(lines, p.Description)
	}
	lines = append(lines, j.describeTokens()...)
	line := fmt.Sprintf("in all: %d requests (first attempts), expected duration about %s plus the last answers", j.Planned(), num.About(j.Span()))
	if most, as := j.most(); most > j.Planned() {
		line = fmt.Sprintf("in all: %d requests (first attempts; at most %d as %s, within --max-requests %d), expected duration about %s plus the last answers", j.Planned(), most, as, j.Options.MaxRequests, num.About(j.Span()))
	}
	lines = append(lines, line)
	if o := j.Options; !o.Shard.Whole() {
		line := fmt.Sprintf("this worker (%s) sends its share, about %d requests", o.Shard, o.Shard.Share(j.Planned()))
		if !o.Start.IsZero() {
			line += ", from " + o.Start.UTC().Format(time.RFC3339)
		}
		lines = append(lines, line)
	}
	return lines
}

// most is the most requests j's plans may send (Plan.Most), and why it
// is more than they plan ("" when it is not).
func (j *Job) most() (int, string) {
	most, grows, sizes := 0, false, false
	for _, p := range j.Plans {
		most += p.Most()
		grows = grows || p.Contact != nil
		sizes = sizes || p.Sizing != nil
	}
	if most <= j.Planned() {
		return most, ""
	}
	switch {
	case grows && sizes:
		return most, "the burst waves grow and size the ramp"
	case grows:
		return most, "the burst waves grow"
	}
	return most, "the burst plan sizes the ramp"
}

// Count is the job's requests for a reader as it starts: "N requests in
// K plans", or, where the plans may send more than they plan or end at a
// refusal (Plan.Bound: growing waves, a ramp sized by them, the refill
// probe), "at most N requests in K plans" and why.
func (j *Job) Count() string {
	most, as := j.most()
	var why []string
	if as != "" {
		why = append(why, as)
	}
	for _, p := range j.Plans {
		if _, probe := p.Pacer.(*probePacer); probe {
			why = append(why, "the refill probe ends at its first 429")
		}
	}
	plans := fmt.Sprintf("%d plans", len(j.Plans))
	if len(j.Plans) == 1 {
		plans = "1 plan"
	}
	if len(why) == 0 {
		return fmt.Sprintf("%d requests in %s", j.Planned(), plans)
	}
	return fmt.Sprintf("at most %d requests in %s (%s)", most, plans, strings.Join(why, "; "))
}

// DescribeResults is where a job's rows go, for a reader.
func (j *Job) DescribeResults() string {
	mode := "appended to"
	if j.Replace {
		mode = "replaced"
	}
	return fmt.Sprintf("results: %s (%s)", j.Output, mode)
}

// describeTokens says how requests are counted and what each plan offers
// in tokens per minute; nothing when the target's counting is refused
// (Validate says why).
func (j *Job) describeTokens() []string {
	t := &j.Target
	name, byDefault := t.TokenizerName()
	how := "--tokenizer"
	if byDefault {
		how = "the default for the model or deployment name"
	}
	overhead, err := t.ChatOverhead()
	if err != nil {
		return nil
	}
	what := "a synthetic prompt is its size exactly"
	if t.Prompts != "" {
		order := PromptsInOrder
		if t.PromptsOrder != "" {
			order = t.PromptsOrder
		}
		what = "--prompts' lines (" + order + "), each counted once before the run"
	}
	note := fmt.Sprintf("plus %d tokens of chat format a request (3 a message, 1 its role, 3 for the reply)", overhead)
	if overhead == 0 {
		note = "no chat-format overhead counted (this API counts with its own tokenizer: an estimate)"
	}
	lines := []string{fmt.Sprintf("tokens: counted in %s (%s); %s, %s", name, how, what, note)}
	for i, p := range j.Plans {
		o, err := t.OfferedTokens(p)
		if err != nil {
			return lines
		}
		lines = append(lines, fmt.Sprintf("plan %d: %s", i+1, describeOffered(o)))
	}
	return lines
}
