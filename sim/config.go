package sim

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Profiles.
const (
	ProfilePTU     = "ptu"
	ProfileGateway = "gateway"
)

// Defaults of the model; DefaultConfig uses them and the package doc
// explains the arithmetic behind the PTU ones.
const (
	DefaultDeployment    = "sim-ptu"
	DefaultPTU           = 170
	DefaultTokensPerPTU  = 2500 // published gpt-4o input tokens per PTU per minute
	DefaultOutputWeight  = 3
	DefaultBucketDepth   = time.Second
	DefaultBurstPct      = 175
	DefaultBurstRefill   = 5 * time.Minute
	DefaultMaxTokens     = 256
	DefaultTTFT          = 200 * time.Millisecond
	DefaultTPOT          = 8 * time.Millisecond
	DefaultSlowDelay     = 5 * time.Second
	DefaultStandardTPM   = 60_000
	DefaultStandardRPM   = 360
	DefaultGatewayKeyRPS = 20
	DefaultGatewayKeyTPM = 500_000
	DefaultGatewayOrgRPS = 200
	DefaultGatewayOrgTPM = 5_000_000
	DefaultGatewayOrgs   = 1
	DefaultMaxKeys       = 1024
	DefaultSeed          = 1
	MaxOutputTokens      = 16_384 // larger max_tokens is a 400, as on the service
	maxRequestBody       = 4 << 20
)

// Config is everything the simulator needs. The zero value is not useful;
// start from DefaultConfig.
type Config struct {
	// Profile is "ptu" (an Azure OpenAI provisioned deployment) or
	// "gateway" (an API gateway with per-key and per-organization ceilings).
	Profile string
	// Deployment is the PTU deployment's name in Azure routes.
	Deployment string

	// PTU is the number of provisioned throughput units deployed.
	PTU float64
	// TokensPerPTU is input-token throughput per PTU per minute.
	TokensPerPTU float64
	// OutputWeight is how many input tokens one output token weighs.
	OutputWeight float64
	// BucketDepth is how much work 100% utilization holds, in seconds of
	// drain: capacity = DrainTokensPerSecond × BucketDepth.
	BucketDepth time.Duration
	// BurstPct is the burst allowance: a deployment over 100% still admits
	// requests while their cost fits in BurstPct% of capacity not yet spent.
	BurstPct float64
	// BurstRefill is how long a fully spent allowance takes to come back.
	BurstRefill time.Duration
	// DefaultMaxTokens is the output budget assumed when a request sets
	// neither max_tokens nor max_completion_tokens.
	DefaultMaxTokens int

	// TTFT and TPOT make latency: TTFT + completion tokens × TPOT.
	TTFT, TPOT time.Duration
	// TimeScale runs the model clock that many times faster than the wall
	// clock (real clock only); advised waits are converted back to wall time.
	TimeScale float64
	// Seed makes completion lengths and faults reproducible.
	Seed int64

	// FaultRate is the share of requests answered with an injected fault.
	FaultRate float64
	// Faults lists the fault kinds to draw from (see ParseFaults).
	Faults []string
	// SlowDelay is the extra delay of the "slow" fault.
	SlowDelay time.Duration

	// SpilloverDeployment names a standard deployment that serves what the
	// PTU deployment would refuse; empty means no spillover.
	SpilloverDeployment string
	// SpilloverPerRequest limits spillover to requests that carry
	// x-ms-spillover-deployment (the per-request opt-in).
	SpilloverPerRequest bool
	// StandardTPM and StandardRPM are the standard deployment's limits.
	StandardTPM, StandardRPM int

	// UtilizationHeader adds azure-openai-deployment-utilization.
	UtilizationHeader bool
	// RequireKey answers 401 to requests without api-key / Bearer / x-api-key.
	RequireKey bool

	// Gateway ceilings: per key and per organization, requests per second
	// and tokens per minute.
	GatewayKeyRPS, GatewayKeyTPM int
	GatewayOrgRPS, GatewayOrgTPM int
	// GatewayOrgs is how many organizations keys are spread over.
	GatewayOrgs int
	// GatewayRetryAfter adds retry-after to gateway refusals.
	GatewayRetryAfter bool
	// MaxKeys bounds the distinct keys tracked, so memory stays flat.
	MaxKeys int

	// Clock is the model clock; nil means the wall clock run TimeScale
	// times faster.
	Clock Clock
}

// DefaultConfig returns the zero-config simulator: a 170-PTU gpt-4o-like
// deployment whose 429s, under the default burst and schedule plans, have
// a short median and a long tail (see the package doc).
func DefaultConfig() Config {
	return Config{
		Profile:           ProfilePTU,
		Deployment:        DefaultDeployment,
		PTU:               DefaultPTU,
		TokensPerPTU:      DefaultTokensPerPTU,
		OutputWeight:      DefaultOutputWeight,
		BucketDepth:       DefaultBucketDepth,
		BurstPct:          DefaultBurstPct,
		BurstRefill:       DefaultBurstRefill,
		DefaultMaxTokens:  DefaultMaxTokens,
		TTFT:              DefaultTTFT,
		TPOT:              DefaultTPOT,
		TimeScale:         1,
		Seed:              DefaultSeed,
		SlowDelay:         DefaultSlowDelay,
		StandardTPM:       DefaultStandardTPM,
		StandardRPM:       DefaultStandardRPM,
		GatewayKeyRPS:     DefaultGatewayKeyRPS,
		GatewayKeyTPM:     DefaultGatewayKeyTPM,
		GatewayOrgRPS:     DefaultGatewayOrgRPS,
		GatewayOrgTPM:     DefaultGatewayOrgTPM,
		GatewayOrgs:       DefaultGatewayOrgs,
		GatewayRetryAfter: false,
		MaxKeys:           DefaultMaxKeys,
	}
}

