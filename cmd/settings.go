package cmd

import (
	"errors"
	"strings"

	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/schedule"
)

// flagNames maps the Go field names that domain packages put in their
// *valid.Error to this command's flag names.
type flagNames map[string]string

// name returns the flag for field, or the field itself for one the map
// does not know (then the message still reads, and a test catches it).
func (m flagNames) name(field string) string {
	if f, ok := m[field]; ok {
		return f
	}
	return field
}

// settingError turns a domain package's refusal into the usage error the
// user sees: every *valid.Error in err (errors.Join may hold several) is
// rendered with flag names, problems separated by "; ". An err holding no
// *valid.Error is returned as a usage error as it is; nil stays nil.
func settingError(err error, names flagNames) error {
	if err == nil {
		return nil
	}
	var parts []string
	collectSettings(err, names, &parts)
	if len(parts) == 0 {
		return asUsage(err)
	}
	return usageError("%s", strings.Join(parts, "; "))
}

func collectSettings(err error, names flagNames, parts *[]string) {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		if _, isSetting := err.(*valid.Error); !isSetting {
			for _, e := range joined.Unwrap() {
				collectSettings(e, names, parts)
			}
			return
		}
	}
	var v *valid.Error
	if errors.As(err, &v) {
		*parts = append(*parts, v.Render(names.name))
	}
}

// merge returns the union of maps (later ones win).
func merge(maps ...flagNames) flagNames {
	out := flagNames{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// isSetting reports whether err holds a *valid.Error: a setting out of
// range, for settingError to name its flag.
func isSetting(err error) bool {
	var v *valid.Error
	return errors.As(err, &v)
}

// rateSearchNames are the flags calibrate's grid and capacity's ramp
// share: the rates, their factor and bisections, the caps.
var rateSearchNames = flagNames{
	"MinRate": "--min-rate", "MaxRate": "--max-rate", "Factor": "--factor", "Depth": "--depth",
	"MaxRequests": "--max-requests", "MaxInFlight": "--max-in-flight",
}

// parseRateRange reads --min-rate and --max-rate (calibrate's grid,
// capacity's ramp) as schedule reads a rate.
func parseRateRange(minRate, maxRate string) (lo, hi float64, err error) {
	if lo, err = schedule.ParseRate(minRate); err != nil {
		return 0, 0, usageError("--min-rate: %v", err)
	}
	if hi, err = schedule.ParseRate(maxRate); err != nil {
		return 0, 0, usageError("--max-rate: %v", err)
	}
	return lo, hi, nil
}
