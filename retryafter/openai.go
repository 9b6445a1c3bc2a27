package retryafter

import (
	"net/http"
	"strconv"

	"github.com/ptuprobe/ptuprobe/internal/httpfield"
	"github.com/ptuprobe/ptuprobe/results"
)

func openAIFamily(f *family, h http.Header) {
	*f = family{dialect: results.DialectOpenAI, source: results.WaitOpenAIReset}
	f.requests = fieldLimit(h, httpfield.OpenAIFields[0:3], &f.present, openAIDuration)
	f.tokens = fieldLimit(h, httpfield.OpenAIFields[3:6], &f.present, openAIDuration)
	f.limits = []limit{f.requests, f.tokens}
}

// fieldLimit reads one limit from its limit, remaining and reset fields
// (names, in that order), the reset with readReset; present is set when
// any of the three is in h.
func fieldLimit(h http.Header, names []string, present *bool, readReset func(string) (float64, bool)) limit {
	l := unknownLimit()
	max, rem, reset := httpfield.Field(h, names[0]), httpfield.Field(h, names[1]), httpfield.Field(h, names[2])
	if max == "" && rem == "" && reset == "" {
		return l
	}
	*present = true
	l.max, l.remaining = count(max), count(rem)
	if reset != "" {
		if ms, ok := readReset(reset); ok {
			l.reset = ms
		} else {
			l.resetBad = true
		}
	}
	return l
}

// Units of an OpenAI reset duration, largest first.
const (
	unitH = iota
	unitM
	unitS
	unitMS
)

var unitMillis = [...]float64{unitH: 3_600_000, unitM: 60_000, unitS: 1000, unitMS: 1}

// openAIDuration reads an x-ratelimit-reset-* value, a duration as OpenAI
// writes it ("12ms", "1s", "6m0s", "1m30.5s", "2h3m": the form of Go's
// time.Duration.String, whose trailing "0s" may be left out), in ms.
// Strictly that form: one or more components, each digits (no leading
// zero but for a lone 0) and a unit, h, m then s, each at most once and in
// that order; ms only alone, for a duration under a second; a fraction
// only on the last component, and only of s or ms; minutes and seconds
// that follow a larger unit under 60. No sign, space, exponent, bare
// number or other unit: nothing a server would not send. The wait is at
// most results.MaxWaitMS.
func openAIDuration(s string) (float64, bool) {
	if s == "" || len(s) > 32 {
		return 0, false
	}
	total, last, i := 0.0, -1, 0
	for i < len(s) {
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		whole := s[start:i]
		if whole == "" || len(whole) > 1 && whole[0] == '0' {
			return 0, false
		}
		hasFrac := i < len(s) && s[i] == '.'
		if hasFrac {
			i++
			fs := i
			for i < len(s) && isDigit(s[i]) {
				i++
			}
			if i == fs {
				return 0, false
			}
		}
		num := s[start:i]
		unit := -1
		switch {
		case i+2 <= len(s) && s[i:i+2] == "ms":
			unit, i = unitMS, i+2
		case i < len(s) && s[i] == 'h':
			unit, i = unitH, i+1
		case i < len(s) && s[i] == 'm':
			unit, i = unitM, i+1
		case i < len(s) && s[i] == 's':
			unit, i = unitS, i+1
		default:
			return 0, false
		}
		switch {
		case unit <= last,
			unit == unitMS && (last >= 0 || i < len(s)),
			hasFrac && (i < len(s) || unit == unitH || unit == unitM):
			return 0, false
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || last >= 0 && v >= 60 {
			return 0, false
		}
		total += v * unitMillis[unit]
		last = unit
	}
	if total > maxWaitMS {
		return 0, false
	}
	return total, true
}
