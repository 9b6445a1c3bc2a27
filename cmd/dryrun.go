package cmd

import (
	"fmt"
	"io"
	"time"

	"github.com/ptuprobe/ptuprobe/calibrate"
	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/internal/policylab"
)

// --dry-run checks every flag as a run would (the key's variable
// included), prints the plan and sends nothing: no target is opened, no
// simulator started, no file written, no metrics served, no Redis dialed.

const dryRunUsage = "print the plan (requests, waves or phases, peak rate, expected duration, the target's kind) and send nothing"

// dryRunHeader is the first line of every dry run.
const dryRunHeader = "dry run: nothing is sent, no connection is made"

// targetKind is what a dry run says of the target (campaign.Target.Kind).
func targetKind(tf *targetFlags) string {
	t := tf.target()
	return t.Kind()
}

// writePlan prints a dry run: the header, the target's line, the plan's.
func writePlan(w io.Writer, target string, lines []string) {
	fmt.Fprintln(w, dryRunHeader)
	fmt.Fprintf(w, "target: %s\n", target)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// about rounds d for a reader.
func about(d time.Duration) string { return num.About(d) }

// writeDryRun prints a traffic job's plan (campaign.Job.Describe) and
// what the run's flags add: the goodput's SLO, streaming, retries.
func (r *trafficRun) writeDryRun(w io.Writer, tf *targetFlags) {
	j := &r.job
	writePlan(w, targetKind(tf), j.Describe())
	if !r.rf.slo.IsZero() {
		fmt.Fprintf(w, "slo: %s (goodput: the planned requests answered 2xx within every term)\n", r.rf.slo)
	}
	if r.rf.sloStreams {
		fmt.Fprintln(w, "stream: on, as --slo names ttft, tpot or itl, which only a streamed answer measures")
	}
	if r.rf.maxAttempts > 1 || r.rf.own.policy != "" {
		fmt.Fprintln(w, "retries: a refused request is retried by the retry owner, each attempt a row (more requests than planned)")
	}
	fmt.Fprintln(w, j.DescribeResults())
}

// writeCalibrationPlan prints a calibration's plan.
func writeCalibrationPlan(w io.Writer, c calibrate.Config, tf *targetFlags, evidence string) {
	writePlan(w, targetKind(tf), append(c.Describe(), "evidence: "+evidence))
}

// writeLabPlan prints the policy lab's plan: the dry run's header and
// target, then the lab's own (policylab.Job.WritePlan).
func writeLabPlan(w io.Writer, job policylab.Job, tf *targetFlags) {
	fmt.Fprintln(w, dryRunHeader)
	fmt.Fprintf(w, "target: %s\n", targetKind(tf))
	job.WritePlan(w)
}
