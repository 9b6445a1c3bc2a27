package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/admission/redisstate"
	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/fdlimit"
	"github.com/ptuprobe/ptuprobe/internal/policy"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/sim"
)

// DefaultPaceWindow is --pace-window's default: half a millisecond, well
// under the lateness of a pacer on runtime timers (about a millisecond).
const DefaultPaceWindow = 500 * time.Microsecond

// runFlags are the flags every traffic command shares.
type runFlags struct {
	output      string
	quiet       bool
	dryRun      bool
	group       string
	maxInFlight int
	maxRequests int
	progress    time.Duration
	maxAttempts int
	retryJitter float64
	retryMax    time.Duration
	retryBudget time.Duration
	grace       time.Duration
	paceWindow  time.Duration
	paceFixed   bool
	fleet       fleetFlags
	metrics     metricsFlags
	own         ownerFlags
	retryFlags  *pflag.FlagSet // where the retry flags are, to tell a given --max-attempts
	failures    failureFlags
	// slo is --slo (burst, schedule; characterize's is analyze's flag,
	// copied here): the goodput of the run's summary. sloStreams: it named
	// a term that needs a stream, and so turned --stream on.
	slo        analyze.SLO
	sloStreams bool
}

// addSLO registers --slo (burst and schedule; characterize has analyze's).
func (f *runFlags) addSLO(fs *pflag.FlagSet) { fs.Var(&f.slo, "slo", sloUsage) }

// sloUsage is --slo's help, one text for every command that takes it.
const sloUsage = "the SLO of the goodput, ttft=DUR,tpot=DUR,itl=DUR,e2e=DUR (any subset; a bare duration is e2e=DUR), e.g. 'ttft=500ms,e2e=10s'; goodput is the planned requests answered 2xx within every term, a refused, failed or unsent one counting against it; ttft, tpot or itl stream the requests (--stream)"

// streamForSLO turns --stream on when the SLO names a term that only a
// streamed answer measures.
func (f *runFlags) streamForSLO(tf *targetFlags) {
	if f.slo.NeedsStream() && !tf.stream {
		tf.stream, f.sloStreams = true, true
	}
}

func (f *runFlags) add(fs *pflag.FlagSet, withOutput bool) {
	if withOutput {
		fs.StringVarP(&f.output, "output", "o", "results.csv", "results file (appended to; created with a header if new)")
	}
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "print no progress")
	fs.BoolVar(&f.dryRun, "dry-run", false, dryRunUsage)
	fs.StringVar(&f.group, "group", "", "group label written on every row (default burst-shaped / scheduled-shaped)")
	fs.IntVar(&f.maxInFlight, "max-in-flight", dispatch.DefaultMaxInFlight, "most requests in progress at once (a retry's wait included); a send that waits for one to end is recorded late")
	fs.IntVar(&f.maxRequests, "max-requests", dispatch.DefaultMaxRequests, "safety cap: a plan with more requests is refused")
	fs.DurationVar(&f.progress, "progress-every", 5*time.Second, "interval of plain progress lines when stderr is not a terminal")
	fs.DurationVar(&f.paceWindow, "pace-window", DefaultPaceWindow, "most an arrival may wait for the next to go with it on one wake-up, and only until the next one's time: bunched arrivals (within half the mean spacing) go together, evenly spaced ones two at their time and the third with the next (the median send near on time, a third of the wake-ups saved); 0 sends each at its own time")
	fs.BoolVar(&f.paceFixed, "pace-fixed", false, "make --pace-window a fixed window: an arrival waits for the next whenever that one is due within it, however evenly spaced (half the wake-ups, less CPU at 2,000/s; sends up to a spacing late)")
	fs.DurationVar(&f.grace, "grace", dispatch.DefaultGrace, "after Ctrl-C, how long requests in flight may still complete before they are recorded as canceled")
	f.maxAttempts, f.retryJitter, f.retryMax, f.retryBudget = 1, admission.DefaultJitter, time.Minute, admission.DefaultBudget
}

