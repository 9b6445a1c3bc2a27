package cmd

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/sim"
)

// simValues are the values of every --sim-* flag of the named command
// after parsing args.
func simValues(t *testing.T, command string, args ...string) map[string]string {
	t.Helper()
	c, _, err := NewRootCommand().Find([]string{command})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ParseFlags(args); err != nil {
		t.Fatalf("%s %v: %v", command, args, err)
	}
	m := map[string]string{}
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if strings.HasPrefix(f.Name, "sim-") {
			m[f.Name] = f.Value.String()
		}
	})
	return m
}

// TestCharacterizeDefaultsToDocuments: characterize's simulator runs the
// documents profile unless told otherwise; --sim-profile ptu is the model
// of earlier releases; a flag given beside either overrides it, wherever
// it stands; the other commands keep ptu.
func TestCharacterizeDefaultsToDocuments(t *testing.T) {
	t.Parallel()
	docs, today := simDefaults(sim.DocumentsConfig(), "sim-"), simDefaults(sim.DefaultConfig(), "sim-")
	docs["sim-profile"] = sim.ProfileDocuments
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	for _, tc := range []struct {
		command string
		args    []string
		want    map[string]string
	}{
		{"characterize", nil, docs},
		{"characterize", []string{"--sim-profile", "documents"}, docs},
		{"characterize", []string{"--sim-profile", "ptu"}, today},
		{"characterize", []string{"--sim-ptu", "300", "--sim-profile", "ptu"}, with(today, "sim-ptu", "300")},
		{"characterize", []string{"--sim-profile", "ptu", "--sim-cold-drain-pct", "20"}, with(today, "sim-cold-drain-pct", "20")},
		{"characterize", []string{"--sim-ptu", "300"}, with(docs, "sim-ptu", "300")},
		{"characterize", []string{"--sim-profile", "window"}, with(today, "sim-profile", "window")},
		{"burst", nil, today},
		{"serve", nil, today},
	} {
		got := simValues(t, tc.command, tc.args...)
		for name, want := range tc.want {
			if got[name] != want {
				t.Errorf("%s %v: --%s is %q, want %q", tc.command, tc.args, name, got[name], want)
			}
		}
	}
	if docs["sim-cold-drain-pct"] == today["sim-cold-drain-pct"] || docs["sim-ptu"] == today["sim-ptu"] {
		t.Fatalf("the documents profile is today's model: %v", docs)
	}
}

// TestDocumentsFileIsItsFlags: every setting of sim/profiles/documents.json
// is a --sim-* flag, and the flags set from the file are DocumentsConfig.
func TestDocumentsFileIsItsFlags(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../sim/profiles/documents.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Settings map[string]json.RawMessage }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("documents", pflag.ContinueOnError)
	cfg := sim.DefaultConfig()
	addSimFlags(fs, &cfg, "sim-")
	for key, raw := range f.Settings {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		s, ok := v.(string)
		if !ok {
			s = strings.Trim(string(raw), `"`)
		}
		if s == "" && key == "faults" {
			continue // no faults: the flag's empty default
		}
		if err := fs.Set("sim-"+key, s); err != nil {
			t.Errorf("setting %q: %v", key, err)
		}
	}
	if want := sim.DocumentsConfig(); !reflect.DeepEqual(cfg, want) {
		t.Errorf("the file's settings give\n%+v\nDocumentsConfig is\n%+v", cfg, want)
	}
}
