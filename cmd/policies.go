package cmd

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/ptuprobe/ptuprobe/analyze"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/policy"
	"github.com/ptuprobe/ptuprobe/internal/policylab"
)

// Defaults of the policy lab.
const (
	DefaultPoliciesOutDir = "ptuprobe-policies"
	DefaultPolicyLoads    = "0.8x,1.5x,3x"
	DefaultPolicyClients  = "16"
	DefaultPolicyRepeat   = 5
	DefaultPolicyDuration = 40 * time.Second
	DefaultPolicyArrivals = "poisson"
	// DefaultPolicyPause and DefaultPolicyMaxRequests are a named
	// target's: a pause between runs, and the lab's cap on requests.
	DefaultPolicyPause       = 30 * time.Second
	DefaultPolicyMaxRequests = 10_000
)

type policiesCmd struct {
	tf          targetFlags
	capacity    float64
	pause       time.Duration
	maxRequests int
	maxWork     int64
	fallback    string
	policies    []string
	loads       string
	clients     string
	repeat      int
	budget      time.Duration
	maxAttempts int
	duration    time.Duration
	warmup      time.Duration
	tail        time.Duration
	slo         analyze.SLO
	storeDelay  time.Duration
	arrivals    string
	from        string
	grid        string
	outDir      string
	quiet       bool
	dryRun      bool
	// coord holds --coordinate and --coordinate-password-env.
	coord ownerFlags
}

func (pc *policiesCmd) run(c *cobra.Command, _ []string) error {
	stdout, stderr := c.OutOrStdout(), c.ErrOrStderr()
	if err := pc.fromConflicts(c.Flags()); err != nil {
		return err
	}
	job, err := pc.job(c.Flags())
	if err != nil {
		return err
	}
	job.Setup.Command, job.Setup.Settings = c.CommandPath(), reportSettings(c.Flags())
	if pc.dryRun {
		writeLabPlan(stdout, job, &pc.tf)
		return nil
	}
	if job.Lab.Coordinate != nil {
		coordination, fallbacks, err := pc.coord.labCoordination(c.Context(), stderr)
		if err != nil {
			return err
		}
		job.Lab.Coordinate = coordination
		defer func() {
			if n := fallbacks(); n > 0 {
				fmt.Fprintf(stderr, "note: --coordinate: %d decisions fell back to their client's own state\n", n)
			}
		}()
	}
	if pc.from != "" {
		fs := c.Flags()
		r, err := job.Lab.FitFrom(c.Context(), policylab.From{File: pc.from, Arrival: !fs.Changed("arrival"), Prompt: !fs.Changed("prompt-tokens"), MaxTokens: !fs.Changed("max-tokens"), Stderr: stderr, Quiet: pc.quiet})
		if err != nil {
			if c.Context().Err() != nil {
				return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("interrupted while fitting the twin")}
			}
			return settingError(err, pc.names())
		}
		if !pc.quiet {
			fmt.Fprintf(stderr, "ptuprobe: --from %s: the twin (%s model) fits %s: %s\n", pc.from, r.Profile.Fit.Model, r.Profile.Fit.Quality, r.Profile.Fit.Why)
		}
	}
	if !pc.quiet {
		job.Lab.Announce(stderr)
	}
	sw, written, runErr := policylab.Execute(c.Context(), job)
	interrupted := errors.Is(runErr, policylab.ErrInterrupted)
	if runErr != nil && !interrupted {
		return settingError(runErr, pc.names())
	}
	if err := policylab.PrintTable(stdout, sw); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	for _, p := range written {
		fmt.Fprintf(stdout, "wrote %s\n", p)
	}
	if interrupted {
		status := cmp.Or(sw.PartialStatus(), "interrupted")
		return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("%s: the %d rows completed are in %s", status, len(sw.Rows), pc.outDir)}
	}
	return nil
}

// fromConflicts refuses what --from cannot go with, before any other
// check: a named target (the lab runs on the twin) and --sim-profile (the
// twin is the profile).
func (pc *policiesCmd) fromConflicts(fs *pflag.FlagSet) error {
	switch {
	case pc.from == "":
		return nil
	case pc.tf.endpoint != "" || pc.tf.url != "":
		return usageError("--from fits a twin and runs the lab on it: give no --endpoint or --url")
	case fs.Changed("sim-profile"):
		return usageError("--from fits the twin the lab runs on: give no --sim-profile")
	}
	return nil
}

