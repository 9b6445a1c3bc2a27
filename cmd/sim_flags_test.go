package cmd

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/sim"
)

func TestSimFlagsSetTheConfig(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{"", "sim-"} {
		t.Run("prefix "+prefix, func(t *testing.T) {
			t.Parallel()
			cfg := sim.DefaultConfig()
			fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
			addSimFlags(fs, &cfg, prefix)
			args := []string{"--" + prefix + "ptu=50", "--" + prefix + "faults=503,reset", "--" + prefix + "time-scale=10", "--" + prefix + "spillover-deployment=std", "--" + prefix + "profile=gateway", "--" + prefix + "fault-slow=2s"}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			if cfg.PTU != 50 || strings.Join(cfg.Faults, ",") != "503,reset" || cfg.TimeScale != 10 || cfg.SpilloverDeployment != "std" || cfg.Profile != sim.ProfileGateway || cfg.SlowDelay != 2*time.Second {
				t.Errorf("%+v", cfg)
			}
			if err := fs.Parse([]string{"--" + prefix + "faults=nope"}); err == nil || !strings.Contains(err.Error(), "unknown fault") {
				t.Errorf("bad --faults accepted: %v", err)
			}
		})
	}
}

// TestEverySimConfigFieldHasAFlag: every field a user sets (all but the
// injected Clock; OnlyKey, the referee's throwaway key: a key on a
// command line would show in ps and the shell's history; and the
// profile's source and fit, which --sim-profile reads from its file) has
// a flag, and
// every flag name in the table is registered, so simFlagName can name
// any field Validate refuses.
func TestEverySimConfigFieldHasAFlag(t *testing.T) {
	t.Parallel()
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	cfg := sim.DefaultConfig()
	addSimFlags(fs, &cfg, "sim-")
	typ := reflect.TypeFor[sim.Config]()
	for i := range typ.NumField() {
		field := typ.Field(i).Name
		if field == "Clock" || field == "OnlyKey" || field == "ProfileSource" || field == "Fit" {
			continue
		}
		if name := simFlagName("sim-", field); fs.Lookup(strings.TrimPrefix(name, "--")) == nil {
			t.Errorf("field %s: flag %s is not registered", field, name)
		}
	}
	n := 0
	fs.VisitAll(func(*pflag.Flag) { n++ })
	if n != len(simFlags) {
		t.Errorf("%d flags registered, %d in simFlags", n, len(simFlags))
	}
}

// TestSimValidateErrorsNameRegisteredFlags builds configs with every field
// bad and checks that each field a Validate error names, as the refused
// setting or inside its reason, renders as a flag that exists.
func TestSimValidateErrorsNameRegisteredFlags(t *testing.T) {
	t.Parallel()
	allBad := sim.Config{
		Profile: "azure", Deployment: "a/b", PTU: 0, TokensPerPTU: -1, OutputWeight: -1,
		BucketDepth: 0, BurstPct: -1, BurstRefill: 0, DefaultMaxTokens: 0,
		TTFT: -1, TPOT: -1, TimeScale: 0, FaultRate: 2, Faults: []string{"teapot"}, SlowDelay: -1,
		SpilloverDeployment: "b/c", StandardTPM: 0, StandardRPM: 0,
		GatewayKeyRPS: 0, GatewayKeyTPM: 0, GatewayOrgRPS: 0, GatewayOrgTPM: 0, GatewayOrgs: 0, MaxKeys: 0,
	}
	sameSpillover := sim.DefaultConfig()
	sameSpillover.SpilloverDeployment = sameSpillover.Deployment
	configs := []struct {
		name   string
		cfg    sim.Config
		fields int // at least this many distinct fields refused
	}{
		{"every field bad", allBad, 24},
		{"spillover names the deployment", sameSpillover, 1},
	}
	for _, tc := range configs {
		for _, prefix := range []string{"", "sim-"} {
			t.Run(tc.name+"/prefix "+prefix, func(t *testing.T) {
				t.Parallel()
				fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
				cfg := sim.DefaultConfig()
				addSimFlags(fs, &cfg, prefix)
				err := tc.cfg.Validate()
				joined, ok := err.(interface{ Unwrap() []error })
				if !ok {
					t.Fatalf("Validate = %v; want joined errors", err)
				}
				refused := map[string]bool{}
				for _, e := range joined.Unwrap() {
					var ve *valid.Error
					if !errors.As(e, &ve) {
						t.Fatalf("%v is not a *valid.Error", e)
					}
					refused[ve.Field()] = true
					line := ve.Render(func(field string) string {
						name := simFlagName(prefix, field)
						if !strings.HasPrefix(name, "--"+prefix) || fs.Lookup(strings.TrimPrefix(name, "--")) == nil {
							t.Errorf("field %s renders as %q, not a registered flag", field, name)
						}
						return name
					})
					if strings.Contains(line, "{") {
						t.Errorf("unrendered field in %q", line)
					}
				}
				if len(refused) < tc.fields {
					t.Errorf("%d fields refused, want at least %d: %v", len(refused), tc.fields, refused)
				}
			})
		}
	}
}

// TestSimProblemsOnOneLine: serve and the traffic commands print every
// problem of the simulator's settings on one line, naming their flags.
func TestSimProblemsOnOneLine(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "results.csv") // never written: the settings are refused first
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--sim-ptu", "0", "--sim-spillover-deployment", "sim-ptu", "--sim-tpot", "-1s"},
			`ptuprobe: --sim-ptu 0: want a number > 0 and <= 1e6; --sim-tpot -1s: must not be negative; --sim-spillover-deployment "sim-ptu": must differ from --sim-deployment` + "\n"},
		{[]string{"burst", "-o", out, "--sim-time-scale", "0", "--sim-gateway-orgs", "0"},
			"ptuprobe: --sim-time-scale 0: want a number > 0 and <= 100 (faster, one millisecond of wall time, the resolution of an advised wait, is more than 100 ms of the model); --sim-gateway-orgs 0: want 1..1000\n"},
		// policies divides its plans by the scale: the scale is named, not
		// the --burst-gap it would turn negative.
		{[]string{"policies", "--out-dir", out, "--sim-time-scale", "-1"}, "ptuprobe: --sim-time-scale -1: want a number > 0 and <= 100 (faster, one millisecond of wall time, the resolution of an advised wait, is more than 100 ms of the model)\n"},
		{[]string{"policies", "--out-dir", out, "--sim-time-scale", "1e5"}, "ptuprobe: --sim-time-scale 100000: want a number > 0 and <= 100 (faster, one millisecond of wall time, the resolution of an advised wait, is more than 100 ms of the model)\n"},
		{[]string{"serve", "--sim-time-scale", "101"}, "ptuprobe: --sim-time-scale 101: want a number > 0 and <= 100 (faster, one millisecond of wall time, the resolution of an advised wait, is more than 100 ms of the model)\n"},
	}
	for _, tc := range tests {
		code, _, stderr := runCLI(context.Background(), tc.args...)
		if code != ExitUsage || stderr != tc.want {
			t.Errorf("%v: exit %d, stderr\n%q\nwant exit %d and\n%q", tc.args, code, stderr, ExitUsage, tc.want)
		}
	}
}
