package cmd

import (
	"fmt"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/sim"
)

// The help topics hold what several commands share, once: 'ptuprobe help
// simulator' and 'ptuprobe help fleet'. Each command's help refers to
// them in one line.

func init() {
	register(func() *cobra.Command {
		return &cobra.Command{Use: "simulator", Short: "The embedded simulator and its --sim-* flags", Long: simulatorTopic()}
	})
	register(func() *cobra.Command {
		return &cobra.Command{Use: "fleet", Short: "N workers sending one plan: --shard, --start-at, --coordinate", Long: fleetHelp}
	})
	register(func() *cobra.Command {
		return &cobra.Command{Use: "client-policies", Short: "The built-in client policies of policies and --policy", Long: policyList()}
	})
}

// refusalCostHelp is the simulator topic's paragraph on what a refusal
// costs.
const refusalCostHelp = `
A refusal is free unless --sim-refusal-cost F (a fraction, 0.02 = 2%) says
otherwise: each refusal then takes F of the refused request's capacity, as
a gateway that tokenizes a prompt to estimate its cost spends work on
every refusal (sim/doc.go, "What a refusal costs"; no source gives F, so
the default is 0 and the policy lab's grid varies it).

`

// simulatorTopic is simulatorHelp's text, written once a process: the
// root command is built on every run (each test of cmd's builds it several
// times), and the topic's flag set and wrapping were a third of that.
var simulatorTopic = sync.OnceValue(simulatorHelp)

// simulatorHelp is the simulator topic: what it is, then every --sim-*
// flag in full.
func simulatorHelp() string {
	var b strings.Builder
	b.WriteString(`With no --endpoint or --url, burst, schedule, characterize, calibrate and
policies send to an embedded simulator on loopback (capacity runs it in
process, on a virtual clock), so ptuprobe works with no credentials;
'ptuprobe serve' runs the same simulator alone. The
--sim-* flags tune it, on every one of these commands and on serve alike.

Profiles (--sim-profile): ptu, an Azure OpenAI provisioned deployment under
the documented admission model (utilization as a leaky bucket; 429 with
retry-after-ms when over 100%); gateway, an API gateway with per-key and
per-organization ceilings; window, a fixed-window limiter. Or a profile of
settings: a named one shipped in the binary, or a file — 'ptuprobe fit'
writes one, a twin of a measured deployment fitted to its recorded run
(docs/fit.md). A value with a '/' is a file; a built-in's name that is
also a file in the working directory is refused (give ./NAME for the
file); a profile file must be a regular file, at most 1 MiB, and every
duration in it is bounded (ttft at most 1h, tpot 1m, bucket-depth 1h, the
longer periods 24h), as the --sim-* flags are. Every --sim-* flag given
beside a profile overrides its setting; policies recommends nothing from a
profile whose fit is poor or insufficient.
referee takes --sim-profile too, in place of its scenario's model.

Dialects (--sim-dialect), the same admission model on another vendor's
wire: azure (retry-after-ms and retry-after), openai (/v1/chat/completions,
x-ratelimit-*), anthropic (/v1/messages, anthropic-ratelimit-*), ietf
(RateLimit-Policy and RateLimit), gemini (RetryInfo in the 429 body).
--sim-omit-retry-headers leaves retry-after and retry-after-ms off, so the
dialect's rate-limit headers are the only advice. sim/doc.go gives the
model's arithmetic.

characterize runs the documents profile unless told otherwise: the PTU
model fitted to the published waits (scripts/documents-profile.sh), whose
cold forecast (--sim-cold-drain-pct, --sim-cold-after) advises the first
wave that overruns a rested deployment seconds, and every later refusal one
request's overshoot; --sim-profile ptu is the model of earlier releases.
The other commands run ptu.

Tokens and time: a prompt costs its tokens in --sim-tokenizer's vocabulary
(with the chat format's 4 tokens a message and 3), or 4 characters a token.
An answer's first token comes --sim-ttft after a 1,000-token prompt on an
idle deployment, later for a longer prompt (prefill at 100 tokens/s a PTU)
and for prompts queued before it; its tokens come --sim-tpot apart until
more answers are in flight than the deployment decodes at that pace
(its drain over --sim-output-weight, in output tokens/s), then each gets its
share. A stream sends each chunk when its last token is decoded.
` + refusalCostHelp + `Flags:
`)
	fs := pflag.NewFlagSet("simulator", pflag.ContinueOnError)
	cfg := sim.DefaultConfig()
	addSimFlags(fs, &cfg, "sim-")
	fs.VisitAll(func(f *pflag.Flag) {
		var line strings.Builder
		writeFlag(&line, f, true)
		b.WriteString(line.String())
	})
	return b.String()
}

// fleetHelp is the fleet topic: how N workers send one plan, and the
// clock-sync assumption.
var fleetHelp = fmt.Sprintf(`Fleet runs: N workers given the same flags, each its own --shard I/N (or
/N with %s set, as in a Kubernetes Indexed Job), and one
--start-at, send one plan together (burst, schedule, characterize): every
worker computes the whole plan and sends the arrivals whose index is I mod
N, each at --start-at + its offset, so a burst wave still leaves at one
instant and a schedule's rate is the sum. seq is the arrival's index in
the whole plan and the worker column says who sent it: 'ptuprobe analyze'
over every worker's results gives the fleet's table (--group-by worker
splits it by worker). A characterize worker's OUT-DIR holds its own share
and the report of it.

Each worker reads --start-at on its own clock, so the machines' clocks
must agree (NTP; a clock off by d sends its whole share d early or late).
A worker that begins more than %s after --start-at refuses to run;
--start-at may be at most %s ahead. --max-requests bounds the whole plan
(every worker refuses the same plan), not one worker's share. With
--start-at, each plan after the first starts at its place in the plan (a
burst one gap after its last wave, a schedule after its duration), not
when its last answer came; a wave that waits for answers
(--burst-wait-wave) is refused.

--coordinate redis://HOST:PORT/DB shares the retry owner's cooldown, slots
and pace between the workers (and any process naming the same target),
through Redis. It is checked before any traffic: a Redis that refuses the
password or cannot serve as named (a database it lacks, rediss:// to a
plaintext Redis) is exit 2. A Redis that fails later (down, slower than
--coordinate-timeout, 50ms, a call, or answering what no Redis would)
leaves each decision to the worker's own state. deploy/kubernetes runs
such a fleet as an Indexed Job.

  ptuprobe characterize --shard 1/4 --start-at 2026-05-01T12:00:00Z --out-dir worker-1
  ptuprobe analyze worker-*/results.csv --out-dir fleet

'ptuprobe policies --coordinate redis://HOST:PORT/DB' makes each client of
the lab's fleet a process of its own (its own cooldown, slots and pace),
and runs every policy with a cooldown, slots or a pace twice on the same
arrivals: alone, and coordinated, its clients sharing that state through
Redis (the password from the variable --coordinate-password-env names).
Redis keeps wall time, so these runs go in real time, each on a fresh
embedded simulator on loopback, a few at a time: not byte-reproducible.
policies.md compares each pair with the claim that coordination halves the
429s per success with no fewer successes and no starved client.

  ptuprobe policies --policy slots --policy pace --clients 4 --load 3x --coordinate redis://127.0.0.1:6379/0`,
	completionIndexEnv, campaign.Roughly(campaign.StartTolerance), campaign.Roughly(campaign.MaxStartAhead))
