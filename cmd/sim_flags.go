package cmd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/internal/tokenize"
	"github.com/ptuprobe/ptuprobe/sim"
)

// simFlags names the flag of each sim.Config field, by the field's Go
// name: addSimFlags registers these names and simFlagName renders a
// Validate error with them.
var simFlags = map[string]string{
	"Profile":             "profile",
	"Dialect":             "dialect",
	"OmitRetryHeaders":    "omit-retry-headers",
	"IETFRetryAfter":      "ietf-retry-after",
	"IETFLegacy":          "ietf-legacy",
	"Deployment":          "deployment",
	"PTU":                 "ptu",
	"TokensPerPTU":        "tokens-per-ptu",
	"OutputWeight":        "output-weight",
	"BucketDepth":         "bucket-depth",
	"BurstPct":            "burst-pct",
	"BurstRefill":         "burst-refill",
	"DefaultMaxTokens":    "default-max-tokens",
	"TTFT":                "ttft",
	"TPOT":                "tpot",
	"TimeScale":           "time-scale",
	"Seed":                "seed",
	"FaultRate":           "fault-rate",
	"Faults":              "faults",
	"SlowDelay":           "fault-slow",
	"SpilloverDeployment": "spillover-deployment",
	"SpilloverPerRequest": "spillover-per-request",
	"StandardTPM":         "standard-tpm",
	"StandardRPM":         "standard-rpm",
	"UtilizationHeader":   "utilization-header",
	"RequireKey":          "require-key",
	"GatewayKeyRPS":       "gateway-key-rps",
	"GatewayKeyTPM":       "gateway-key-tpm",
	"GatewayOrgRPS":       "gateway-org-rps",
	"GatewayOrgTPM":       "gateway-org-tpm",
	"GatewayOrgs":         "gateway-orgs",
	"GatewayRetryAfter":   "gateway-retry-after",
	"WindowSize":          "window-size",
	"WindowLimit":         "window-limit",
	"WitnessBudget":       "witness-budget",
	"NeighbourFirst":      "neighbour-first",
	"NeighbourEvery":      "neighbour-every",
	"NeighbourMin":        "neighbour-min",
	"NeighbourMax":        "neighbour-max",
	"ColdDrainPct":        "cold-drain-pct",
	"ColdAfter":           "cold-after",
	"MaxKeys":             "max-keys",
	"RefusalCost":         "refusal-cost",
	"Tokens":              "tokenizer",
}

// simFlagName is the flag that sets the sim.Config field named field:
// "PTU" is --sim-ptu under prefix "sim-" (every command's). A field with
// no flag keeps its Go name.
func simFlagName(prefix, field string) string {
	if name, ok := simFlags[field]; ok {
		return "--" + prefix + name
	}
	return field
}

// simFlagNames names every sim.Config field by its flag under prefix, for
// settingError.
func simFlagNames(prefix string) flagNames {
	m := make(flagNames, len(simFlags))
	for field := range simFlags {
		m[field] = simFlagName(prefix, field)
	}
	return m
}