// addRetry registers the retry flags (traffic commands; not calibrate,
// whose probes must see every refusal as it is).
func (f *runFlags) addRetry(fs *pflag.FlagSet) {
	fs.IntVar(&f.maxAttempts, "max-attempts", 1, "attempts per request, 1 to "+strconv.Itoa(policy.MaxAttempts)+": above 1, ptuprobe is the one retry owner (the admission library): a 429 (or a 503 advising a wait) is retried after the advised wait stretched by --retry-jitter, or after exponential backoff when none is advised, within --retry-budget; each attempt is a row")
	fs.Float64Var(&f.retryJitter, "retry-jitter", admission.DefaultJitter, "stretch each advised wait by a random factor in [1, 1+jitter] (0: none)")
	fs.DurationVar(&f.retryMax, "retry-max-wait", time.Minute, "give up on a request whose advised wait is longer than this")
	fs.DurationVar(&f.retryBudget, "retry-budget", admission.DefaultBudget, "give up on a request whose next wait would end after this long since its first send")
	f.own.add(fs)
	f.retryFlags = fs
	f.failures.add(fs)
}

// addFleet registers --shard and --start-at (every traffic command but
// calibrate, whose probes adapt to the answers).
func (f *runFlags) addFleet(fs *pflag.FlagSet) { f.fleet.add(fs) }

// addMetrics registers --metrics-addr and --metrics-linger (the traffic
// commands; not calibrate).
func (f *runFlags) addMetrics(fs *pflag.FlagSet) { f.metrics.add(fs) }

// runFlagNames names the campaign, dispatch and job fields for the user.
var runFlagNames = flagNames{
	"MaxInFlight": "--max-in-flight", "MaxRequests": "--max-requests", "Group": "--group",
	"Output": "--output", "MaxAttempts": "--max-attempts", "Jitter": "--retry-jitter",
	"MaxWait": "--retry-max-wait", "Budget": "--retry-budget", "Plans": "the plan",
	"Start": "--start-at", "Shard": "--shard",
}

// options turns the flags into campaign options.
func (f *runFlags) options(budget time.Duration) (campaign.Options, error) {
	if f.progress <= 0 {
		return campaign.Options{}, usageError("--progress-every must be positive")
	}
	if f.progress > time.Hour {
		return campaign.Options{}, usageError("--progress-every must be at most 1h")
	}
	if f.paceWindow < 0 || f.paceWindow > 10*time.Millisecond {
		return campaign.Options{}, usageError("--pace-window must be between 0 and 10ms")
	}
	if f.grace <= 0 || f.grace > time.Minute {
		return campaign.Options{}, usageError("--grace must be positive and at most 1m")
	}
	if err := f.metrics.check(); err != nil {
		return campaign.Options{}, err
	}
	if err := f.failures.check(); err != nil {
		return campaign.Options{}, err
	}
	o := campaign.Options{
		Group: f.group, MaxInFlight: f.maxInFlight, MaxRequests: f.maxRequests,
		Budget: budget, Grace: f.grace, PaceWindow: f.paceWindow, PaceFixed: f.paceFixed,
	}
	return o, f.fleet.resolve(&o)
}

// owner is the retry owner the retry flags describe, checked even when
// --max-attempts 1 leaves it unused; nil for one attempt per request.
// --policy names it instead (and sets what it needs on target).
func (f *runFlags) owner(target *campaign.Target) (*admission.Policy, error) {
	switch {
	case f.maxAttempts < 1 || f.maxAttempts > policy.MaxAttempts:
		return nil, usageError("--max-attempts must be from 1 to %d", policy.MaxAttempts)
	case !(f.retryJitter >= 0 && f.retryJitter <= 1):
		return nil, usageError("--retry-jitter must be between 0 and 1")
	case f.retryMax <= 0 || f.retryMax > 24*time.Hour:
		return nil, usageError("--retry-max-wait must be positive and at most 24h")
	case f.retryBudget <= 0 || f.retryBudget > 24*time.Hour:
		return nil, usageError("--retry-budget must be positive and at most 24h")
	}
	if f.own.policy != "" {
		return f.policyOwner(f.retryFlags, target)
	}
	if f.maxAttempts == 1 {
		return nil, nil
	}
	target.PolicyName = "retry"
	p := &admission.Policy{MaxAttempts: f.maxAttempts, Jitter: f.retryJitter, MaxWait: f.retryMax, Budget: f.retryBudget}
	if _, err := admission.New(nil, *p); err != nil {
		return nil, settingError(err, runFlagNames)
	}
	return p, nil
}

