package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	profile  string
	scenario string
	ptu      float64
	budget   time.Duration
	timeout  time.Duration
	expect   []string
	passEnv  []string
	owners   int
	outDir   string
}

func (rc *refereeCmd) run(c *cobra.Command, args []string) error {
	if c.ArgsLenAtDash() != 0 || len(args) == 0 {
		return usageError("give the command to grade after --, e.g. ptuprobe referee -- node app.js (see 'ptuprobe referee --help')")
	}
	job := referee.Job{
		Scenario: rc.scenario, Dialect: rc.dialect, PTU: rc.ptu, Budget: rc.budget, Timeout: rc.timeout,
		Command: args, Env: os.Environ(), PassEnv: rc.passEnv, Stdin: c.InOrStdin(), Stdout: c.OutOrStdout(), Stderr: c.ErrOrStderr(),
		OutDir: rc.outDir, Seed: sim.DefaultSeed, OwnerRetries: rc.owners,
	}
	if rc.profile != "" {
		p, err := sim.OpenProfile(rc.profile)
		if err != nil {
			return usageError("--sim-profile: %v", err)
		}
		job.Sim = &p.Config
	}
	for _, e := range rc.expect {
		x, err := referee.ParseExpectation(e)
		if err != nil {
			return usageError("--expect %v", err)
		}
		job.Expect = append(job.Expect, x)
	}
	v, written, err := referee.Run(c.Context(), job)
	interrupted := errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
	switch {
	case errors.Is(err, referee.ErrStart):
		return asUsage(err)
	case interrupted && v.Interrupted:
		printVerdict(c.OutOrStdout(), v, written)
		return &ExitError{Code: ExitInterrupted, Err: errors.New("interrupted: the command's process group was ended; the verdict holds what the simulator saw until then")}
	case err != nil:
		var ee interface{ Field() string }
		if errors.As(err, &ee) {
			return settingError(err, rc.names())
		}
		return &ExitError{Code: ExitFailure, Err: err}
	}
	if err := printVerdict(c.OutOrStdout(), v, written); err != nil {
		return err
	}
	if !v.Pass {
		return &ExitError{Code: ExitThreshold, Err: errors.New(referee.Summary(v))}
	}
	return nil
}

// printVerdict prints the verdict table and the files written.
func printVerdict(w io.Writer, v referee.Verdict, written []string) error {
	fmt.Fprintln(w)
	if err := referee.PrintTable(w, v); err != nil {
		return err
	}
	for _, p := range written {
		fmt.Fprintf(w, "wrote %s\n", p)
	}
	return nil
}

func (rc *refereeCmd) names() flagNames {
	return flagNames{
		"Scenario": "--scenario", "Dialect": "--sim-dialect", "PTU": "--sim-ptu", "Budget": "--retry-budget",
		"Timeout": "--timeout", "Expect": "--expect", "Command": "COMMAND", "PassEnv": "--pass-env", "OwnerRetries": "--owner-retries",
	}
}