// addSimFlags registers the simulator's flags on fs, bound to c, each
// name prefixed by prefix: "sim-" on every command (serve's old bare names
// are aliases, cmd/aliases.go), as the traffic commands have client flags
// of the same names (--seed, --deployment). Each is annotated so help
// lists it once, in 'ptuprobe help simulator'.
func addSimFlags(fs *pflag.FlagSet, c *sim.Config, prefix string) *simProfile {
	n := func(field string) string { return prefix + simFlags[field] }
	p := &simProfile{fs: fs, c: c, prefix: prefix, name: c.Profile}
	fs.Var(p, n("Profile"), "simulator profile: ptu (Azure OpenAI provisioned deployment), gateway (per-key/per-org ceilings), window (a fixed-window limiter, as express-rate-limit and most API gateways), "+namedProfiles()+"or a profile file ('ptuprobe fit' writes one: a twin of a measured deployment); --sim-* flags given beside a profile override its settings")
	fs.StringVar(&c.Dialect, n("Dialect"), c.Dialect, "whose wire to speak: "+strings.Join(sim.AllDialects(), ", ")+" (request paths, rate-limit headers, error bodies; the admission model is the same)")
	fs.BoolVar(&c.OmitRetryHeaders, n("OmitRetryHeaders"), c.OmitRetryHeaders, "leave retry-after and retry-after-ms off 429s: the dialect's rate-limit headers are their only advice")
	fs.BoolVar(&c.IETFRetryAfter, n("IETFRetryAfter"), c.IETFRetryAfter, "ietf dialect: add Retry-After to 429s")
	fs.BoolVar(&c.IETFLegacy, n("IETFLegacy"), c.IETFLegacy, "ietf dialect: write the older drafts' RateLimit-Limit/-Remaining/-Reset instead of RateLimit and RateLimit-Policy")
	fs.StringVar(&c.Deployment, n("Deployment"), c.Deployment, "name of the simulated PTU deployment")
	fs.Float64Var(&c.PTU, n("PTU"), c.PTU, "provisioned throughput units deployed")
	fs.Float64Var(&c.TokensPerPTU, n("TokensPerPTU"), c.TokensPerPTU, "input tokens per PTU per minute")
	fs.Float64Var(&c.OutputWeight, n("OutputWeight"), c.OutputWeight, "input tokens one output token weighs")
	fs.DurationVar(&c.BucketDepth, n("BucketDepth"), c.BucketDepth, "work that makes 100% utilization, in time of drain")
	fs.Float64Var(&c.BurstPct, n("BurstPct"), c.BurstPct, "burst allowance over 100% utilization, percent of capacity (spent, then earned back)")
	fs.DurationVar(&c.BurstRefill, n("BurstRefill"), c.BurstRefill, "time for a fully spent burst allowance to come back")
	fs.IntVar(&c.DefaultMaxTokens, n("DefaultMaxTokens"), c.DefaultMaxTokens, "output budget assumed when a request sets no max_tokens")
	fs.DurationVar(&c.TTFT, n("TTFT"), c.TTFT, "time to first token of a 1,000-token prompt on an idle deployment (longer prompts, and prompts queued behind others, wait longer)")
	fs.DurationVar(&c.TPOT, n("TPOT"), c.TPOT, "time per output token far from saturation (with more answers in flight than the deployment decodes at this pace, each gets its share)")
	fs.Float64Var(&c.TimeScale, n("TimeScale"), c.TimeScale, "run the model clock this many times faster than the wall clock (at most "+strconv.Itoa(sim.MaxTimeScale)+": faster, the wall clock's own milliseconds distort the model)")
	fs.Int64Var(&c.Seed, n("Seed"), c.Seed, "seed for completion lengths and faults")
	fs.Float64Var(&c.FaultRate, n("FaultRate"), c.FaultRate, "share of requests (0..1) answered with an injected fault")
	fs.Var(&faultsValue{c: c}, n("Faults"), "faults to inject, comma-separated: "+strings.Join(sim.AllFaults(), ",")+" (default all)")
	fs.DurationVar(&c.SlowDelay, n("SlowDelay"), c.SlowDelay, "extra delay of the slow fault")
	fs.StringVar(&c.SpilloverDeployment, n("SpilloverDeployment"), c.SpilloverDeployment, "add a standard deployment that serves what the PTU deployment would refuse")
	fs.BoolVar(&c.SpilloverPerRequest, n("SpilloverPerRequest"), c.SpilloverPerRequest, "spill only requests that carry x-ms-spillover-deployment")
	fs.IntVar(&c.StandardTPM, n("StandardTPM"), c.StandardTPM, "standard deployment: estimated tokens per minute")
	fs.IntVar(&c.StandardRPM, n("StandardRPM"), c.StandardRPM, "standard deployment: requests per minute, enforced per second (RPM/60)")
	fs.BoolVar(&c.UtilizationHeader, n("UtilizationHeader"), c.UtilizationHeader, "add azure-openai-deployment-utilization to responses")
	fs.BoolVar(&c.RequireKey, n("RequireKey"), c.RequireKey, "answer 401 to requests without an API key")
	fs.IntVar(&c.GatewayKeyRPS, n("GatewayKeyRPS"), c.GatewayKeyRPS, "gateway: requests per second per key")
	fs.IntVar(&c.GatewayKeyTPM, n("GatewayKeyTPM"), c.GatewayKeyTPM, "gateway: tokens per minute per key")
	fs.IntVar(&c.GatewayOrgRPS, n("GatewayOrgRPS"), c.GatewayOrgRPS, "gateway: requests per second per organization")
	fs.IntVar(&c.GatewayOrgTPM, n("GatewayOrgTPM"), c.GatewayOrgTPM, "gateway: tokens per minute per organization")
	fs.IntVar(&c.GatewayOrgs, n("GatewayOrgs"), c.GatewayOrgs, "gateway: organizations keys are spread over (by a hash of the key)")
	fs.BoolVar(&c.GatewayRetryAfter, n("GatewayRetryAfter"), c.GatewayRetryAfter, "gateway, azure dialect: add retry-after to refusals")
	fs.DurationVar(&c.WindowSize, n("WindowSize"), c.WindowSize, "window: the fixed window's length")
	fs.IntVar(&c.WindowLimit, n("WindowLimit"), c.WindowLimit, "window: requests admitted per window")
	fs.DurationVar(&c.WitnessBudget, n("WitnessBudget"), c.WitnessBudget, "witness: count retries that came back more than this after their refusal as over budget (0: off)")
	fs.DurationVar(&c.NeighbourEvery, n("NeighbourEvery"), c.NeighbourEvery, "ptu: a neighbour's batch every this often, taken whatever the utilization (0: no neighbour)")
	fs.DurationVar(&c.NeighbourFirst, n("NeighbourFirst"), c.NeighbourFirst, "ptu: the neighbour's first batch this long after the simulator starts")
	fs.DurationVar(&c.NeighbourMin, n("NeighbourMin"), c.NeighbourMin, "ptu: the neighbour's smallest batch, in time of drain")
	fs.DurationVar(&c.NeighbourMax, n("NeighbourMax"), c.NeighbourMax, "ptu: the neighbour's largest batch, in time of drain (sizes uniform, seeded)")
	fs.Float64Var(&c.ColdDrainPct, n("ColdDrainPct"), c.ColdDrainPct, "ptu: the drain a cold deployment forecasts the waits it advises at, percent of its drain (0: off, the drain itself)")
	fs.DurationVar(&c.ColdAfter, n("ColdAfter"), c.ColdAfter, "ptu: a deployment that has completed no request for this long is cold (with --sim-cold-drain-pct)")
	fs.Float64Var(&c.RefusalCost, n("RefusalCost"), c.RefusalCost, "the capacity each refusal takes, a fraction 0..1 of a request's (0.02: 2%), as a gateway that tokenizes a prompt to estimate its cost spends work on every refusal (0: refusals are free)")
	fs.IntVar(&c.MaxKeys, n("MaxKeys"), c.MaxKeys, "distinct API keys tracked (further keys: 403 on the gateway, not counted per key on ptu)")
	fs.Var(&tokenizerValue{c: c}, n("Tokens"), "the vocabulary prompts are counted in, as the deployment counts them: "+tokenize.O200kBase+", "+tokenize.Cl100kBase+" (with the chat format's overhead, 4 a message and 3) or "+simChars+" (4 characters a token, no overhead); default: serve counts in its deployment name's vocabulary (o200k_base for gpt-4o names and most others), a traffic command's embedded simulator as its client counts")
	for field := range simFlags {
		_ = fs.SetAnnotation(n(field), simAnnotation, []string{"true"})
	}
	return p
}