func (pc *policiesCmd) names() flagNames {
	return merge(targetNames(pc.tf.endpoint == "" && pc.tf.url == ""), flagNames{
		"Capacity": "--capacity", "Pause": "--pause", "MaxRequests": "--max-requests", "MaxWork": "--max-work", "FallbackDeployment": "--fallback-deployment",
		"Policies": "--policy", "Loads": "--load", "Clients": "--clients", "Repeat": "--repeat", "Budget": "--retry-budget",
		"MaxAttempts": "--max-attempts", "Duration": "--duration", "PromptTokens": "--prompt-tokens",
		"MaxTokens": "--max-tokens", "OutDir": "--out-dir", "Coordinate": "--coordinate",
		"SLO": "--slo", "Warmup": "--warmup", "Tail": "--tail", "StoreDelay": "--store-delay", "Arrival": "--arrival",
		"Inputs": "--from: the results files", // the fit's, under --from
	})
}

// job reads the flags into the lab's job; a value out of range is one
// usage line naming its flag.
func (pc *policiesCmd) job(fs *pflag.FlagSet) (policylab.Job, error) {
	var lab policylab.Lab
	names := pc.policies
	if len(names) == 0 {
		names = policy.Defaults()
	}
	for _, n := range names {
		s, err := policy.Parse(n)
		if err != nil {
			return policylab.Job{}, usageError("--policy: %v", err)
		}
		lab.Policies = append(lab.Policies, s)
	}
	loads, err := policylab.ParseLoads(pc.loads)
	if err != nil {
		return policylab.Job{}, usageError("--load: %v", err)
	}
	clients, err := parseClients(pc.clients)
	if err != nil {
		return policylab.Job{}, err
	}
	arrival, err := policylab.ParseArrival(pc.arrivals)
	if err != nil {
		return policylab.Job{}, usageError("--arrival: %v", err)
	}
	if err := pc.tf.resolveSim(); err != nil {
		return policylab.Job{}, err
	}
	prompt, maxTokens, err := pc.tf.tokens.fixed()
	if err != nil {
		return policylab.Job{}, err
	}
	lab.Loads, lab.Clients, lab.Repeat = loads, clients, pc.repeat
	lab.Budget, lab.MaxAttempts, lab.Duration, lab.Arrival = pc.budget, pc.maxAttempts, pc.duration, arrival
	lab.Sim, lab.PromptTokens, lab.MaxTokens, lab.MaxWork = pc.tf.sim, prompt, maxTokens, pc.maxWork
	if lab.SLO, err = pc.slo.OnlyE2E(); err != nil {
		return policylab.Job{}, usageError("--slo %s: the lab measures only a request's latency: %v", pc.slo, err)
	}
	lab.Warmup, lab.Tail, lab.StoreDelay = pc.budget, pc.budget, pc.storeDelay
	if lab.Grid, lab.Fixed, err = pc.gridOf(fs, &lab); err != nil {
		return policylab.Job{}, err
	}
	target := campaign.Target{Spec: pc.tf.spec(), FallbackDeployment: pc.fallback}
	if !target.Embedded() {
		lab.Named = &policylab.Named{Target: target, Capacity: pc.capacity, Pause: pc.pause, MaxRequests: pc.maxRequests}
	} else if pc.capacity != 0 || pc.fallback != "" {
		return policylab.Job{}, usageError("--capacity and --fallback-deployment are for a named target (--endpoint or --url); the simulator's capacity follows from its model")
	}
	if pc.coord.coordinate != "" {
		lab.Coordinate = &policylab.Coordination{} // opened by run, once the flags are checked
	}
	job := policylab.Job{Lab: lab, OutDir: pc.outDir}
	if err := job.Lab.Validate(); err != nil {
		return job, settingError(err, pc.names())
	}
	return job, nil
}

// gridOf sets the lab's --warmup and --tail when given, and reads --grid
// and which of the grid's unknowns a flag fixed (a refusal cost a profile
// set fixes it too).
func (pc *policiesCmd) gridOf(fs *pflag.FlagSet, lab *policylab.Lab) (string, policylab.Unknowns, error) {
	if fs.Changed("warmup") {
		lab.Warmup = pc.warmup
	}
	if fs.Changed("tail") {
		lab.Tail = pc.tail
	}
	refusalCost := lab.Sim.RefusalCost
	switch pc.grid {
	case policylab.GridFinalists, policylab.GridFull, policylab.GridOff:
	default:
		return "", policylab.Unknowns{}, usageError("--grid %q: want %s, %s or %s", pc.grid, policylab.GridFinalists, policylab.GridFull, policylab.GridOff)
	}
	return pc.grid, policylab.Unknowns{RefusalCost: fs.Changed("sim-refusal-cost") || refusalCost != 0, Arrival: fs.Changed("arrival"),
		Budget: fs.Changed("retry-budget"), Model: fs.Changed("sim-profile")}, nil
}

