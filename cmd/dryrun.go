package cmd

import (
	"fmt"
	"io"
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

// writeLabPlan prints the policy lab's plan: the dry run's header and
// target, then the lab's own (policylab.Job.WritePlan).
func writeLabPlan(w io.Writer, job policylab.Job, tf *targetFlags) {
	fmt.Fprintln(w, dryRunHeader)
	fmt.Fprintf(w, "target: %s\n", targetKind(tf))
	job.WritePlan(w)
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