// namedProfiles lists the embedded profiles for --sim-profile's help.
func namedProfiles() string {
	if names := sim.ProfileNames()[3:]; len(names) > 0 {
		return "a named profile (" + strings.Join(names, ", ") + "), "
	}
	return ""
}

// simProfile is --sim-profile's value: a limiter profile sets
// Config.Profile as it is parsed; a named profile or a file is read by
// resolve, once every flag is parsed, so that the --sim-* flags given
// beside it override its settings wherever they stand on the line.
type simProfile struct {
	fs      *pflag.FlagSet
	c       *sim.Config
	prefix  string
	name    string
	pending bool
	given   bool // named on the command line, not a default
}

func (p *simProfile) String() string {
	if p == nil {
		return ""
	}
	return p.name
}

func (p *simProfile) Set(s string) error {
	if err := sim.AmbiguousProfile(s); err != nil {
		return err
	}
	p.name, p.pending, p.given = s, !sim.IsLimiterProfile(s), true
	if !p.pending {
		p.c.Profile = s
	}
	return nil
}

func (p *simProfile) Type() string { return "name|file" }

// defaultTo makes the named profile --sim-profile's default: read by
// resolve unless the line names another, the --sim-* flags given beside
// it overriding its settings as they override any profile's. Naming a
// limiter profile (ptu: the model of earlier releases) reads nothing.
func (p *simProfile) defaultTo(name string) {
	p.name, p.pending = name, true
	p.fs.Lookup(p.prefix + simFlags["Profile"]).DefValue = name
}