// parseClients reads --clients: fleet sizes, comma-separated.
func parseClients(v string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > policylab.MaxClients {
			return nil, usageError("--clients: %q: want fleet sizes from 1 to %d, comma-separated", f, policylab.MaxClients)
		}
		out = append(out, n)
	}
	return out, nil
}

// policyNames are the built-ins' names, wrapped to the help's width.
func policyNames() string {
	var b strings.Builder
	line := " "
	for i, p := range policy.Builtins {
		name := p.Name
		if i < len(policy.Builtins)-1 {
			name += ","
		}
		if len(line)+1+len(name) > 78 {
			b.WriteString(line + "\n")
			line = " "
		}
		line += " " + name
	}
	return b.String() + line + "\n"
}

// policyList is the topic 'ptuprobe help client-policies': every
// built-in with what it does.
func policyList() string {
	var b strings.Builder
	b.WriteString("The built-in client policies of 'ptuprobe policies' and of --policy on burst,\n" +
		"schedule and characterize (fixed:D and poll:D take 50ms to 1m; none, sdk,\n" +
		"stacked, sdk-one-owner and the aws-* modes model a named client and keep its\n" +
		"caps; retry-quota and adaptive are the old names of honor-aws-quota and\n" +
		"honor-aws-adaptive; docs/policies.md gives each its source):\n\n")
	for _, p := range policy.Builtins {
		fmt.Fprintf(&b, "  %-20s %s\n", p.Name, p.What)
	}
	b.WriteString("\nCustom: NAME=BASE,key=value,… with keys attempts, budget, jitter, max-wait,\n" +
		"fallback, cooldown, advice, backoff, slots, pace; e.g. --policy 'mine=honor,jitter=1'.\n")
	return b.String()
}

func init() {
	register(func() *cobra.Command {
		pc := &policiesCmd{}
		c := &cobra.Command{
			Use:   "policies",
			Short: "Compare client retry policies fairly, over load and fleet size, and recommend one",
			Long: `policies answers "what should my client do with a 429?" by measuring it on the
embedded simulator's virtual clock (the same flags, the same policies.csv, in
seconds): arrivals at each --load over --clients instances, each a retry owner
set as the policy, under one --retry-budget and --max-attempts, --repeat times.
Each is ranked on the share of offered requests answered within --slo in the
steady state (--warmup and --tail around the --duration measured), with its
95% interval, then its load, then its latency. Built-in policies ('ptuprobe
help client-policies' says what each does; custom: NAME=BASE,key=value,…):
` + policyNames() + `The printed table, policies.md and report.html open with a Recommendation per
load and attempts cap. A named target (--endpoint or --url) runs on the wall
clock, --pause apart; loads as multiples need --capacity (from calibrate).
--coordinate runs the policies with a cooldown, slots or pace alone and
coordinated through Redis, in real time ('ptuprobe help fleet').`,
			Example: `  # Every built-in at 0.8x, 1.5x and 3x capacity, 16 clients, 5 repeats
  ptuprobe policies --out-dir lab

  # A real deployment that calibrate found sustains 6 requests/s
  ptuprobe policies --endpoint https://NAME.openai.azure.com --deployment PTU-DEPLOYMENT \
      --capacity 6 --load 1.5x --policy honor --policy pace --repeat 1 --duration 60s`,
			Args: noArgs,
			RunE: pc.run,
		}
		pc.addFlags(c.Flags())
		alias(c, renames{"arrivals": "arrival", "budget": "retry-budget"})
		return c
	})
}

