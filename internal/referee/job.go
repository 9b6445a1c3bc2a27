package referee

import (
	"errors"
	"io"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/sim"
)

// Scenarios: what the simulator does while the command runs.
const (
	// ScenarioStorm is sustained overload: a deployment small enough
	// (DefaultStormPTU) that a few concurrent calls refuse the rest, for
	// as long as the command runs.
	ScenarioStorm = "storm"
	// ScenarioLongWait advises waits longer than the Budget: a good
	// client gives up or redirects, neither early nor past its budget.
	ScenarioLongWait = "long-wait"
	// ScenarioSpillover is the storm with a standard deployment behind
	// the PTU one that serves what it refuses (Azure spillover).
	ScenarioSpillover = "spillover"
	// ScenarioHeadersOnly is the storm without retry-after and
	// retry-after-ms: the dialect's reset or RateLimit fields (Gemini's
	// RetryInfo) are the only advice.
	ScenarioHeadersOnly = "headers-only"
)

// Scenarios lists the scenarios, the default first.
func Scenarios() []string {
	return []string{ScenarioStorm, ScenarioLongWait, ScenarioSpillover, ScenarioHeadersOnly}
}

// Defaults of a job.
const (
	DefaultScenario = ScenarioStorm
	DefaultDialect  = sim.DialectAzure
	DefaultTimeout  = 5 * time.Minute
	DefaultBudget   = 30 * time.Second // admission.DefaultBudget, a request's latency budget
	// DefaultStormPTU makes D = 41.7 weighted tokens a second and, with
	// the referee's 100 ms bucket, a capacity of 4 tokens: a short call
	// (a few prompt tokens, max_tokens 10: 33 tokens) is refused whenever
	// another is being drained, and told to wait up to its 0.8 s drain,
	// longer than the SDKs' first backoff (0.375–0.5 s), so a client that
	// does not read the advice comes back early.
	DefaultStormPTU = 1
	// SpilloverDeployment is the standard deployment's name in the
	// spillover scenario.
	SpilloverDeployment = "sim-standard"
	// APIVersion is the OPENAI_API_VERSION the command is given.
	APIVersion = "2024-10-21"
)

// Job is one referee run.
type Job struct {
	Scenario string
	Dialect  string
	// PTU sizes the deployment; 0 is the scenario's (DefaultStormPTU, or
	// in long-wait one token drained per Budget).
	PTU float64
	// Budget is a request's latency budget: long-wait advises waits past
	// it, and a retry later than it after its refusal is over budget.
	Budget  time.Duration
	Timeout time.Duration
	// Expect overrides the checks' default expectations, by name.
	Expect []Expectation
	// Command is the program and its arguments; Env the environment it
	// starts from (the referee's own variables replace theirs in it).
	Command []string
	Env     []string
	// Stdout and Stderr receive the command's output; nil discards it.
	// (Any writer but an *os.File is fed through a pipe that a process
	// the command leaves behind can hold open: Wait gives up on it after
	// killGrace.)
	Stdout, Stderr io.Writer
	// OutDir receives referee.json, referee.md and report.html; empty
	// writes nothing.
	OutDir string
	// Seed is the simulator's (completion lengths).
	Seed int64
}

// ErrStart is returned, wrapped, when the command cannot be started.
var ErrStart = errors.New("the command could not be started")

// Validate checks every setting without side effects.
func (j *Job) Validate() error {
	if len(j.Command) == 0 || j.Command[0] == "" {
		return valid.Errorf("Command", "is missing: give the command to run after --")
	}
	known := false
	for _, s := range Scenarios() {
		known = known || s == j.Scenario
	}
	if !known {
		return valid.Errorf("Scenario", "%q: want one of storm, long-wait, spillover, headers-only", clip(j.Scenario))
	}
	if j.Scenario == ScenarioHeadersOnly && j.Dialect == sim.DialectAzure {
		return valid.Errorf("Scenario", "headers-only needs a dialect with reset or RateLimit fields: azure writes none (use {Dialect} openai, anthropic, ietf or gemini)")
	}
	if j.Timeout <= 0 {
		return valid.Errorf("Timeout", "%v: want > 0", j.Timeout)
	}
	if j.Budget <= 0 {
		return valid.Errorf("Budget", "%v: want > 0", j.Budget)
	}
	if j.PTU < 0 {
		return valid.Errorf("PTU", "%v: want > 0 (0: the scenario's)", j.PTU)
	}
	for _, e := range j.Expect {
		if _, ok := checkOrder[e.Name]; !ok {
			return valid.Errorf("Expect", "%q: no such check (known: %s)", clip(e.Name), checkNames())
		}
	}
	cfg := j.simConfig()
	return cfg.Validate()
}

// simConfig is the simulator of the job's scenario: the runtime clock at
// TimeScale 1, no burst allowance (overload from the first call), short
// latencies (they are not what is graded).
func (j *Job) simConfig() sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Dialect, cfg.Seed = j.Dialect, j.Seed
	cfg.BurstPct = 0
	// A shallow bucket: a few concurrent calls overload it while each
	// refusal's wait stays one call's drain.
	cfg.BucketDepth = 100 * time.Millisecond
	cfg.TTFT, cfg.TPOT = 20*time.Millisecond, time.Millisecond
	cfg.WitnessBudget = j.Budget
	cfg.PTU = DefaultStormPTU
	switch j.Scenario {
	case ScenarioLongWait:
		// One token drained per Budget: a refusal of any call of two
		// tokens or more over the level advises more than the budget.
		cfg.PTU = 60 / (cfg.TokensPerPTU * j.Budget.Seconds())
	case ScenarioSpillover:
		cfg.SpilloverDeployment = SpilloverDeployment
	case ScenarioHeadersOnly:
		cfg.OmitRetryHeaders = true
	}
	if j.PTU > 0 {
		cfg.PTU = j.PTU
	}
	return cfg
}

// clip bounds a user's string in an error.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
