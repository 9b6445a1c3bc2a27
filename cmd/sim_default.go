package cmd

import (
	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/sim"
)

// simDefaults are the text of every --sim-* flag's default when the flags
// are bound to cfg, by flag name.
func simDefaults(cfg sim.Config, prefix string) map[string]string {
	fs := pflag.NewFlagSet("defaults", pflag.ContinueOnError)
	addSimFlags(fs, &cfg, prefix)
	m := map[string]string{}
	fs.VisitAll(func(f *pflag.Flag) { m[f.Name] = f.DefValue })
	return m
}

// defaultSimProfile makes the simulator of the command whose flags fs
// holds run the named profile's settings unless told otherwise: every
// --sim-* flag whose default the profile changes defaults to the
// profile's, and --sim-profile defaults to the profile's name. Naming a
// limiter profile (ptu, gateway, window) puts today's defaults back on
// every flag not given, so --sim-profile ptu is the model of earlier
// releases; naming the profile itself keeps its settings. Flags given
// beside it override either, wherever they stand on the line.
func defaultSimProfile(fs *pflag.FlagSet, prefix, name string, profile sim.Config) {
	today, theirs := simDefaults(sim.DefaultConfig(), prefix), simDefaults(profile, prefix)
	pf := fs.Lookup(prefix + simFlags["Profile"])
	changed := map[string]bool{}
	for n, v := range theirs {
		if f := fs.Lookup(n); f != nil && f != pf && v != today[n] {
			// The text is the flag's own rendering of the profile's value,
			// so it sets it back (TestCharacterizeDefaultsToDocuments).
			_ = f.Value.Set(v)
			f.DefValue, changed[n] = v, true
		}
	}
	pf.Value = &profileChoice{Value: pf.Value, fs: fs, pf: pf, name: name, limiter: profile.Profile, changed: changed, profile: theirs, today: today}
	pf.DefValue = name
}

// profileChoice is --sim-profile where it defaults to a profile of
// settings (defaultSimProfile).
type profileChoice struct {
	pflag.Value // the limiter profile's own flag value
	fs          *pflag.FlagSet
	pf          *pflag.Flag
	name        string // the default profile's name
	limiter     string // its limiter profile
	chosen      string
	changed     map[string]bool   // the flags whose defaults the profile sets
	profile     map[string]string // their values under the profile
	today       map[string]string // and today
}

func (p *profileChoice) String() string {
	if p.chosen == "" {
		return p.name
	}
	return p.chosen
}

func (p *profileChoice) Set(s string) error {
	switch s {
	case p.name:
		p.restore(p.profile)
		p.chosen = s
		return p.Value.Set(p.limiter)
	case sim.ProfilePTU, sim.ProfileGateway, sim.ProfileWindow:
		p.restore(p.today)
	}
	p.chosen = s
	return p.Value.Set(s)
}

// restore sets every flag the profile changed, and the line has not
// given, to its value in to.
func (p *profileChoice) restore(to map[string]string) {
	for n := range p.changed {
		if f := p.fs.Lookup(n); f != nil && !f.Changed {
			_ = f.Value.Set(to[n])
		}
	}
}
