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
	// as long as the command runs, shared with a neighbour whose batches
	// (StormNeighbour) make some refusals advise seconds.
	ScenarioStorm = "storm"
	// ScenarioLongWait advises waits longer than the Budget: a good
	// client gives up or redirects, neither early nor past its budget.
	ScenarioLongWait = "long-wait"
	// ScenarioSpillover is the storm with a standard deployment behind
	// the PTU one that serves what it refuses (Azure spillover).
	ScenarioSpillover = "spillover"
	// ScenarioHeadersOnly is the storm without retry-after and
	// retry-after-ms: the dialect's reset or RateLimit fields are the
	// only advice (not in azure, which has none, nor gemini, whose
	// RetryInfo is in the body and whose storm is headers-only already).
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
	// does not read the advice comes back early; StormNeighbour's batches
	// catch one whose backoff is seconds.
	DefaultStormPTU = 1
	// DefaultOwnerRetries bounds nothing: a client's own retry count is
	// no second owner (the SDKs retry 2 or 3 times, LangChain JS 6,
	// azure-core for Python 10, Portkey up to 5); --owner-retries N makes
	// a call retried after a wait more than N times a stack.
	DefaultOwnerRetries = 0
	// SpilloverDeployment is the standard deployment's name in the
	// spillover scenario.
	SpilloverDeployment = "sim-standard"
	// APIVersion is the OPENAI_API_VERSION the command is given.
	APIVersion = "2024-10-21"
)

// StormNeighbour is the storm's neighbour: from 3 s after the simulator
// starts and every 30 s, a batch of 5–17 s of drain. Refusals while one
// drains advise up to 17 s, past every SDK's own backoff (0.5–8 s,
// @google/genai's and Portkey's 1 s and up, Vercel ai's 2 s), so a
// client that ignores the header comes back early; the rest of the time
// they advise up to one call's drain (most of a second), as before. The
// documents' waits are bimodal: 93% within 60 ms, 7% of 5–17 s.
var StormNeighbour = sim.Neighbour{First: 3 * time.Second, Every: 30 * time.Second, Min: 5 * time.Second, Max: 17 * time.Second}

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
	// starts from (the referee's own variables replace theirs in it, and
	// every credential-like one is left out but those PassEnv names).
	Command []string
	Env     []string
	PassEnv []string
	// Stdin is what the command reads: passed through unless it is a
	// terminal (then nothing: a command in a process group of its own
	// that read the terminal would be stopped until the timeout).
	Stdin io.Reader
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
	// OwnerRetries, when > 0, is the most retries of one call, each
	// after a wait, that one retry owner makes; more count as a second
	// owner. 0 bounds nothing (DefaultOwnerRetries).
	OwnerRetries int

	// Sim, when set, is the simulator's model (a --sim-profile: a twin of
	// a measured deployment) in place of the scenario's: the scenario then
	// adds only its wire (spillover's standard deployment, headers-only's
	// missing retry headers), and Dialect, Seed, Budget and PTU still
	// apply.
	Sim *sim.Config

	// grace, when > 0, replaces killGrace; neighbour, when not nil, the
	// scenario's neighbour (tests: milliseconds, not seconds).
	grace     time.Duration
	neighbour *sim.Neighbour
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
	if j.Scenario == ScenarioHeadersOnly && (j.Dialect == sim.DialectAzure || j.Dialect == sim.DialectGemini) {
		return valid.Errorf("Scenario", "headers-only needs a dialect with reset or RateLimit fields: azure writes none, gemini advises only in the body, which the storm already is (use {Dialect} openai, anthropic or ietf)")
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
	if j.OwnerRetries < 0 {
		return valid.Errorf("OwnerRetries", "%d: want >= 1 (0: no bound)", j.OwnerRetries)
	}
	if err := validatePassEnv(j.PassEnv); err != nil {
		return err
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
	if j.Sim != nil {
		return j.profileConfig()
	}
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
		cfg.SetNeighbour(StormNeighbour)
	case ScenarioHeadersOnly:
		cfg.OmitRetryHeaders = true
		cfg.SetNeighbour(StormNeighbour)
	default:
		cfg.SetNeighbour(StormNeighbour)
	}
	if j.neighbour != nil && cfg.Neighbour().On() {
		cfg.SetNeighbour(*j.neighbour)
	}
	if j.PTU > 0 {
		cfg.PTU = j.PTU
	}
	return cfg
}

// profileConfig is the simulator of Sim with the scenario's wire.
func (j *Job) profileConfig() sim.Config {
	cfg := *j.Sim
	cfg.Dialect, cfg.Seed, cfg.WitnessBudget, cfg.TimeScale = j.Dialect, j.Seed, j.Budget, 1
	switch j.Scenario {
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