const refereeLong = `referee answers "is my client's retry stack harmful?" in one command. It
starts the simulator on 127.0.0.1 in --sim-dialect and --scenario and runs
COMMAND with the variables the OpenAI, Azure OpenAI, Anthropic, Gemini SDKs and
LiteLLM read pointed at it (AZURE_OPENAI_ENDPOINT, ANTHROPIC_BASE_URL…;
OPENAI_BASE_URL but in azure, where AzureOpenAI would take it over its
endpoint; docs/referee.md) and a throwaway key the simulator requires, without
any credential-like variable of yours, by name (KEY, SECRET, TOKEN, _PASS…) or
value (a URL with a user or a secret query, AccountKey=, a JWT, a ghp_ token);
it names them on stderr, --pass-env NAME gives one. It waits for COMMAND
(within --timeout, then its process group is ended, and what it left running)
and grades what the simulator's witness saw (expectations on the right):

  requests              requests the simulator decided on (0: none
                        reached it, or were refused for their key)  >= 1
  foreign_keys          requests with a key but the throwaway one
                        (stale, in the URL, Basic…) or none         <= 0
  early_returns         retries back before the advised wait        <= 0
  owners                retry owners: declared (SDK, marked) and
                        undeclared (a loop, a gateway); 2 also for
                        retries interleaving two schedules (at once
                        after a wait, a backoff starting over); a
                        client's own retry count is no second owner <= 1
  attempts_per_request, http_429_per_success, herd (retries within
                        50 ms of the median lateness: no jitter)    reported
  over_budget           retries later than --retry-budget after
                        their refusal, early (early_returns) or not <= 0
  incomplete            refusals nobody came back to                reported

--expect 'NAME OP NUMBER' (OP: <= < >= > == !=) sets an expectation: 'herd<=0.5'.

Scenarios:
  storm         sustained overload (--sim-ptu 1): each 429 advises up to a
                call's drain, and 5-17 s while a neighbour's batch drains
  long-wait     advised waits longer than --retry-budget: a good client gives
                up or redirects, neither early nor past its budget
  spillover     the storm with a standard deployment (sim-standard) behind
  headers-only  the storm without retry-after(-ms): only the dialect's reset
                or RateLimit fields advise (openai, anthropic, ietf)

Give concurrent calls distinct prompts (or an Idempotency-Key): the
simulator tells a retry from a new call by its marker, else its body. Stdin
passes through unless it is a terminal.

Exit status: 0 every expectation holds, 3 one is breached or the command
timed out, 2 bad flags or a command that cannot start, 130 interrupted (the
verdict so far is written). Into --out-dir: referee.json, referee.md and
report.html; none holds a key, a prompt, a host or a variable's name.`

const refereeExample = `  # A Node app (openai-node's AzureOpenAI, say), in the storm
  ptuprobe referee -- node app.js
  # A Python app on OpenAI's wire, advised only by x-ratelimit-reset-*
  ptuprobe referee --sim-dialect openai --scenario headers-only -- python app.py
  # A Go test (-count=1: a cached result sends nothing)
  ptuprobe referee --scenario long-wait --retry-budget 10s -- go test -count=1 ./...
  # Require jitter over the advised waits (10 retries compared, at least)
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
		f.StringVar(&rc.dialect, "sim-dialect", referee.DefaultDialect, "wire the simulator speaks: "+strings.Join(sim.AllDialects(), ", "))
		f.StringVar(&rc.profile, "sim-profile", "", "the simulator's model: ptu, gateway, window, a named profile or a profile file ('ptuprobe fit' writes one) in place of the scenario's (which then adds only its wire: spillover, headers-only)")
		f.StringVar(&rc.scenario, "scenario", referee.DefaultScenario, "what the simulator does: "+strings.Join(referee.Scenarios(), ", "))
		f.Float64Var(&rc.ptu, "sim-ptu", 0, "size of the PTU deployment (0: the scenario's: 1, in long-wait one token drained per --retry-budget)")
		f.DurationVar(&rc.budget, "retry-budget", referee.DefaultBudget, "a request's latency budget: long-wait advises waits past it; a retry later than it is over budget")
		f.DurationVar(&rc.timeout, "timeout", referee.DefaultTimeout, "how long COMMAND may run before its process group is ended")
		f.StringArrayVar(&rc.expect, "expect", nil, "an expectation NAME OP NUMBER, e.g. 'owners<=1' (repeatable)")
		f.StringArrayVar(&rc.passEnv, "pass-env", nil, "pass this credential-like variable to COMMAND (repeatable; the referee names on stderr those it withholds)")
		f.IntVar(&rc.owners, "owner-retries", referee.DefaultOwnerRetries, "most waited retries of a call by one owner: more read as two owners (0: no bound, a client's own retry count is no second owner)")
		f.StringVar(&rc.outDir, "out-dir", DefaultRefereeOutDir, "directory for referee.json, referee.md and report.html")
		alias(c, renames{"dialect": "sim-dialect", "ptu": "sim-ptu", "budget": "retry-budget"})
		return c
	})
}