// DrainTokensPerSecond is the PTU bucket's drain rate in weighted tokens
// per second of model time: PTU × TokensPerPTU / 60. The sustainable
// request rate is DrainTokensPerSecond() / cost per request.
func (c Config) DrainTokensPerSecond() float64 {
	return c.PTU * c.TokensPerPTU / 60
}

// CapacityTokens is the bucket level that makes 100% utilization.
func (c Config) CapacityTokens() float64 {
	return c.DrainTokensPerSecond() * c.BucketDepth.Seconds()
}

// EstimatedCost is the weighted cost the PTU model charges on arrival for
// a request of promptTokens (cachedTokens of them cached) and maxTokens.
func (c Config) EstimatedCost(promptTokens, cachedTokens, maxTokens int) float64 {
	return float64(promptTokens-cachedTokens) + c.OutputWeight*float64(maxTokens)
}

// Validate reports every problem of c, one line each.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch c.Profile {
	case ProfilePTU, ProfileGateway:
	default:
		bad("profile %q: want %s or %s", c.Profile, ProfilePTU, ProfileGateway)
	}
	if err := checkDeploymentName(c.Deployment); err != nil {
		bad("deployment: %v", err)
	}
	if !(c.PTU > 0) || c.PTU > 1e6 {
		bad("ptu %v: want a number > 0 and <= 1e6", c.PTU)
	}
	if !(c.TokensPerPTU > 0) || c.TokensPerPTU > 1e9 {
		bad("tokens-per-ptu %v: want a number > 0 and <= 1e9", c.TokensPerPTU)
	}
	if !(c.OutputWeight >= 0) || c.OutputWeight > 1000 {
		bad("output-weight %v: want 0..1000", c.OutputWeight)
	}
	if c.BucketDepth <= 0 {
		bad("bucket-depth %v: want > 0", c.BucketDepth)
	}
	if !(c.BurstPct >= 0) || c.BurstPct > 10000 {
		bad("burst-pct %v: want 0..10000", c.BurstPct)
	}
	if c.BurstRefill <= 0 {
		bad("burst-refill %v: want > 0", c.BurstRefill)
	}
	if c.DefaultMaxTokens < 1 || c.DefaultMaxTokens > MaxOutputTokens {
		bad("default-max-tokens %d: want 1..%d", c.DefaultMaxTokens, MaxOutputTokens)
	}
	if c.TTFT < 0 || c.TPOT < 0 || c.SlowDelay < 0 {
		bad("ttft, tpot and fault-slow must not be negative")
	}
	if !(c.TimeScale > 0) || c.TimeScale > 1e6 {
		bad("time-scale %v: want a number > 0 and <= 1e6", c.TimeScale)
	}
	if !(c.FaultRate >= 0 && c.FaultRate <= 1) {
		bad("fault-rate %v: want 0..1", c.FaultRate)
	}
	for _, f := range c.Faults {
		if !knownFault(f) {
			bad("faults: unknown fault %q (known: %s)", f, strings.Join(AllFaults(), ","))
		}
	}
	if c.SpilloverDeployment != "" {
		if err := checkDeploymentName(c.SpilloverDeployment); err != nil {
			bad("spillover-deployment: %v", err)
		} else if c.SpilloverDeployment == c.Deployment {
			bad("spillover-deployment must differ from the PTU deployment")
		}
	}
	if c.StandardTPM < 1 || c.StandardRPM < 1 {
		bad("standard-tpm and standard-rpm must be >= 1")
	}
	if c.GatewayKeyRPS < 1 || c.GatewayKeyTPM < 1 || c.GatewayOrgRPS < 1 || c.GatewayOrgTPM < 1 {
		bad("gateway ceilings must be >= 1")
	}
	if c.GatewayOrgs < 1 || c.GatewayOrgs > 1000 {
		bad("gateway-orgs %d: want 1..1000", c.GatewayOrgs)
	}
	if c.MaxKeys < 1 || c.MaxKeys > 1_000_000 {
		bad("max-keys %d: want 1..1000000", c.MaxKeys)
	}
	return errors.Join(errs...)
}

func checkDeploymentName(s string) error {
	if s == "" {
		return errors.New("empty name")
	}
	if len(s) > 64 {
		return errors.New("name longer than 64 characters")
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return errors.New("name may hold only letters, digits, '-', '_' and '.'")
		}
	}
	return nil
}

