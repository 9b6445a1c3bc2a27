package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/charplan"
	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/internal/policylab"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
)

// Defaults of the policy lab.
const (
	DefaultPoliciesOutDir  = "ptuprobe-policies"
	DefaultPolicyTimeScale = 20
	DefaultPolicyCooldown  = 30 * time.Second
	DefaultPolicyBudget    = 30 * time.Second
)

type policiesCmd struct {
	tf           targetFlags
	rf           runFlags
	bf           burstFlags
	sf           scheduleFlags
	policies     []string
	outDir       string
	budget       time.Duration
	repeat       int
	cooldown     time.Duration
	fallback     string
	skipBurst    bool
	skipSchedule bool
	maxDuration  time.Duration
}

func (pc *policiesCmd) run(c *cobra.Command, _ []string) error {
	stdout, stderr := c.OutOrStdout(), c.ErrOrStderr()
	lab, setup, err := pc.lab(stderr)
	if err != nil {
		return err
	}
	setup.Command, setup.Settings = c.CommandPath(), reportSettings(c.Flags())
	if err := os.MkdirAll(pc.outDir, 0o755); err != nil {
		return asUsage(fmt.Errorf("create --out-dir: %w", err))
	}
	if err := os.Remove(lab.Output); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("replace %s: %w", lab.Output, err)
	}
	if err := pc.rf.metrics.start(stderr, pc.rf.quiet); err != nil {
		return err
	}
	defer pc.rf.metrics.stop(stderr, pc.rf.quiet)
	if lab.Options.Metrics, err = pc.rf.metrics.traffic(); err != nil {
		return err
	}
	ms, runErr := policylab.Run(c.Context(), lab)
	pc.rf.metrics.finish()
	var v *valid.Error
	if errors.As(runErr, &v) {
		return settingError(runErr, pc.names())
	}
	if errors.Is(runErr, dispatch.ErrInterrupted) {
		return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("interrupted: every completed attempt is kept in %s; no table written", lab.Output)}
	}
	if runErr != nil {
		return runErr
	}
	written, err := policylab.Publish(pc.outDir, ms, setup)
	if err != nil {
		return err
	}
	printPolicyTable(stdout, ms)
	fmt.Fprintf(stdout, "\nwrote %s\n", lab.Output)
	for _, p := range written {
		fmt.Fprintf(stdout, "wrote %s\n", p)
	}
	return nil
}

func (pc *policiesCmd) names() flagNames {
	return merge(runFlagNames, targetFlagNames, simFlagNames("sim-"), pc.bf.names(), scheduleFlagNames,
		flagNames{"Budget": "--max-duration", "Output": "--out-dir", "FallbackDeployment": "--fallback-deployment"})
}