// trafficRun is one traffic command's job with what it prints.
type trafficRun struct {
	job    campaign.Job
	names  flagNames // every field the job's errors can name
	rf     *runFlags
	stdout io.Writer
	stderr io.Writer
	// perPlan prints each plan's summary to stderr as it ends (characterize).
	perPlan bool
	// coord is --coordinate's, closed when the run ends.
	coord *redisstate.Coordinator
}

// newTrafficRun assembles the job shared by burst, schedule and
// characterize from their flags.
func newTrafficRun(plans []campaign.Plan, tf *targetFlags, rf *runFlags, budget time.Duration, output string, names flagNames, stdout, stderr io.Writer) (*trafficRun, error) {
	if err := tf.resolveSim(); err != nil {
		return nil, err
	}
	rf.streamForSLO(tf)
	opts, err := rf.options(budget)
	if err != nil {
		return nil, err
	}
	target := tf.target()
	owner, err := rf.owner(&target)
	if err != nil {
		return nil, err
	}
	target.Owner = owner
	r := &trafficRun{
		job:   campaign.Job{Plans: plans, Target: target, Output: output, Options: opts},
		names: merge(runFlagNames, targetNames(target.Embedded()), names),
		rf:    rf, stdout: stdout, stderr: stderr,
	}
	if err := r.job.Validate(); err != nil {
		return nil, settingError(err, r.names)
	}
	tf.noteNoKey(stderr, rf.quiet, nil)
	if rf.dryRun {
		return r, nil
	}
	if r.coord, err = rf.own.coordinator(context.Background(), owner, target.Spec, stderr); err != nil {
		return nil, err
	}
	warnFileLimit(stderr, rf.maxInFlight, r.job.Target.Embedded())
	tf.tls.warn(stderr)
	return r, nil
}

// warnFileLimit raises the open-file limit to what --max-in-flight may need
// (twice as much with the embedded simulator, which holds the other end of
// every connection) and warns when the system does not allow it.
func warnFileLimit(stderr io.Writer, maxInFlight int, embedded bool) {
	need := campaign.OpenFiles(maxInFlight, embedded)
	if limit, ok := fdlimit.Raise(need); ok && limit < need {
		fmt.Fprintf(stderr, "ptuprobe: warning: --max-in-flight %d may need %d open files, the limit is %d (ulimit -n): requests past it fail here and are recorded as error class local\n", maxInFlight, need, limit)
	}
}

