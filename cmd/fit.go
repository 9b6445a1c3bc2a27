package cmd

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/fit"
	"github.com/ptuprobe/ptuprobe/results"
)

// DefaultTwinFile is where fit writes the twin's profile.
const DefaultTwinFile = "twin.json"

type fitCmd struct {
	output, name, plan, events string
	valueColumn, groupColumn   string
	labels, holdOut, fitGroups []string
	threshold, minAgreement    float64
	promptTokens, maxTokens    int
	maxWork                    int64
	quiet, suggestPlan         bool
}

// fitFlagNames names the fit's fields by their flags.
var fitFlagNames = flagNames{
	"Inputs": "the results files", "Plan": "--plan", "Events": "--events", "HoldOut": "--hold-out",
	"FitGroups": "--fit-group", "Threshold": "--threshold", "MinAgreement": "--min-agreement",
	"PromptTokens": "--prompt-tokens", "MaxTokens": "--max-tokens", "MaxWork": "--max-work",
}

func (fc *fitCmd) run(c *cobra.Command, args []string) error {
	labels, err := analyze.ParseLabels(fc.labels)
	if err != nil {
		return usageError("--label %v", err)
	}
	job := fit.Files{
		Job: fit.Job{
			Plan: fc.plan, HoldOut: fc.holdOut, FitGroups: fc.fitGroups, Threshold: fc.threshold, MinAgreement: fc.minAgreement,
			PromptTokens: fc.promptTokens, MaxTokens: fc.maxTokens, Name: fc.name, MaxWork: fc.maxWork, SuggestPlan: fc.suggestPlan,
		},
		Results: args, EventsFile: fc.events, Output: fc.output,
		Columns: analyze.ForeignColumns{Value: fc.valueColumn, Group: fc.groupColumn}, Labels: labels,
	}
	job.Stderr, job.Quiet = c.ErrOrStderr(), fc.quiet
	r, err := fit.RunFiles(c.Context(), job)
	if err != nil {
		if c.Context().Err() != nil {
			return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("interrupted: no profile written")}
		}
		if errors.Is(err, results.ErrNotResults) {
			// fit's own way in for waits that are not ptuprobe's rows
			// (policies --from, which has no such flags, says nothing of it).
			return usageError("%s; to fit published waits, give them with --events under --plan characterize", settingError(err, fitFlagNames))
		}
		return settingError(err, fitFlagNames)
	}
	if err := fit.Print(c.OutOrStdout(), r); err != nil {
		return err
	}
	if fc.output != "" {
		fmt.Fprintf(c.OutOrStdout(), "wrote %s (%d replays): run any simulator command on it with --sim-profile %s\n", fc.output, r.Replays, fc.output)
	}
	return nil
}

const fitLong = `fit makes a twin of a measured deployment: it fits the embedded simulator's
limiter (the PTU model's drain, bucket depth, burst allowance and its
refill; or the gateway's or the window limiter's ceilings, where one of
them fits better) to a recorded run. It replays the run's sends (each when
the deployment decided it, with its tokens and an admitted one's
completion) through a fresh simulator per candidate setting, on a virtual
clock, keeps the settings whose refusals and advised waits are nearest
the recorded ones, and weighs what a refusal costs (refusal-cost).
It prints the recorded and the twin's waits side by side, says whether the
fit is good, poor or insufficient and why, and writes the twin's profile
(-o) for --sim-profile FILE on any command that runs the simulator.
policies recommends nothing from a poor or an insufficient fit.

A good fit: every tested group's waits within --threshold (a two-sample
KS distance, waits closer than 50 ms or 10% counting as one) and, for a
replay, the twin refusing about as many of the recorded sends in each
second of each plan (--min-agreement). A group is tested from 67 usable
waits on (at --threshold 0.15: where the KS 10% critical value, 1.224/√n,
comes within it); a smaller one's KS is shown, marked untested, and
decides nothing. A fit no fitted group of which is tested, and that fails
no test, is insufficient: too few refusals to tell a twin from another.
For every fitted setting the profile's fit.ranges holds the range of
values that fit the run as well as the twin (points the judgement calls
good too; for a poor fit, within 0.05 of its objective); the output marks
each setting pinned (its range within 25% of the value) or not.
--suggest-plan proposes the characterize plan (burst flags, --refill-rest)
whose run would tell the settings not pinned in the narrowest ranges,
weighed against the plan the run sent: run it, and fit its results.
--hold-out GROUP fits on the other groups and reports the held-out one's
distance. Deterministic: the same rows give the same twin, in whatever
order (duplicated rows: a warning).

A row past a request's bounds (prompt_tokens, max_tokens or
completion_tokens over 1,000,000, latency_ms over 1 h, sent_ms over 8
days) is refused, one line, exit 2. The fit's work, the sends replayed
times the points tried (about 5,000), is estimated before it replays
anything and refused past --max-work (the default is some 5,000 sends,
2 to 4 minutes of a core); a progress line comes every 2 s (-q: none),
and Ctrl-C stops it within a second.

--plan characterize --events EVENTS.csv fits published waits instead: the
sends are the main job's burst and scheduled plans as given (no refill
probe), the targets the events' waits per group (--label maps them onto
burst-shaped and scheduled-shaped), fitted on --fit-group, the others held out.
docs/fit.md has the method, the objective and the file format.`