// addFlags registers policies' flags on fs.
func (pc *policiesCmd) addFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&pc.policies, "policy", nil, "a client policy: a built-in name or NAME=BASE,key=value,… (repeatable; default every built-in)")
	fs.StringVar(&pc.loads, "load", DefaultPolicyLoads, "loads to run, comma-separated: multiples of capacity (1.5x) or rates (8/s)")
	fs.StringVar(&pc.clients, "clients", DefaultPolicyClients, "fleet sizes, comma-separated: the arrivals are spread over this many independent clients")
	fs.IntVar(&pc.repeat, "repeat", DefaultPolicyRepeat, "runs of every cell, seeds --sim-seed, +1, …; on the simulator a row clearly beaten after 3 keeps 3")
	fs.DurationVar(&pc.budget, "retry-budget", policy.DefaultBudget, "latency budget of every request, the same for every fair policy")
	fs.IntVar(&pc.maxAttempts, "max-attempts", policy.DefaultMaxAttempts, "attempts cap per request, the same for every fair policy, 1 to "+strconv.Itoa(policy.MaxAttempts))
	fs.DurationVar(&pc.duration, "duration", DefaultPolicyDuration, "the steady-state window measured (model time): its arrivals are the offered requests")
	fs.DurationVar(&pc.warmup, "warmup", policy.DefaultBudget, "arrivals before the window, not measured (default: the --retry-budget)")
	fs.DurationVar(&pc.tail, "tail", policy.DefaultBudget, "arrivals after the window, not measured (default: the --retry-budget)")
	fs.DurationVar(&pc.storeDelay, "store-delay", policylab.DefaultStoreDelay, "embedded simulator: what each decision of a fleet's shared state (slots) costs, the round trip to its store")
	pc.slo = analyze.SLO{E2E: policylab.DefaultSLO}
	fs.Var(&pc.slo, "slo", "latency within which a success counts: the measure is the share of offered requests answered 2xx within it; the --slo grammar of every command (e2e=DUR, or a bare duration), ttft, tpot and itl refused: the lab measures latency only")
	fs.StringVar(&pc.from, "from", "", "a results file of your deployment (characterize's, or any run's): fit the simulator's twin to it (as ptuprobe fit does), run every policy on the twin under that run's traffic (its arrivals, unless --arrival; its mean prompt, unless --prompt-tokens), and recommend for them; on a poor or insufficient fit, nothing")
	fs.StringVar(&pc.arrivals, "arrival", DefaultPolicyArrivals, "arrival process at each load's rate: poisson (seeded), gamma:CV (seeded gamma gaps of coefficient of variation CV, as vLLM's --burstiness), constant, waves[:SIZE][@GAP] (SIZE requests at once every GAP, as burst plans them; by default a wave every 2s carrying the load's 2 s) or replay:FILE (a trace's arrivals: a results file's first attempts, or an Azure, BurstGPT or Mooncake trace's rows; their clock scaled to the load)")
	fs.StringVar(&pc.grid, "grid", policylab.GridFinalists, "the grid of what you cannot know, run around the given conditions one unknown at a time (refusal cost 0/1%/5%, arrivals poisson/gamma:2/waves, budget 30s/the SLO, model ptu/documents; a flag that fixes one removes it, and --from fixes the model: its twin): finalists (the policies not clearly beaten at the given conditions, 3 repeats), full (every policy) or off")
	fs.StringVar(&pc.outDir, "out-dir", DefaultPoliciesOutDir, "directory for the table, the charts and report.html (files replaced)")
	fs.BoolVarP(&pc.quiet, "quiet", "q", false, "no progress on stderr")
	fs.BoolVar(&pc.dryRun, "dry-run", false, dryRunUsage)
	fs.Float64Var(&pc.capacity, "capacity", 0, "named target: what the deployment sustains, requests/s (from calibrate), for loads given as multiples and the capacity share")
	fs.DurationVar(&pc.pause, "pause", DefaultPolicyPause, "named target: pause between runs, so each meets a drained deployment")
	fs.IntVar(&pc.maxRequests, "max-requests", DefaultPolicyMaxRequests, "named target: most requests the whole lab may offer (raise it deliberately)")
	fs.Int64Var(&pc.maxWork, "max-work", policylab.DefaultMaxWork, "embedded simulator: most attempts the whole lab may send, estimated before it runs as every arrival at its policy's attempts cap (raise it deliberately)")
	fs.StringVar(&pc.fallback, "fallback-deployment", "", "named target: the Azure deployment a redirect goes to (redirect, budget, cooldown and fallback=on need it)")
	fs.StringVar(&pc.coord.coordinate, "coordinate", "", "run each policy with slots, pace or a cooldown twice, alone and with the fleet's clients sharing that state through the Redis at `URL` (redis://HOST:PORT/DB or rediss://), on the wall clock")
	fs.StringVar(&pc.coord.passwordEnv, "coordinate-password-env", DefaultCoordinatePasswordEnv, coordinatePasswordEnvUsage)
	pc.coord.addTimeout(fs)
	pc.tf.add(fs)
	for _, f := range []string{"prompts", "prompts-order", "tokenizer", "sim-time-scale", "sim-fault-rate", "sim-faults", "sim-slow-delay", "sim-require-key", "sim-spillover-deployment", "sim-spillover-per-request", "sim-max-keys"} {
		if fs.Lookup(f) != nil {
			_ = fs.MarkHidden(f)
		}
	}
}
