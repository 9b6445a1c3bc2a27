package sim

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	tests := []struct {
		name   string
		mut    func(*Config)
		fields []string // every problem, in order, by Go field name
		say    []string // what the reasons say, in the same order
	}{
		{"profile", func(c *Config) { c.Profile = "azure" }, []string{"Profile"}, []string{`"azure": want ptu, gateway or window`}},
		{"ptu", func(c *Config) { c.PTU = 0 }, []string{"PTU"}, []string{"0: want a number > 0"}},
		{"several at once", func(c *Config) { c.TimeScale = -1; c.FaultRate = 2; c.Faults = []string{"boom"} },
			[]string{"TimeScale", "FaultRate", "Faults"}, []string{"-1: want", "2: want 0..1", `unknown fault "boom"`}},
		{"spillover same name", func(c *Config) { c.SpilloverDeployment = c.Deployment },
			[]string{"SpilloverDeployment"}, []string{"must differ from {Deployment}"}},
		{"deployment with slash", func(c *Config) { c.Deployment = "a/b" }, []string{"Deployment"}, []string{`"a/b": name may hold only`}},
		{"negative latencies", func(c *Config) { c.TPOT = -time.Second; c.SlowDelay = -1 },
			[]string{"TPOT", "SlowDelay"}, []string{"-1s: must not be negative", "-1ns: must not be negative"}},
		// Issue 35: a ttft of 2562047h was accepted, and overflowed (a
		// request got a 200 in 0.74 ms); every duration is bounded.
		{"absurd durations", func(c *Config) {
			c.TTFT, c.TPOT, c.BucketDepth, c.BurstRefill = 2562047*time.Hour, 2*time.Minute, 2*time.Hour, 25*time.Hour
			c.SlowDelay, c.WitnessBudget, c.NeighbourEvery, c.ColdAfter = 2*time.Hour, 25*time.Hour, 25*time.Hour, 25*time.Hour
			c.NeighbourMin, c.NeighbourMax = time.Second, time.Second
		}, []string{"BucketDepth", "BurstRefill", "TTFT", "TPOT", "SlowDelay", "WitnessBudget", "NeighbourEvery", "ColdAfter"},
			[]string{"want > 0 and <= 1h0m0s", "want > 0 and <= 24h0m0s", "2562047h0m0s: want at most 1h0m0s", "2m0s: want at most 1m0s", "want at most 1h0m0s", "want at most 24h0m0s", "want at most 24h0m0s", "want at most 24h0m0s"}},
		{"dialect", func(c *Config) { c.Dialect = "klingon" }, []string{"Dialect"}, []string{`"klingon": want one of azure, openai, anthropic, ietf, gemini`}},
		{"ietf settings outside ietf", func(c *Config) { c.Dialect = DialectOpenAI; c.IETFRetryAfter = true; c.IETFLegacy = true },
			[]string{"IETFRetryAfter", "IETFLegacy"}, []string{"goes only with {Dialect} ietf", "goes only with {Dialect} ietf"}},
		{"retry-after both added and omitted", func(c *Config) { c.Dialect = DialectIETF; c.IETFRetryAfter = true; c.OmitRetryHeaders = true },
			[]string{"IETFRetryAfter"}, []string{"contradicts {OmitRetryHeaders}"}},
		{"gateway retry-after outside azure", func(c *Config) { c.Dialect = DialectAnthropic; c.GatewayRetryAfter = true },
			[]string{"GatewayRetryAfter"}, []string{"goes only with {Dialect} azure"}},
		{"gateway retry-after both added and omitted", func(c *Config) { c.GatewayRetryAfter = true; c.OmitRetryHeaders = true },
			[]string{"GatewayRetryAfter"}, []string{"contradicts {OmitRetryHeaders}"}},
		{"gateway ceilings", func(c *Config) { c.GatewayKeyRPS = 0; c.GatewayOrgs = 1001; c.MaxKeys = 0 },
			[]string{"GatewayKeyRPS", "GatewayOrgs", "MaxKeys"}, []string{"0: want >= 1", "1001: want 1..1000", "0: want 1..1000000"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			tc.mut(&cfg)
			err := cfg.Validate()
			if err == nil {
				t.Fatal("no error")
			}
			var fields, reasons []string
			for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
				var ve *valid.Error
				if !errors.As(e, &ve) {
					t.Fatalf("%v is not a *valid.Error", e)
				}
				fields, reasons = append(fields, ve.Field()), append(reasons, ve.Reason)
			}
			if !slices.Equal(fields, tc.fields) {
				t.Errorf("fields %q, want %q", fields, tc.fields)
			}
			for i, w := range tc.say {
				if i < len(reasons) && !strings.Contains(reasons[i], w) {
					t.Errorf("reason %q, want it to say %q", reasons[i], w)
				}
			}
			if _, err := New(cfg); err == nil {
				t.Error("New accepted an invalid config")
			}
		})
	}
}

func TestDrainAndCost(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	if got := cfg.DrainTokensPerSecond(); got < 7083 || got > 7084 {
		t.Errorf("drain %v, want 170 × 2,500 / 60", got)
	}
	if got := cfg.EstimatedCost(1000, 0, 100); got != 1300 {
		t.Errorf("estimate %v, want 1,300", got)
	}
}
