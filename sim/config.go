package sim

import (
	"errors"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// Profiles.
const (
	ProfilePTU     = "ptu"
	ProfileGateway = "gateway"
	// ProfileWindow is a fixed-window limiter: WindowRequests requests per
	// clock-aligned window of WindowSize, a refusal advising the window's
	// end (what express-rate-limit and most API gateways do). Admitted
	// requests are answered as the PTU profile answers them.
	ProfileWindow = "window"
)

// Dialects: how the simulator writes its answers (Config.Dialect). The
// admission model is the same in each; only the request paths, the
// rate-limit headers and the error bodies change (see the package doc).
const (
	DialectAzure     = "azure"
	DialectOpenAI    = "openai"
	DialectAnthropic = "anthropic"
	DialectIETF      = "ietf"
	DialectGemini    = "gemini"
)

// AllDialects lists every dialect, in a stable order.
func AllDialects() []string {
	return []string{DialectAzure, DialectOpenAI, DialectAnthropic, DialectIETF, DialectGemini}
}

func knownDialect(s string) bool {
	for _, d := range AllDialects() {
		if s == d {
			return true
		}
	}
	return false
}

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
	DefaultWindowSize    = 10 * time.Second
	DefaultWindowLimit   = 50
	DefaultSeed          = 1
	MaxOutputTokens      = 16_384 // larger max_tokens is a 400, as on the service
	maxRequestBody       = 4 << 20
)

// MaxTimeScale bounds Config.TimeScale on the real clock. One millisecond
// of wall time — the resolution of retry-after-ms, and about a loopback
// round trip on a busy machine — is TimeScale milliseconds of model time:
// at 100 it is half the default TTFT. Faster, the wall clock's own costs
// become the model's: measured on two cores, the default burst's 429s
// thin out from 150 and are gone at 500, and the policy lab's ranking
// drifts from 100 until, at 10⁴, every request times out.
const MaxTimeScale = 100