// resolve reads the profile --sim-profile names, if it names one, into
// the Config, then sets again every other --sim-* flag given: they
// override the profile. It is done once; a bad profile is a usage error.
func (p *simProfile) resolve() error {
	if p == nil || !p.pending {
		return nil
	}
	p.pending = false
	// A default (defaultTo) is the built-in of that name, whatever files
	// the working directory holds; a name given on the line is checked
	// against them (sim.AmbiguousProfile).
	prof, err := sim.OpenProfile(p.name)
	if !p.given {
		prof, _, err = sim.OpenBuiltin(p.name)
	}
	if err != nil {
		return usageError("--%s%s: %v", p.prefix, simFlags["Profile"], err)
	}
	given := map[string]string{}
	for field, name := range simFlags {
		if f := p.fs.Lookup(p.prefix + name); f != nil && f.Changed && field != "Profile" {
			given[f.Name] = f.Value.String()
		}
	}
	*p.c = prof.Config
	for name, v := range given {
		if err := p.fs.Set(name, v); err != nil {
			return usageError("--%s: %v", name, err)
		}
	}
	return nil
}

// faultsValue is the pflag.Value of --faults; it parses as it is set so a
// typo is a usage error naming the flag.
// simChars is --sim-tokenizer's name of the rule of 4 characters a token.
const simChars = "chars"

// tokenizerValue is --sim-tokenizer: a vocabulary's name, or simChars.
type tokenizerValue struct {
	c    *sim.Config
	name string
}

func (v *tokenizerValue) String() string {
	if v == nil {
		return ""
	}
	return v.name
}

func (v *tokenizerValue) Set(s string) error {
	if s == simChars {
		v.c.Tokens, v.name = sim.Chars, s
		return nil
	}
	tok, err := tokenize.Get(s)
	if err != nil {
		return fmt.Errorf("want %s, %s or %s", tokenize.O200kBase, tokenize.Cl100kBase, simChars)
	}
	v.c.Tokens, v.name = tok, s
	return nil
}

func (v *tokenizerValue) Type() string { return "name" }

type faultsValue struct{ c *sim.Config }

func (v *faultsValue) String() string {
	if v == nil || v.c == nil {
		return ""
	}
	return strings.Join(v.c.Faults, ",")
}

func (v *faultsValue) Set(s string) error {
	f, err := sim.ParseFaults(s)
	if err != nil {
		return err
	}
	v.c.Faults = f
	return nil
}

func (v *faultsValue) Type() string { return "list" }