// lab checks every flag, the policies and the target, and builds the lab.
func (pc *policiesCmd) lab(stderr io.Writer) (policylab.Lab, policylab.Setup, error) {
	var lab policylab.Lab
	if pc.skipBurst && pc.skipSchedule {
		return lab, policylab.Setup{}, usageError("--skip-burst and --skip-schedule leave nothing to run")
	}
	if pc.budget <= 0 || pc.budget > time.Hour {
		return lab, policylab.Setup{}, usageError("--budget must be positive and at most 1h")
	}
	if pc.repeat < 1 || pc.repeat > 20 {
		return lab, policylab.Setup{}, usageError("--repeat must be between 1 and 20")
	}
	if pc.cooldown < 0 || pc.cooldown > time.Hour {
		return lab, policylab.Setup{}, usageError("--cooldown must be between 0 and 1h")
	}
	if pc.maxDuration <= 0 {
		return lab, policylab.Setup{}, usageError("--max-duration must be positive")
	}
	names := pc.policies
	if len(names) == 0 {
		names = policylab.DefaultPolicies()
	}
	seen := map[string]bool{}
	for _, n := range names {
		s, err := policylab.ParseSpec(n)
		if err != nil {
			return lab, policylab.Setup{}, usageError("--policy: %v", err)
		}
		if seen[s.Name] {
			return lab, policylab.Setup{}, usageError("--policy: %s is named twice", s.Name)
		}
		seen[s.Name] = true
		lab.Policies = append(lab.Policies, s)
	}
	opts, err := pc.rf.options(pc.maxDuration)
	if err != nil {
		return lab, policylab.Setup{}, err
	}
	target := campaign.Target{Spec: pc.tf.spec(), Sim: pc.tf.sim, FallbackDeployment: pc.fallback}
	scale := 1.0
	if target.Embedded() {
		// The scale divides the plans' durations below: a bad one must be
		// refused as itself, before it turns a gap negative.
		if err := pc.tf.sim.Validate(); err != nil {
			return lab, policylab.Setup{}, settingError(err, pc.names())
		}
		scale = pc.tf.sim.TimeScale
		target.Spec.Timeout = scaleDuration(target.Spec.Timeout, scale)
	} else if !pc.rf.quiet {
		fmt.Fprintf(stderr, "ptuprobe: a real target: the policies run in turn, %s apart, %d time(s) each, interleaved; drift in the deployment between runs is not cancelled beyond that\n", pc.cooldown, pc.repeat)
	}
	lab.Plans = func(scale float64) ([]campaign.Plan, error) {
		var plans []campaign.Plan
		if !pc.skipBurst {
			p, err := pc.bf.scaledPlan(scale)
			if err != nil {
				return nil, err
			}
			plans = append(plans, p)
		}
		if !pc.skipSchedule {
			p, err := pc.sf.scaledPlan(charplan.Phases(), scale)
			if err != nil {
				return nil, err
			}
			plans = append(plans, p)
		}
		return plans, nil
	}
	lab.Target, lab.Options = target, opts
	lab.Options.Budget = scaleDuration(pc.maxDuration, scale)
	lab.Output = filepath.Join(pc.outDir, "results.csv")
	lab.Repeat, lab.Cooldown, lab.ReferenceBudget = pc.repeat, pc.cooldown, pc.budget
	// Check every policy's job now, before any traffic: a fallback without
	// a target for it, a plan over the caps.
	plans, err := lab.Plans(scale)
	if err != nil {
		return lab, policylab.Setup{}, err
	}
	for _, s := range lab.Policies {
		t := target
		t.Owner, t.PolicyName, t.Fallback = s.Policy(scale), s.Name, s.Fallback
		job := campaign.Job{Plans: plans, Target: t, Output: lab.Output, Options: lab.Options}
		if err := job.Validate(); err != nil {
			if s.Fallback && !target.Embedded() && pc.fallback == "" {
				return lab, policylab.Setup{}, usageError("--policy %s redirects to a fallback: name it with --fallback-deployment (an Azure deployment on the same endpoint)", s.Name)
			}
			return lab, policylab.Setup{}, settingError(err, pc.names())
		}
	}
	requests := 0
	for _, p := range plans {
		requests += p.Planned
	}
	setup := policylab.Setup{Requests: requests, Budget: num.Grouped(pc.budget.Seconds(), 2) + " s", Target: "the named target"}
	if target.Embedded() {
		setup.Target = fmt.Sprintf("a fresh embedded simulator each (seed %d, time scale %g; times shown in model time)", pc.tf.sim.Seed, scale)
	}
	if !pc.rf.quiet {
		shard := opts.Shard
		lab.Watch = func(policy string, p campaign.Plan) (func(*results.Record), func(dispatch.Outcome)) {
			tally := newRunTally()
			announceStart(stderr, policy+" "+p.Shape, p.Start, shard)
			prog := newProgress(stderr, false, policy+" "+p.Shape, shard.Share(p.Planned), p.Start, pc.rf.progress, tally)
			return func(r *results.Record) {
					tally.observe(r)
					if r.Attempt == 1 {
						prog.add()
					}
				}, func(dispatch.Outcome) {
					prog.finish()
				}
		}
	}
	return lab, setup, nil
}

// printPolicyTable prints the ranked table for a terminal.
func printPolicyTable(w interface{ Write([]byte) (int, error) }, ms []policylab.Measure) {
	fmt.Fprintf(w, "%-18s %8s %9s %8s %10s %9s %10s %10s\n", "policy", "requests", "success", "gave up", "att/req", "429s", "e2e p50", "e2e p99")
	for _, m := range policylab.Ranked(ms) {
		fmt.Fprintf(w, "%-18s %8d %8s%% %8d %10s %9d %10s %10s\n", m.Policy, m.Requests, num.Decimal(100*m.SuccessShare(), 1),
			m.GaveUp, num.Decimal(m.AttemptsPerRequest(), 2), m.HTTP429, msCell(m.E2EPercentile(50)), msCell(m.E2EPercentile(99)))
	}
}

func msCell(v float64) string {
	if v < 0 {
		return "—"
	}
	return num.Grouped(v, 0) + " ms"
}

func policyHelp() string {
	var b strings.Builder
	for _, p := range policylab.Builtins {
		fmt.Fprintf(&b, "  %-16s %s\n", p.Name, p.What)
	}
	return b.String()
}

