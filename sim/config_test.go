package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	tests := []struct {
		name string
		mut  func(*Config)
		want []string
	}{
		{"profile", func(c *Config) { c.Profile = "azure" }, []string{`profile "azure"`}},
		{"ptu", func(c *Config) { c.PTU = 0 }, []string{"ptu 0"}},
		{"several at once", func(c *Config) { c.TimeScale = -1; c.FaultRate = 2; c.Faults = []string{"boom"} }, []string{"time-scale", "fault-rate", `unknown fault "boom"`}},
		{"spillover same name", func(c *Config) { c.SpilloverDeployment = c.Deployment }, []string{"must differ"}},
		{"deployment with slash", func(c *Config) { c.Deployment = "a/b" }, []string{"deployment:"}},
		{"negative latency", func(c *Config) { c.TPOT = -time.Second }, []string{"must not be negative"}},
	}
	for _, tc := range tests {
		cfg := DefaultConfig()
		tc.mut(&cfg)
		err := cfg.Validate()
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != len(tc.want) {
			t.Errorf("%s: %d lines %q, want %d", tc.name, len(lines), lines, len(tc.want))
		}
		for i, w := range tc.want {
			if i < len(lines) && !strings.Contains(lines[i], w) {
				t.Errorf("%s: line %q, want it to mention %q", tc.name, lines[i], w)
			}
		}
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted an invalid config", tc.name)
		}
	}
}

func TestAddFlags(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{"", "sim-"} {
		cfg := DefaultConfig()
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		cfg.AddFlags(fs, prefix)
		args := []string{"--" + prefix + "ptu=50", "--" + prefix + "faults=503,reset", "--" + prefix + "time-scale=10", "--" + prefix + "spillover-deployment=std", "--" + prefix + "profile=gateway"}
		if err := fs.Parse(args); err != nil {
			t.Fatalf("prefix %q: %v", prefix, err)
		}
		if cfg.PTU != 50 || strings.Join(cfg.Faults, ",") != "503,reset" || cfg.TimeScale != 10 || cfg.SpilloverDeployment != "std" || cfg.Profile != ProfileGateway {
			t.Errorf("prefix %q: %+v", prefix, cfg)
		}
		if err := fs.Parse([]string{"--" + prefix + "faults=nope"}); err == nil || !strings.Contains(err.Error(), "unknown fault") {
			t.Errorf("prefix %q: bad --faults accepted: %v", prefix, err)
		}
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
