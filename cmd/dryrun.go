package cmd

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
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

// rate formats requests per second.
func rate(r float64) string { return num.PerSecond(r) }

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