func init() {
	register(func() *cobra.Command {
		pc := &policiesCmd{}
		c := &cobra.Command{
			Use:   "policies",
			Short: "Send the same traffic through many client retry policies and compare what each achieved",
			Long: `policies answers "what should my client do with the advised wait?" by
measuring it: the same plan (the same arrivals, the same seed) is sent once per
--policy, each through ptuprobe's retry owner (the admission library)
configured as that client, each against a fresh embedded simulator so each
meets the same deployment state. Against a real target the policies run in
turn, --cooldown apart, --repeat times interleaved (A B C A B C).

The embedded simulator runs --sim-time-scale times faster (default ` + fmt.Sprint(DefaultPolicyTimeScale) + `), and
the plan and the policies with it; every time in the outputs is model time.

Built-in policies (fixed:D and poll:D take any duration):
` + policyHelp() + `
A custom policy starts from a built-in: NAME=BASE,key=value,… with keys
attempts, budget (or none), jitter (0–1, or none), max-wait, fallback (on/off),
cooldown (on/off), advice (honor/ignore), backoff (BASE-CAP or fixed-D), e.g.
--policy 'mine=honor,attempts=5,budget=10s,jitter=0.1,fallback=on'.

Written into --out-dir: policies.csv, policies.md (ranked by success, then p99,
with what the simulator witnessed: requests that came back before their
advised wait, declared SDK retries), policy_latency_ecdf.png/.svg (end-to-end
latency, waits included), policy_tradeoff.png (success against p99),
report.html (all of it on one self-contained page), and results.csv (every
attempt, group = policy; ptuprobe analyze reads it).
results.csv holds what was measured, in wall time: with --sim-time-scale 20
its times are 20 times shorter than the model times of the table.
` + fleetHelp + `
In a fleet every worker runs the policies in the same order on one
timeline: run i (policy by policy, round by round) starts at --start-at +
i × (the plan's length + --cooldown), on the embedded simulator too (in
model time), so all workers send each policy's run together; each
worker's table measures its own share, and 'ptuprobe analyze' over every
worker's results.csv the fleet's.`,
			Example: `  # Every built-in policy on the main job's plan, on the embedded simulator
  ptuprobe policies --out-dir lab

  # Three policies, a smaller plan
  ptuprobe policies --policy honor --policy budget --policy 'patient=honor,attempts=6,budget=60s' \
      --burst-size 20 --rate 8/s --duration 20s

  # A real Azure deployment, with a standard deployment to redirect to
  ptuprobe policies --endpoint https://NAME.openai.azure.com --deployment PTU-DEPLOYMENT \
      --fallback-deployment STANDARD-DEPLOYMENT --policy honor --policy budget --repeat 3 --cooldown 2m`,
			Args: noArgs,
			RunE: pc.run,
		}
		fs := c.Flags()
		fs.StringArrayVar(&pc.policies, "policy", nil, "a client policy to run: a built-in name or NAME=BASE,key=value,… (repeatable; default every built-in)")
		fs.StringVar(&pc.outDir, "out-dir", DefaultPoliciesOutDir, "directory for the table, the charts and results.csv (replaced)")
		fs.DurationVar(&pc.budget, "budget", DefaultPolicyBudget, "the latency a request should stay within, for the over_budget count")
		fs.IntVar(&pc.repeat, "repeat", 1, "run every policy this many times, interleaved")
		fs.DurationVar(&pc.cooldown, "cooldown", DefaultPolicyCooldown, "pause between runs against a real target (with --start-at, between all runs, on the simulator too, in model time)")
		fs.StringVar(&pc.fallback, "fallback-deployment", "", "the Azure deployment a redirect goes to (redirect, budget, cooldown and fallback=on policies need it against a real target)")
		fs.BoolVar(&pc.skipBurst, "skip-burst", false, "run only the scheduled plan")
		fs.BoolVar(&pc.skipSchedule, "skip-schedule", false, "run only the burst plan")
		fs.DurationVar(&pc.maxDuration, "max-duration", charplan.Cap, "safety cap on the time one policy's run spends sending (model time)")
		pc.bf.add(c, "burst-", charplan.Burst())
		pc.sf.add(fs, DefaultScheduleDuration)
		pc.rf.add(fs, false)
		pc.rf.addFleet(fs)
		pc.rf.addMetrics(fs)
		pc.tf.add(fs)
		pc.tf.sim.TimeScale = DefaultPolicyTimeScale
		fs.Lookup("sim-time-scale").DefValue = fmt.Sprint(DefaultPolicyTimeScale)
		return c
	})
}
