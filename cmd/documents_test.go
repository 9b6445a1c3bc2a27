package cmd

import (
	"reflect"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/sim"
)

// resolvedSim is the simulator's settings of the named command after
// parsing args and reading the profile --sim-profile names.
func resolvedSim(t *testing.T, command string, args ...string) sim.Config {
	t.Helper()
	c, _, err := NewRootCommand().Find([]string{command})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ParseFlags(args); err != nil {
		t.Fatalf("%s %v: %v", command, args, err)
	}
	p := c.Flags().Lookup("sim-profile").Value.(*simProfile)
	if err := p.resolve(); err != nil {
		t.Fatalf("%s %v: %v", command, args, err)
	}
	return *p.c
}

// TestCharacterizeDefaultsToDocuments: characterize's simulator runs the
// embedded documents profile unless told otherwise; --sim-profile ptu is
// the model of earlier releases; a flag given beside either overrides it,
// wherever it stands; the other commands keep ptu.
func TestCharacterizeDefaultsToDocuments(t *testing.T) {
	t.Parallel()
	prof, err := sim.OpenProfile(sim.ProfileDocuments)
	if err != nil {
		t.Fatal(err)
	}
	docs, today := prof.Config, sim.DefaultConfig()
	if docs.ColdDrainPct == today.ColdDrainPct || docs.PTU == today.PTU {
		t.Fatalf("the documents profile is today's model: %+v", docs)
	}
	with := func(c sim.Config, set func(*sim.Config)) sim.Config { set(&c); return c }
	for _, tc := range []struct {
		command string
		args    []string
		want    sim.Config
	}{
		{"characterize", nil, docs},
		{"characterize", []string{"--sim-profile", "documents"}, docs},
		{"characterize", []string{"--sim-profile", "ptu"}, today},
		{"characterize", []string{"--sim-ptu", "300", "--sim-profile", "ptu"}, with(today, func(c *sim.Config) { c.PTU = 300 })},
		{"characterize", []string{"--sim-profile", "ptu", "--sim-cold-drain-pct", "20"}, with(today, func(c *sim.Config) { c.ColdDrainPct = 20 })},
		{"characterize", []string{"--sim-ptu", "300"}, with(docs, func(c *sim.Config) { c.PTU = 300 })},
		{"characterize", []string{"--sim-cold-after", "1m"}, with(docs, func(c *sim.Config) { c.ColdAfter = time.Minute })},
		{"characterize", []string{"--sim-profile", "window"}, with(today, func(c *sim.Config) { c.Profile = sim.ProfileWindow })},
		{"burst", nil, today},
		{"serve", nil, today},
	} {
		if got := resolvedSim(t, tc.command, tc.args...); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %v:\n got %+v\nwant %+v", tc.command, tc.args, got, tc.want)
		}
	}
	c, _, _ := NewRootCommand().Find([]string{"characterize"})
	if d := c.Flags().Lookup("sim-profile").DefValue; d != sim.ProfileDocuments {
		t.Errorf("characterize --help: --sim-profile's default is %q", d)
	}
}
