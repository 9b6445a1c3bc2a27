package cmd

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/calibrate"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/internal/policylab"
)

// --dry-run checks every flag as a run would (the key's variable
// included), prints the plan and sends nothing: no target is opened, no
// simulator started, no file written, no metrics served, no Redis dialed.

const dryRunUsage = "print the plan (requests, waves or phases, peak rate, expected duration, the target's kind) and send nothing"

// dryRunHeader is the first line of every dry run.
const dryRunHeader = "dry run: nothing is sent, no connection is made"

// targetKind is what a dry run says of the target: its kind, never its
// host, deployment or model.
func targetKind(tf *targetFlags) string {
	switch {
	case tf.endpoint == "" && tf.url == "" && tf.sim.ProfileSource != "":
		return fmt.Sprintf("the embedded simulator (--sim-profile %s: %s, --sim-dialect %s)", tf.sim.ProfileSource, tf.sim.Profile, tf.sim.Dialect)
	case tf.endpoint == "" && tf.url == "":
		return fmt.Sprintf("the embedded simulator (--sim-profile %s, --sim-dialect %s)", tf.sim.Profile, tf.sim.Dialect)
	case tf.api != "":
		return tf.api + " (host not shown)"
	case tf.endpoint != "":
		return client.APIAzure + " (host not shown)"
	case tf.body != "" || tf.method != "" || len(tf.headers) > 0:
		return client.APIRaw + " (host not shown)"
	}
	return "url, an OpenAI-compatible server (host not shown)"
}

// rate formats requests per second.
func rate(r float64) string { return num.PerSecond(r) }

// about rounds d for a reader.
func about(d time.Duration) string { return num.About(d) }

// writeDryRun prints a traffic job's plan: one line per plan, the whole
// and this worker's share, the expected duration and the output.
func (r *trafficRun) writeDryRun(w io.Writer, tf *targetFlags) {
	fmt.Fprintln(w, dryRunHeader)
	fmt.Fprintf(w, "target: %s\n", targetKind(tf))
	j := &r.job
	for _, p := range j.Plans {
		fmt.Fprintln(w, p.Description)
	}
	writeTokens(w, j)
	fmt.Fprintf(w, "in all: %d requests (first attempts), expected duration about %s plus the last answers\n", j.Planned(), about(j.Span()))
	if o := j.Options; !o.Shard.Whole() {
		fmt.Fprintf(w, "this worker (%s) sends its share, about %d requests", o.Shard, o.Shard.Share(j.Planned()))
		if !o.Start.IsZero() {
			fmt.Fprintf(w, ", from %s", o.Start.UTC().Format(time.RFC3339))
		}
		fmt.Fprintln(w)
	}
	if !r.rf.slo.IsZero() {
		fmt.Fprintf(w, "slo: %s (goodput: the planned requests answered 2xx within every term)\n", r.rf.slo)
	}
	if r.rf.sloStreams {
		fmt.Fprintln(w, "stream: on, as --slo names ttft, tpot or itl, which only a streamed answer measures")
	}
	if r.rf.maxAttempts > 1 || r.rf.own.policy != "" {
		fmt.Fprintln(w, "retries: a refused request is retried by the retry owner, each attempt a row (more requests than planned)")
	}
	mode := "appended to"
	if j.Replace {
		mode = "replaced"
	}
	fmt.Fprintf(w, "results: %s (%s)\n", j.Output, mode)
}

// writeCalibrationPlan prints a calibration's plan.
func writeCalibrationPlan(w io.Writer, c calibrate.Config, tf *targetFlags, evidence string) {
	fmt.Fprintln(w, dryRunHeader)
	fmt.Fprintf(w, "target: %s\n", targetKind(tf))
	for _, l := range c.Describe() {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintf(w, "evidence: %s\n", evidence)
}

// writeLabPlan prints the policy lab's plan.
func writeLabPlan(w io.Writer, job policylab.Job, tf *targetFlags) {
	l := job.Lab
	fmt.Fprintln(w, dryRunHeader)
	fmt.Fprintf(w, "target: %s\n", targetKind(tf))
	capacity, clock := 0.0, "on the wall clock, one run at a time"
	if l.Named != nil {
		capacity = l.Named.Capacity
	} else {
		capacity, _ = l.Sim.Capacity(l.PromptTokens, l.MaxTokens, slices.Min(l.Clients))
		clock = "each on a virtual clock (seconds of wall time)"
	}
	if l.Coordinate != nil {
		clock += fmt.Sprintf("; %s also coordinated through --coordinate's Redis, in real time", plural(uint64(l.CoordinatedPolicies()), "policy", "policies"))
	}
	var loads []string
	peak := 0.0
	for _, ld := range l.Loads {
		r := ld.Rate
		if ld.X > 0 {
			r = ld.X * capacity
		}
		loads = append(loads, fmt.Sprintf("%s (%s)", ld.Text, rate(r)))
		peak = math.Max(peak, r)
	}
	fmt.Fprintf(w, "runs: %d (%s × %s × %s × %s), %s\n", l.Runs(), plural(uint64(len(l.Policies)), "policy", "policies"),
		plural(uint64(len(l.Loads)), "load", "loads"), plural(uint64(len(l.Clients)), "fleet size", "fleet sizes"), plural(uint64(l.Repeat), "repeat", "repeats"), clock)
	fmt.Fprintf(w, "loads: %s, each for %s: %d requests in all (first attempts), peak %s\n", strings.Join(loads, ", "), about(l.Duration), l.Planned(capacity), rate(peak))
	if n := l.Named; n != nil {
		fmt.Fprintf(w, "expected duration: up to about %s\n", about(labLength(l)))
	} else {
		fmt.Fprintf(w, "work: at most %s attempts on the simulator (--max-work %s)\n", num.Grouped(float64(l.Work()), 0), num.Grouped(float64(l.MaxWork), 0))
	}
	fmt.Fprintf(w, "report: %s\n", job.OutDir)
}

// labLength bounds a named lab's wall time: every run's arrivals and its
// budget, and the pauses between runs.
func labLength(l policylab.Lab) time.Duration {
	total := l.Runs()
	return time.Duration(total)*(l.Duration+l.Budget) + time.Duration(max(total-1, 0))*l.Named.Pause
}

// writeTokens says, for a dry run, how requests are counted and what each
// plan offers in tokens per minute.
func writeTokens(w io.Writer, j *campaign.Job) {
	t := &j.Target
	name, byDefault := t.TokenizerName()
	how := "--tokenizer"
	if byDefault {
		how = "the default for the model or deployment name"
	}
	overhead, err := t.ChatOverhead()
	if err != nil {
		return // Validate refused it first
	}
	what := "a synthetic prompt is its size exactly"
	if t.Prompts != "" {
		order := campaign.PromptsInOrder
		if t.PromptsOrder != "" {
			order = t.PromptsOrder
		}
		what = "--prompts' lines (" + order + "), each counted once before the run"
	}
	note := fmt.Sprintf("plus %d tokens of chat format a request (3 a message, 1 its role, 3 for the reply)", overhead)
	if overhead == 0 {
		note = "no chat-format overhead counted (this API counts with its own tokenizer: an estimate)"
	}
	fmt.Fprintf(w, "tokens: counted in %s (%s); %s, %s\n", name, how, what, note)
	for i, p := range j.Plans {
		o, err := t.OfferedTokens(p)
		if err != nil {
			return
		}
		fmt.Fprintf(w, "plan %d: %s\n", i+1, campaign.DescribeOffered(o))
	}
}