// Config is everything the simulator needs. The zero value is not useful;
// start from DefaultConfig.
type Config struct {
	// Profile is "ptu" (an Azure OpenAI provisioned deployment) or
	// "gateway" (an API gateway with per-key and per-organization ceilings).
	Profile string
	// Dialect is whose wire the simulator speaks: azure (the default),
	// openai, anthropic, ietf or gemini. It decides the request paths, the
	// rate-limit headers and the error bodies; the admission model stays.
	Dialect string
	// OmitRetryHeaders leaves retry-after and retry-after-ms off every 429,
	// so the dialect's rate-limit fields are its only advice (azure: none).
	OmitRetryHeaders bool
	// IETFRetryAfter adds Retry-After to the ietf dialect's 429s.
	IETFRetryAfter bool
	// IETFLegacy writes the older drafts' RateLimit-Limit, RateLimit-Remaining
	// and RateLimit-Reset instead of RateLimit and RateLimit-Policy.
	IETFLegacy bool
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

	// TTFT and TPOT are the time to first token of a 1,000-token prompt
	// (PrefillRefTokens) on an idle deployment and the time per output
	// token far from saturation: a whole answer takes TTFT + completion
	// tokens × TPOT there; longer prompts, a prompt queue and many
	// answers in flight take longer (the package doc, "Timing").
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
	// OnlyKey, when not empty, is the one key the simulator accepts: a
	// request that carries another in any header a key is read from
	// (api-key, x-api-key, x-goog-api-key, Authorization: Bearer), or no
	// key at all, is answered 401 in the dialect's envelope (gemini: 400
	// API key not valid, as Google answers) before its body is read, and
	// counted in Stats.ForeignKeys. The referee sets its throwaway key
	// here, so a client that sends a stale real key is noticed. The key
	// is compared, never written, logged or kept in Stats.
	OnlyKey string

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
	// WindowSize and WindowLimit are the window profile's limiter:
	// WindowLimit requests per clock-aligned window of WindowSize.
	WindowSize  time.Duration
	WindowLimit int

	// NeighbourFirst, NeighbourEvery, NeighbourMin and NeighbourMax are
	// another tenant of the PTU deployment, whose batches make the long
	// waits of a shared deployment: see Neighbour (off while
	// NeighbourEvery is 0).
	NeighbourFirst, NeighbourEvery time.Duration
	NeighbourMin, NeighbourMax     time.Duration

	// ColdDrainPct and ColdAfter are the drain a cold PTU deployment
	// forecasts for the waits it advises, as a percentage of its drain,
	// and how long without a completed request makes it cold: see Cold
	// (off while ColdDrainPct is 0).
	ColdDrainPct float64
	ColdAfter    time.Duration

	// RefusalCost is the capacity a refusal takes, as a fraction (0..1)
	// of the refused request's: a gateway that must tokenize a prompt to
	// estimate its cost spends work on every request it refuses (see the
	// package doc, "What a refusal costs"). 0, the default: a refusal is
	// free.
	RefusalCost float64

	// WitnessBudget, when > 0, is a client's latency budget in wall time:
	// the witness counts retries that came back more than WitnessBudget
	// after the refusal they answer (Stats.OverBudget), early or on time:
	// a client that slept past its budget instead of giving up or
	// redirecting.
	WitnessBudget time.Duration

	// Clock is the model clock; nil means the wall clock run TimeScale
	// times faster.
	Clock Clock

	// Tokens counts a prompt's text in tokens, as the deployment's
	// tokenizer does (with the chat format's overhead on the chat and
	// Responses routes: 4 a message and 3 for the reply); nil (or Chars)
	// keeps the rule of 4 characters a token, with no overhead. Like
	// Clock it is wired in, not a setting of a profile: the commands give
	// it the vocabulary the client counts in (--sim-tokenizer).
	Tokens TokenCounter

	// ProfileSource names the profile these settings were read from (a
	// named profile, or a profile file's base name; OpenProfile), and Fit
	// how well they reproduce the recorded run they were fitted to: the
	// policy lab recommends nothing from a poor fit. Both are empty for
	// settings given by flags alone; neither changes the model.
	ProfileSource string
	Fit           *Fit
}

