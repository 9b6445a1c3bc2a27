package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ptuprobe/ptuprobe/internal/referee"
	"github.com/ptuprobe/ptuprobe/sim"
)

// DefaultRefereeOutDir is where referee writes its verdict.
const DefaultRefereeOutDir = "ptuprobe-referee"

type refereeCmd struct {
	dialect  string
	scenario string
	ptu      float64
	budget   time.Duration
	timeout  time.Duration
	expect   []string
	outDir   string
}

func (rc *refereeCmd) run(c *cobra.Command, args []string) error {
	if c.ArgsLenAtDash() != 0 || len(args) == 0 {
		return usageError("give the command to grade after --, e.g. ptuprobe referee -- node app.js (see 'ptuprobe referee --help')")
	}
	job := referee.Job{
		Scenario: rc.scenario, Dialect: rc.dialect, PTU: rc.ptu, Budget: rc.budget, Timeout: rc.timeout,
		Command: args, Env: os.Environ(), Stdout: c.OutOrStdout(), Stderr: c.ErrOrStderr(), OutDir: rc.outDir, Seed: sim.DefaultSeed,
	}
	for _, e := range rc.expect {
		x, err := referee.ParseExpectation(e)
		if err != nil {
			return usageError("--expect %v", err)
		}
		job.Expect = append(job.Expect, x)
	}
	v, written, err := referee.Run(c.Context(), job)
	switch {
	case errors.Is(err, referee.ErrStart):
		return asUsage(err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &ExitError{Code: ExitInterrupted, Err: errors.New("interrupted: the command's process group was ended")}
	case err != nil:
		var ee interface{ Field() string }
		if errors.As(err, &ee) {
			return settingError(err, rc.names())
		}
		return &ExitError{Code: ExitFailure, Err: err}
	}
	stdout := c.OutOrStdout()
	fmt.Fprintln(stdout)
	if err := referee.PrintTable(stdout, v); err != nil {
		return err
	}
	for _, p := range written {
		fmt.Fprintf(stdout, "wrote %s\n", p)
	}
	if !v.Pass {
		return &ExitError{Code: ExitThreshold, Err: errors.New(referee.Summary(v))}
	}
	return nil
}

func (rc *refereeCmd) names() flagNames {
	return flagNames{
		"Scenario": "--scenario", "Dialect": "--dialect", "PTU": "--ptu", "Budget": "--budget",
		"Timeout": "--timeout", "Expect": "--expect", "Command": "COMMAND",
	}
}

const refereeLong = `referee answers "is my client's retry stack harmful?" in one command. It
starts the simulator on 127.0.0.1 (a free port) in --dialect and --scenario,
runs COMMAND with the variables the SDKs read pointed at it — OPENAI_BASE_URL,
OPENAI_API_KEY, OPENAI_ADMIN_KEY, AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_API_KEY,
AZURE_OPENAI_AD_TOKEN, OPENAI_API_VERSION, ANTHROPIC_BASE_URL,
ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, GEMINI_API_KEY, GOOGLE_API_KEY,
GOOGLE_GEMINI_BASE_URL (and PTUPROBE_REFEREE_URL for a client of no SDK) —
with a fresh throwaway key that replaces any real one, waits for
it (within --timeout; then its whole process group is ended and the verdict
says so), and grades what the simulator's witness saw:

  requests              requests the simulator decided on        expect >= 1
  early_returns         retries back before the advised wait     expect <= 0
  owners                kinds of retry owner that acted: declared
                        (SDK, marked) and undeclared (a loop, a
                        gateway); 2 is a retry stack             expect <= 1
  attempts_per_request  attempts per call                        reported
  http_429_per_success  429s per admitted request                reported
  herd                  share of retries on time within 5 ms of
                        their deadline (waits without jitter)    reported
  over_budget           retries later than --budget after
                        their refusal                            expect <= 0
  incomplete            refusals nobody came back to, requests
                        open at the end                          reported

--expect 'NAME OP NUMBER' (OP one of <= < >= > == !=) sets or replaces a
check's expectation, e.g. --expect 'herd<=0.5' --expect 'owners<=2'.

Scenarios:
  storm         sustained overload: a deployment so small (--ptu 1, a
                shallow bucket) that concurrent calls refuse each other,
                each 429 advising up to a call's drain (most of a second)
  long-wait     advised waits longer than --budget: a good client gives up
                or redirects, neither early nor past its budget
  spillover     the storm with a standard deployment (sim-standard) behind
  headers-only  the storm without retry-after and retry-after-ms: only the
                dialect's reset or RateLimit fields advise (not azure)

The simulator answers any model or deployment name. It tells a retry from a
new call by Idempotency-Key or x-ms-client-request-id when the client sends
one, else by the body: give concurrent calls distinct prompts (or a marker),
or one worker's first attempt reads as another's early return.

Exit status: 0 when every expectation holds, 3 when one is breached or the
command timed out, 2 on bad flags, no COMMAND or a command that cannot start.
The command's own exit status is in the verdict, not hidden. Written into
--out-dir: referee.json, referee.md and report.html; none holds a key, a
prompt or a host.`

const refereeExample = `  # A Node app (openai-node's AzureOpenAI, say), in the storm
  ptuprobe referee -- node app.js
  # A Python app on OpenAI's wire, advised only by x-ratelimit-reset-*
  ptuprobe referee --dialect openai --scenario headers-only -- python app.py
  # A Go test (-count=1: a cached result sends nothing)
  ptuprobe referee --scenario long-wait --budget 10s -- go test -count=1 ./...
  ptuprobe referee --expect 'herd<=0.5' --timeout 2m -- npm test`

func init() {
	register(func() *cobra.Command {
		rc := &refereeCmd{}
		c := &cobra.Command{
			Use:     "referee [flags] -- COMMAND [ARGS...]",
			Short:   "Run a command against the simulator and grade its client's 429 handling",
			Long:    refereeLong,
			Example: refereeExample,
			RunE:    rc.run,
		}
		f := c.Flags()
		f.StringVar(&rc.dialect, "dialect", referee.DefaultDialect, "wire the simulator speaks: "+strings.Join(sim.AllDialects(), ", "))
		f.StringVar(&rc.scenario, "scenario", referee.DefaultScenario, "what the simulator does: "+strings.Join(referee.Scenarios(), ", "))
		f.Float64Var(&rc.ptu, "ptu", 0, "size of the PTU deployment (0: the scenario's: 1, in long-wait one token drained per --budget)")
		f.DurationVar(&rc.budget, "budget", referee.DefaultBudget, "a request's latency budget: long-wait advises waits past it; a retry later than it is over budget")
		f.DurationVar(&rc.timeout, "timeout", referee.DefaultTimeout, "how long COMMAND may run before its process group is ended")
		f.StringArrayVar(&rc.expect, "expect", nil, "an expectation NAME OP NUMBER, e.g. 'owners<=1' (repeatable)")
		f.StringVar(&rc.outDir, "out-dir", DefaultRefereeOutDir, "directory for referee.json, referee.md and report.html")
		return c
	})
}