// AddFlags registers the model's flags on fs, bound to c, each name
// prefixed by prefix: `serve` uses "", commands that also have client
// flags of the same name (--seed, --time-scale) use "sim-".
func (c *Config) AddFlags(fs *pflag.FlagSet, prefix string) {
	n := func(name string) string { return prefix + name }
	fs.StringVar(&c.Profile, n("profile"), c.Profile, "simulator profile: ptu (Azure OpenAI provisioned deployment) or gateway (per-key/per-org ceilings)")
	fs.StringVar(&c.Deployment, n("deployment"), c.Deployment, "name of the simulated PTU deployment")
	fs.Float64Var(&c.PTU, n("ptu"), c.PTU, "provisioned throughput units deployed")
	fs.Float64Var(&c.TokensPerPTU, n("tokens-per-ptu"), c.TokensPerPTU, "input tokens per PTU per minute")
	fs.Float64Var(&c.OutputWeight, n("output-weight"), c.OutputWeight, "input tokens one output token weighs")
	fs.DurationVar(&c.BucketDepth, n("bucket-depth"), c.BucketDepth, "work that makes 100% utilization, in time of drain")
	fs.Float64Var(&c.BurstPct, n("burst-pct"), c.BurstPct, "burst allowance over 100% utilization, percent of capacity (spent, then earned back)")
	fs.DurationVar(&c.BurstRefill, n("burst-refill"), c.BurstRefill, "time for a fully spent burst allowance to come back")
	fs.IntVar(&c.DefaultMaxTokens, n("default-max-tokens"), c.DefaultMaxTokens, "output budget assumed when a request sets no max_tokens")
	fs.DurationVar(&c.TTFT, n("ttft"), c.TTFT, "time to first token")
	fs.DurationVar(&c.TPOT, n("tpot"), c.TPOT, "time per output token")
	fs.Float64Var(&c.TimeScale, n("time-scale"), c.TimeScale, "run the model clock this many times faster than the wall clock")
	fs.Int64Var(&c.Seed, n("seed"), c.Seed, "seed for completion lengths and faults")
	fs.Float64Var(&c.FaultRate, n("fault-rate"), c.FaultRate, "share of requests (0..1) answered with an injected fault")
	fs.Var(&faultsValue{c: c}, n("faults"), "faults to inject, comma-separated: "+strings.Join(AllFaults(), ",")+" (default all)")
	fs.DurationVar(&c.SlowDelay, n("fault-slow"), c.SlowDelay, "extra delay of the slow fault")
	fs.StringVar(&c.SpilloverDeployment, n("spillover-deployment"), c.SpilloverDeployment, "add a standard deployment that serves what the PTU deployment would refuse")
	fs.BoolVar(&c.SpilloverPerRequest, n("spillover-per-request"), c.SpilloverPerRequest, "spill only requests that carry x-ms-spillover-deployment")
	fs.IntVar(&c.StandardTPM, n("standard-tpm"), c.StandardTPM, "standard deployment: estimated tokens per minute")
	fs.IntVar(&c.StandardRPM, n("standard-rpm"), c.StandardRPM, "standard deployment: requests per minute, enforced per second (RPM/60)")
	fs.BoolVar(&c.UtilizationHeader, n("utilization-header"), c.UtilizationHeader, "add azure-openai-deployment-utilization to responses")
	fs.BoolVar(&c.RequireKey, n("require-key"), c.RequireKey, "answer 401 to requests without an API key")
	fs.IntVar(&c.GatewayKeyRPS, n("gateway-key-rps"), c.GatewayKeyRPS, "gateway: requests per second per key")
	fs.IntVar(&c.GatewayKeyTPM, n("gateway-key-tpm"), c.GatewayKeyTPM, "gateway: tokens per minute per key")
	fs.IntVar(&c.GatewayOrgRPS, n("gateway-org-rps"), c.GatewayOrgRPS, "gateway: requests per second per organization")
	fs.IntVar(&c.GatewayOrgTPM, n("gateway-org-tpm"), c.GatewayOrgTPM, "gateway: tokens per minute per organization")
	fs.IntVar(&c.GatewayOrgs, n("gateway-orgs"), c.GatewayOrgs, "gateway: organizations keys are spread over (by a hash of the key)")
	fs.BoolVar(&c.GatewayRetryAfter, n("gateway-retry-after"), c.GatewayRetryAfter, "gateway: add retry-after to refusals")
	fs.IntVar(&c.MaxKeys, n("max-keys"), c.MaxKeys, "distinct API keys tracked (further keys: 403 on the gateway, not counted per key on ptu)")
}

// faultsValue is the pflag.Value of --faults; it parses as it is set so a
// typo is a usage error naming the flag.
type faultsValue struct{ c *Config }

func (v *faultsValue) String() string {
	if v == nil || v.c == nil {
		return ""
	}
	return strings.Join(v.c.Faults, ",")
}

func (v *faultsValue) Set(s string) error {
	f, err := ParseFaults(s)
	if err != nil {
		return err
	}
	v.c.Faults = f
	return nil
}

func (v *faultsValue) Type() string { return "list" }