const fitExample = `  ptuprobe characterize --endpoint https://NAME.openai.azure.com --deployment D --out-dir run
  ptuprobe fit run/results.csv -o twin.json
  ptuprobe fit run/results.csv --hold-out scheduled-shaped -o twin.json
  ptuprobe policies --sim-profile twin.json
  ptuprobe fit --plan characterize --events events.csv --group-column source \
    --label task013=burst-shaped --label task019=scheduled-shaped --fit-group burst-shaped -o documents.json`

func init() {
	register(func() *cobra.Command {
		fc := &fitCmd{}
		c := &cobra.Command{
			Use: "fit RESULTS.csv... [-o twin.json]", Short: "Fit the simulator to a recorded run: a twin of the measured deployment",
			Long: fitLong, Example: fitExample, RunE: fc.run,
		}
		f := c.Flags()
		f.StringVarP(&fc.output, "output", "o", DefaultTwinFile, "the twin's profile file (replaced; empty: write none)")
		f.StringVar(&fc.name, "name", "", "the profile's name (default the output file's name)")
		f.StringArrayVar(&fc.holdOut, "hold-out", nil, "a group the fit does not see, reported as a check (repeatable)")
		f.Float64Var(&fc.threshold, "threshold", fit.DefaultThreshold, "largest KS distance of a fitted group's waits in a good fit")
		f.Float64Var(&fc.minAgreement, "min-agreement", fit.DefaultMinAgreement, "least share of the recorded refusals the twin must match, second by second, in a good fit")
		f.StringVar(&fc.plan, "plan", "", "fit this plan's sends to --events instead of replaying results: characterize (the main job's)")
		f.StringVar(&fc.events, "events", "", "with --plan: a CSV of published 429 events (one row each, as analyze reads it)")
		f.StringVar(&fc.valueColumn, "value-column", "", "--events: the column holding the advised wait in ms (default "+analyze.DefaultValueColumn+")")
		f.StringVar(&fc.groupColumn, "group-column", "", "--events: the column holding the group")
		f.StringArrayVar(&fc.labels, "label", nil, "--events: map a group onto the plan's: FROM=TO (repeatable)")
		f.StringArrayVar(&fc.fitGroups, "fit-group", nil, "with --plan: a group to fit (repeatable; default all); the others are held out")
		f.IntVar(&fc.promptTokens, "prompt-tokens", client.DefaultPromptTokens, "prompt of the plan's sends, and of a recorded send whose row says none")
		f.IntVar(&fc.maxTokens, "max-tokens", client.DefaultMaxTokens, "output cap of the plan's sends, and of a recorded send whose row says none")
		f.Int64Var(&fc.maxWork, "max-work", fit.DefaultMaxWork, "most sends the fit may replay, summed over the points it tries, estimated before it replays any (raise it deliberately)")
		f.BoolVarP(&fc.quiet, "quiet", "q", false, "print no progress")
		f.BoolVar(&fc.suggestPlan, "suggest-plan", false, "propose the characterize plan (burst flags, --refill-rest) whose run would tell the settings this run does not pin in the narrowest ranges")
		return c
	})
}
