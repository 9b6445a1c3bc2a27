package cmd

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/report"
)

// shownTypes are the flag types whose values report.html shows: a number,
// a duration or a switch can name no target and carry no text.
var shownTypes = map[string]bool{
	"bool": true, "count": true, "duration": true, "float64": true,
	"int": true, "int64": true, "uint": true, "uint64": true,
}

// shownWords are the flags of other types whose values report.html shows:
// each is checked against a fixed vocabulary or grammar (a rate, a plan, a
// policy spec) before anything is sent, so it can carry no free text; a
// phase is shown without its name. Every other flag given — an endpoint,
// a URL, a deployment, a model, a header, a body, a label, a threshold
// (which may name a raw group), a path, an address, a time — is named in
// report.html without its value.
var shownWords = map[string]bool{
	"api": true, "arrival": true, "columns": true, "group-by": true, "max-tokens-field": true,
	"phase": true, "policy": true, "rate": true, "shard": true, "load": true, "clients": true,
	"sim-dialect": true, "sim-faults": true, "sim-profile": true,
}

// reportSettings lists the flags given on the command line for the
// settings section of report.html, in name order: the value of each flag
// shownTypes or shownWords allows, one row per value of a repeated flag;
// the others withheld.
func reportSettings(fs *pflag.FlagSet) []report.Setting {
	var out []report.Setting
	fs.Visit(func(f *pflag.Flag) {
		name := "--" + f.Name
		switch {
		case f.Name == "help":
		case shownTypes[f.Value.Type()] || shownWords[f.Name]:
			for _, v := range flagValues(f) {
				out = append(out, report.Setting{Name: name, Value: v})
			}
		default:
			out = append(out, report.Setting{Name: name, Withheld: true})
		}
	})
	return out
}

// flagValues are the values of f: each of a repeatable flag's, a phase
// without its name.
func flagValues(f *pflag.Flag) []string {
	vals := []string{f.Value.String()}
	if s, ok := f.Value.(pflag.SliceValue); ok && f.Value.Type() == "stringArray" {
		vals = s.GetSlice()
	}
	if f.Name == "phase" {
		for i, v := range vals {
			if _, plan, ok := strings.Cut(v, ":"); ok {
				vals[i] = plan
			}
		}
	}
	return vals
}