// run sends the job with progress on stderr and prints the summary. An
// interrupted run exits 130 after every completed row was written; one
// that --abort-on-fail stopped exits 1, its completed rows kept too, and
// so does one whose every request failed other than by a 429 (allFailed).
func (r *trafficRun) run(ctx context.Context) (campaign.Outcome, *runTally, error) {
	total := newRunTally(r.rf.slo)
	ctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	window := r.rf.failures.window(abort)
	if err := r.startMetrics(); err != nil {
		return campaign.Outcome{}, total, err
	}
	if !r.rf.quiet {
		r.job.Target.OnSimulator = func(url string) {
			fmt.Fprintf(r.stderr, "no target given: using the embedded PTU simulator at %s\n", url)
		}
	}
	if r.rf.metrics.url() != "" {
		// The embedded simulator's own counts beside the client's (a
		// traffic command opens its target once).
		r.job.Target.OnSimulatorStart = func(stats func() sim.Stats) {
			if err := r.rf.metrics.simulator(stats); err != nil {
				fmt.Fprintf(r.stderr, "ptuprobe: warning: the embedded simulator's metrics are not served: %v\n", err)
			}
		}
	}
	r.job.Options.Watch = r.watch(total, window)
	out, err := campaign.Run(ctx, r.job)
	r.rf.metrics.finish()
	closeCoordinator(r.coord, r.stderr)
	switch {
	case isSetting(err):
		return out, total, settingError(err, r.names)
	case errors.Is(err, results.ErrHeaderMismatch):
		return out, total, asUsage(err)
	}
	if out.Repaired > 0 {
		fmt.Fprintf(r.stderr, "note: %s ended in a line cut short by an earlier run; its %d bytes were dropped before appending\n", r.job.Output, out.Repaired)
	}
	if out.CappedBy != dispatch.NoCap {
		fmt.Fprintf(r.stderr, "note: stopped by the %s cap after %d requests\n", r.capFlag(out.CappedBy), out.Sent)
	}
	if cause := context.Cause(ctx); campaign.Interrupted(err) && errors.As(cause, new(*campaign.AbortedError)) {
		return out, total, &ExitError{Code: ExitFailure, Err: fmt.Errorf("%w; %d completed requests kept in %s", cause, out.Written, r.job.Output)}
	}
	if campaign.Interrupted(err) {
		return out, total, &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("interrupted: %d completed requests kept in %s", out.Written, r.job.Output)}
	}
	if err == nil {
		err = r.allFailed(total)
	}
	return out, total, err
}

// watch is what each plan's records go to, as they complete: the plan's
// tally and the run's, the failure window and the progress line; at the
// plan's end, with several plans, its summary.
func (r *trafficRun) watch(total *runTally, window *campaign.Abort) func(campaign.Plan) (func(*results.Record), func(dispatch.Outcome)) {
	shard := r.job.Options.Shard
	return func(p campaign.Plan) (func(*results.Record), func(dispatch.Outcome)) {
		plan := newRunTally(r.rf.slo)
		name := p.Shape + " plan" // the refill probe is burst-shaped: its own name
		if p.Label() != p.Shape {
			name = p.Label()
		}
		if !r.rf.quiet {
			announceStart(r.stderr, name, p.Start, shard)
		}
		n, most := p.Bound()
		prog := newProgress(r.stderr, r.rf.quiet, p.Label(), shard.Share(n), most, p.Start, r.rf.progress, plan)
		return func(rec *results.Record) {
				if !r.rf.quiet {
					// Read by the progress and the plan's summary only,
					// which --quiet leaves out: a tally's observe was 0.6%
					// of a quiet run's CPU (bench/README.md, round 11).
					plan.observe(rec)
				}
				total.observe(rec)
				window.Add(rec)
				if rec.Attempt == 1 {
					prog.add()
				}
			}, func(dispatch.Outcome) {
				prog.finish()
				if r.perPlan && !r.rf.quiet {
					fmt.Fprintf(r.stderr, "%s: ", name)
					plan.writeSummary(r.stderr)
				}
			}
	}
}

// startMetrics serves the run's metrics when --metrics-addr asks for
// them; stopMetrics ends them once the run's output is printed.
func (r *trafficRun) startMetrics() (err error) {
	if err := r.rf.metrics.start(r.stderr, r.rf.quiet); err != nil {
		return err
	}
	r.job.Options.Metrics, err = r.rf.metrics.traffic()
	if err != nil {
		return err
	}
	return r.rf.metrics.coordinated(r.coord)
}

func (r *trafficRun) stopMetrics() { r.rf.metrics.stop(r.stderr, r.rf.quiet) }

// capFlag names the flag behind a cap.
func (r *trafficRun) capFlag(c dispatch.Cap) string {
	if c == dispatch.CapMaxRequests {
		return "--max-requests"
	}
	return r.names.name("Budget")
}

// runAndSummarize runs a burst or schedule job and prints its summary once
// anything was sent.
func (r *trafficRun) runAndSummarize(ctx context.Context) error {
	defer r.stopMetrics()
	out, total, err := r.run(ctx)
	if out.Sent > 0 || err == nil {
		r.printSummary(out, total)
	}
	return err
}