// DefaultConfig returns the zero-config simulator: a 170-PTU gpt-4o-like
// deployment whose 429s, under the default burst and schedule plans, have
// a short median and a long tail (see the package doc).
func DefaultConfig() Config {
	return Config{
		Profile:           ProfilePTU,
		Dialect:           DialectAzure,
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
		WindowSize:        DefaultWindowSize,
		WindowLimit:       DefaultWindowLimit,
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

// Validate reports every problem of c, each a *valid.Error naming the
// field (its Go name: "PTU", "TimeScale"), joined with errors.Join. The
// reasons name no flags: the command line names its own.
func (c Config) Validate() error {
	var p problems
	c.checkWire(p.bad)
	c.checkModel(p.bad)
	c.checkFaults(p.bad)
	c.checkLimits(p.bad)
	return errors.Join(p...)
}

// Bounds of the durations a Config may carry (a profile file or a
// --sim-* flag sets them): past them a model time would overflow, or a
// request would wait longer than any client waits (client.MaxTimeout is
// 1h). Each mechanism's own tighter bound (WindowSize, the neighbour's
// batches, the cold forecast's ColdAfter: 1h) is checked beside these.
const (
	// MaxTTFT bounds TTFT, and MaxTPOT TPOT: MaxOutputTokens at MaxTPOT
	// is some 11 days, far inside a time.Duration.
	MaxTTFT = time.Hour
	MaxTPOT = time.Minute
	// MaxBucketDepth bounds BucketDepth, MaxSlowDelay SlowDelay.
	MaxBucketDepth = time.Hour
	MaxSlowDelay   = time.Hour
	// MaxPeriod bounds the settings of a longer period: BurstRefill, the
	// neighbour's schedule, the cold forecast's ColdAfter, WitnessBudget.
	MaxPeriod = 24 * time.Hour
)

// problems gathers a Config's problems, in the order Validate finds them.
type problems []error

func (p *problems) bad(field, format string, a ...any) {
	*p = append(*p, valid.Errorf(field, format, a...))
}

// checkWire checks what the simulator speaks: its profile, dialect,
// headers and deployment name.
func (c Config) checkWire(bad func(field, format string, a ...any)) {
	switch c.Profile {
	case ProfilePTU, ProfileGateway:
	case ProfileWindow:
		if c.WindowSize < time.Millisecond || c.WindowSize > time.Hour {
			bad("WindowSize", "%v: want 1ms..1h", c.WindowSize)
		}
		if c.WindowLimit < 1 || c.WindowLimit > 1_000_000 {
			bad("WindowLimit", "%d: want 1..1000000", c.WindowLimit)
		}
	default:
		bad("Profile", "%q: want %s, %s or %s", truncateForError(c.Profile), ProfilePTU, ProfileGateway, ProfileWindow)
	}
	if !knownDialect(c.Dialect) {
		bad("Dialect", "%q: want one of %s", truncateForError(c.Dialect), strings.Join(AllDialects(), ", "))
	}
	if c.IETFRetryAfter && c.Dialect != DialectIETF {
		bad("IETFRetryAfter", "goes only with {Dialect} %s", DialectIETF)
	}
	if c.IETFLegacy && c.Dialect != DialectIETF {
		bad("IETFLegacy", "goes only with {Dialect} %s", DialectIETF)
	}
	if c.IETFRetryAfter && c.OmitRetryHeaders {
		bad("IETFRetryAfter", "contradicts {OmitRetryHeaders}")
	}
	if c.GatewayRetryAfter && c.Dialect != DialectAzure {
		bad("GatewayRetryAfter", "goes only with {Dialect} %s: the other dialects write retry-after as their services do", DialectAzure)
	} else if c.GatewayRetryAfter && c.OmitRetryHeaders {
		bad("GatewayRetryAfter", "contradicts {OmitRetryHeaders}")
	}
	if err := checkDeploymentName(c.Deployment); err != nil {
		bad("Deployment", "%q: %v", truncateForError(c.Deployment), err)
	}
}

// checkModel checks the PTU model's settings and its clock.
func (c Config) checkModel(bad func(field, format string, a ...any)) {
	if !(c.PTU > 0) || c.PTU > 1e6 {
		bad("PTU", "%v: want a number > 0 and <= 1e6", c.PTU)
	}
	if !(c.TokensPerPTU > 0) || c.TokensPerPTU > 1e9 {
		bad("TokensPerPTU", "%v: want a number > 0 and <= 1e9", c.TokensPerPTU)
	}
	if !(c.OutputWeight >= 0) || c.OutputWeight > 1000 {
		bad("OutputWeight", "%v: want 0..1000", c.OutputWeight)
	}
	if c.BucketDepth <= 0 || c.BucketDepth > MaxBucketDepth {
		bad("BucketDepth", "%v: want > 0 and <= %v", c.BucketDepth, MaxBucketDepth)
	}
	if !(c.BurstPct >= 0) || c.BurstPct > 10000 {
		bad("BurstPct", "%v: want 0..10000", c.BurstPct)
	}
	if c.BurstRefill <= 0 || c.BurstRefill > MaxPeriod {
		bad("BurstRefill", "%v: want > 0 and <= %v", c.BurstRefill, MaxPeriod)
	}
	if c.DefaultMaxTokens < 1 || c.DefaultMaxTokens > MaxOutputTokens {
		bad("DefaultMaxTokens", "%d: want 1..%d", c.DefaultMaxTokens, MaxOutputTokens)
	}
	for _, d := range []struct {
		field    string
		v, limit time.Duration
		own      bool // the mechanism's own check refuses a negative value
	}{
		{"TTFT", c.TTFT, MaxTTFT, false}, {"TPOT", c.TPOT, MaxTPOT, false}, {"SlowDelay", c.SlowDelay, MaxSlowDelay, false},
		{"WitnessBudget", c.WitnessBudget, MaxPeriod, false}, {"NeighbourFirst", c.NeighbourFirst, MaxPeriod, true},
		{"NeighbourEvery", c.NeighbourEvery, MaxPeriod, true}, {"NeighbourMin", c.NeighbourMin, MaxPeriod, true},
		{"ColdAfter", c.ColdAfter, MaxPeriod, true},
	} {
		switch {
		case d.v < 0 && !d.own:
			bad(d.field, "%v: must not be negative", d.v)
		case d.v > d.limit:
			bad(d.field, "%v: want at most %v", d.v, d.limit)
		}
	}
	c.Neighbour().check(bad)
	if c.Neighbour().On() && c.Profile != ProfilePTU {
		bad("NeighbourEvery", "goes only with {Profile} %s: the neighbour is a tenant of the PTU deployment", ProfilePTU)
	}
	c.Cold().check(bad)
	if c.Cold().On() && c.Profile != ProfilePTU {
		bad("ColdDrainPct", "goes only with {Profile} %s: the forecast is the PTU deployment's", ProfilePTU)
	}
	if !(c.TimeScale > 0) || c.TimeScale > MaxTimeScale {
		bad("TimeScale", "%v: want a number > 0 and <= %d (faster, one millisecond of wall time, the resolution of an advised wait, is more than %d ms of the model)", c.TimeScale, MaxTimeScale, MaxTimeScale)
	}
}

// checkFaults checks the injected faults.
func (c Config) checkFaults(bad func(field, format string, a ...any)) {
	if !(c.FaultRate >= 0 && c.FaultRate <= 1) {
		bad("FaultRate", "%v: want 0..1", c.FaultRate)
	}
	if !(c.RefusalCost >= 0 && c.RefusalCost <= 1) {
		bad("RefusalCost", "%v: want a fraction 0..1 of a request (0.02: 2%%)", c.RefusalCost)
	}
	for _, f := range c.Faults {
		if !knownFault(f) {
			bad("Faults", "has unknown fault %q (known: %s)", truncateForError(f), strings.Join(AllFaults(), ","))
		}
	}
}

// checkLimits checks the standard deployment (spillover) and the limits
// of it and of the gateway.
func (c Config) checkLimits(bad func(field, format string, a ...any)) {
	if c.SpilloverDeployment != "" {
		if err := checkDeploymentName(c.SpilloverDeployment); err != nil {
			bad("SpilloverDeployment", "%q: %v", truncateForError(c.SpilloverDeployment), err)
		} else if c.SpilloverDeployment == c.Deployment {
			bad("SpilloverDeployment", "%q: must differ from {Deployment}", c.SpilloverDeployment)
		}
	}
	for _, n := range []struct {
		field string
		v     int
	}{
		{"StandardTPM", c.StandardTPM}, {"StandardRPM", c.StandardRPM},
		{"GatewayKeyRPS", c.GatewayKeyRPS}, {"GatewayKeyTPM", c.GatewayKeyTPM},
		{"GatewayOrgRPS", c.GatewayOrgRPS}, {"GatewayOrgTPM", c.GatewayOrgTPM},
	} {
		if n.v < 1 {
			bad(n.field, "%d: want >= 1", n.v)
		}
	}
	if c.GatewayOrgs < 1 || c.GatewayOrgs > 1000 {
		bad("GatewayOrgs", "%d: want 1..1000", c.GatewayOrgs)
	}
	if c.MaxKeys < 1 || c.MaxKeys > 1_000_000 {
		bad("MaxKeys", "%d: want 1..1000000", c.MaxKeys)
	}
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
