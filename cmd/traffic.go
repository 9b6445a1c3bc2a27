package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/results"
)

// runFlags are the flags every traffic command shares.
type runFlags struct {
	output      string
	quiet       bool
	group       string
	maxInFlight int
	maxRequests int
	progress    time.Duration
	maxAttempts int
	retryJitter float64
	retryMax    time.Duration
}

func (f *runFlags) add(fs *pflag.FlagSet, withOutput bool) {
	if withOutput {
		fs.StringVarP(&f.output, "output", "o", "results.csv", "results file (appended to; created with a header if new)")
	}
	fs.BoolVar(&f.quiet, "quiet", false, "print no progress")
	fs.StringVar(&f.group, "group", "", "group label written on every row (default burst-shaped / scheduled-shaped)")
	fs.IntVar(&f.maxInFlight, "max-in-flight", dispatch.DefaultMaxInFlight, "most requests in flight at once; a send that waits for a slot is recorded late")
	fs.IntVar(&f.maxRequests, "max-requests", dispatch.DefaultMaxRequests, "safety cap: a plan with more requests is refused")
	fs.DurationVar(&f.progress, "progress-every", 5*time.Second, "interval of plain progress lines when stderr is not a terminal")
	f.maxAttempts, f.retryJitter, f.retryMax = 1, 0.2, time.Minute
}

// addRetry registers the retry flags (traffic commands; not calibrate,
// whose probes must see every refusal as it is).
func (f *runFlags) addRetry(fs *pflag.FlagSet) {
	fs.IntVar(&f.maxAttempts, "max-attempts", 1, "attempts per request: above 1, a 429 with a usable advised wait is retried after that wait (plus jitter), each retry a row with the next attempt number")
	fs.Float64Var(&f.retryJitter, "retry-jitter", 0.2, "stretch each retry's wait by a random factor in [1, 1+jitter]")
	fs.DurationVar(&f.retryMax, "retry-max-wait", time.Minute, "do not retry a request whose advised wait is longer than this")
}

// retryPolicy is the dispatch policy the retry flags describe, or nil.
func (f *runFlags) retryPolicy() *dispatch.RetryPolicy {
	if f.maxAttempts <= 1 {
		return nil
	}
	return &dispatch.RetryPolicy{MaxAttempts: f.maxAttempts, Jitter: f.retryJitter, MaxWait: f.retryMax}
}

func (f *runFlags) validate(planned int) error {
	if f.maxInFlight < 1 {
		return usageError("--max-in-flight must be at least 1")
	}
	if f.maxRequests < 1 {
		return usageError("--max-requests must be at least 1")
	}
	if planned > f.maxRequests {
		return usageError("the plan has %d requests, more than --max-requests %d; raise --max-requests deliberately if you mean it", planned, f.maxRequests)
	}
	if f.group != "" {
		if err := validGroup(f.group); err != nil {
			return usageError("--group: %v", err)
		}
	}
	if f.progress <= 0 {
		return usageError("--progress-every must be positive")
	}
	if f.maxAttempts < 1 || f.maxAttempts > 10 {
		return usageError("--max-attempts must be between 1 and 10")
	}
	if !(f.retryJitter >= 0 && f.retryJitter <= 1) {
		return usageError("--retry-jitter must be between 0 and 1")
	}
	if f.retryMax <= 0 {
		return usageError("--retry-max-wait must be positive")
	}
	return nil
}

// validGroup enforces what the published outputs allow in a label.
func validGroup(g string) error {
	if len(g) > 64 {
		return errors.New("at most 64 characters")
	}
	for _, r := range g {
		if r < 0x20 || r == 0x7f || r == ',' || r == '"' {
			return errors.New("printable characters only, no commas or quotes")
		}
	}
	return nil
}

// trafficPlan is one shape's plan, ready for the dispatch engine.
type trafficPlan struct {
	shape    string
	group    string
	pacer    dispatch.Pacer
	planned  int
	span     time.Duration // planned length, for the time cap
	waitWave bool
	gap      time.Duration
}

// runPlan sends plan through the target into w, with progress on stderr.
// It returns the tally; an interrupted run returns dispatch.ErrInterrupted
// after every sent request has been recorded.
func runPlan(ctx context.Context, plan trafficPlan, sender dispatch.Sender, w *results.Writer, runID string, rf *runFlags, maxDuration time.Duration, stderr io.Writer) (*dispatch.Tally, dispatch.Outcome, error) {
	tally := dispatch.NewTally()
	prog := newProgress(stderr, rf.quiet, plan.shape, plan.planned, rf.progress, tally)
	defer prog.finish()
	group := rf.group
	if group == "" {
		group = plan.group
	}
	out, err := dispatch.Run(ctx, plan.pacer, sender, w, dispatch.Options{
		RunID: runID, Shape: plan.shape, Group: group,
		MaxInFlight: rf.maxInFlight, MaxRequests: rf.maxRequests, MaxDuration: maxDuration,
		WaitWave: plan.waitWave, WaveGap: plan.gap, Retry: rf.retryPolicy(),
		Observe: func(r *results.Record) {
			tally.Observe(r)
			if r.Attempt == 1 {
				prog.add()
			}
		},
	})
	return tally, out, err
}

// trafficCommand runs one plan end to end: target, results file, engine,
// summary, exit code.
func trafficCommand(ctx context.Context, plan trafficPlan, tf *targetFlags, rf *runFlags, maxDuration time.Duration, stdout, stderr io.Writer) error {
	if err := rf.validate(plan.planned); err != nil {
		return err
	}
	if rf.output == "" {
		return usageError("--output must name a file")
	}
	tgt, closeTarget, err := tf.open(ctx, rf.maxInFlight, rf.quiet, stderr)
	if err != nil {
		return err
	}
	defer closeTarget()
	w, err := results.Create(rf.output)
	if err != nil {
		return asUsage(err)
	}
	tally, out, runErr := runPlan(ctx, plan, tgt, w, results.NewRunID(), rf, maxDuration, stderr)
	cerr := w.Close()
	tally.Snapshot().WriteSummary(stdout)
	if out.Retries > 0 {
		fmt.Fprintf(stdout, "retries: %d (attempts after a 429, under --max-attempts %d)\n", out.Retries, rf.maxAttempts)
	}
	fmt.Fprintf(stdout, "results: %s (%d rows appended)\n", rf.output, out.Written)
	return finishRun(out, runErr, cerr, rf.output, stderr)
}

// finishRun turns the engine's outcome into the command's error and exit code.
func finishRun(out dispatch.Outcome, runErr, closeErr error, output string, stderr io.Writer) error {
	if out.CappedBy != dispatch.NoCap {
		fmt.Fprintf(stderr, "note: stopped by the %s cap after %d requests\n", capFlag(out.CappedBy), out.Sent)
	}
	switch {
	case errors.Is(runErr, dispatch.ErrInterrupted):
		return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("interrupted: %d completed requests kept in %s", out.Written, output)}
	case runErr != nil:
		return runErr
	case closeErr != nil:
		return closeErr
	}
	return nil
}

// capFlag names the flag behind a cap.
func capFlag(c dispatch.Cap) string {
	if c == dispatch.CapMaxRequests {
		return "--max-requests"
	}
	return "--duration"
}