// printSummary prints what a burst or schedule run sent and where it went.
func (r *trafficRun) printSummary(out campaign.Outcome, total *runTally) {
	total.writeSummary(r.stdout)
	if out.Retries > 0 {
		fmt.Fprintf(r.stdout, "retries: %d (attempts after a 429, under --max-attempts %d)\n", out.Retries, r.rf.maxAttempts)
	}
	fmt.Fprintf(r.stdout, "results: %s (%d rows appended)\n", r.job.Output, out.Written)
}

// Failed runs. A run whose every request failed for a reason other than
// admission (no 2xx and no 429: every answer a 404, a 401, a 5xx, or no
// answer at all) measured nothing about the target's admission: it exits
// 1 unless --allow-failures. --abort-on-fail stops a run early, as k6's
// abortOnFail does, when the failures other than admission pass a share
// of the last campaign.AbortWindow completed attempts (campaign.Abort).

type failureFlags struct {
	allow bool
	abort string // as given: a share (0.5) or a percentage (50%); empty for never
	share float64
}

func (f *failureFlags) add(fs *pflag.FlagSet) {
	fs.BoolVar(&f.allow, "allow-failures", false, "exit 0 even when every request failed for a reason other than a 429 (a 4xx, a 5xx, no response)")
	fs.StringVar(&f.abort, "abort-on-fail", "", fmt.Sprintf("stop sending when more than this share of the last %d completed attempts failed other than by a 429: 0.5 or 50%% (exit 1, completed rows kept)", campaign.AbortWindow))
}

// check parses --abort-on-fail.
func (f *failureFlags) check() error {
	if f.abort == "" {
		return nil
	}
	share, ok := campaign.ParseAbortShare(f.abort)
	if !ok {
		return usageError("--abort-on-fail must be a share from 0 to below 1 (0.5) or a percentage (50%%), got %q", clipFlag(f.abort))
	}
	f.share = share
	return nil
}

func clipFlag(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}

// window is the --abort-on-fail window of a run, which calls abort once
// the share is passed; nil (which counts nothing) without the flag.
func (f *failureFlags) window(abort context.CancelCauseFunc) *campaign.Abort {
	if f.abort == "" {
		return nil
	}
	return campaign.NewAbort(f.share, "--abort-on-fail "+f.abort, abort)
}

// allFailed is the exit-1 error of a run whose every request failed other
// than by admission, naming how; nil otherwise, or with --allow-failures.
func (r *trafficRun) allFailed(total *runTally) error {
	if r.rf.failures.allow {
		return nil
	}
	a, err := total.t.Analysis(nil, 1)
	if err != nil || !a.HasRequests() {
		return nil
	}
	req := &a.Overall.Requests
	if req.Succeeded > 0 || req.HTTP429 > 0 || req.Requests == 0 {
		return nil // none sent (every request given up locally) failed nothing
	}
	return &ExitError{Code: ExitFailure, Err: fmt.Errorf("all %d requests failed, none by admission (%s): check the target, its path and its key; --allow-failures exits 0", req.Requests, failureBreakdown(a))}
}

// failureBreakdown names the statuses and error classes of a run: "404
// ×240", "no response ×3: refused ×3".
func failureBreakdown(a *analyze.Analysis) string {
	var parts []string
	for _, code := range slices.Sorted(maps.Keys(a.Totals.ByStatus)) {
		name := strconv.Itoa(code)
		if code == 0 {
			name = "no response"
		}
		parts = append(parts, fmt.Sprintf("%s ×%d", name, a.Totals.ByStatus[code]))
	}
	var classes []string
	for _, c := range slices.Sorted(maps.Keys(a.Totals.ByErrorClass)) {
		classes = append(classes, fmt.Sprintf("%s ×%d", c, a.Totals.ByErrorClass[c]))
	}
	s := strings.Join(parts, ", ")
	if len(classes) > 0 {
		s += "; errors: " + strings.Join(classes, ", ")
	}
	return s
}
