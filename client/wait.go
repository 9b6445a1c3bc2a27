package client

import (
	"net/http"
	"strconv"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// AdvisedWait is the wait a response advises before retrying.
type AdvisedWait struct {
	MS     float64 // results.None unless Source names a usable header
	Source string  // one of the results.Wait* constants
}

// ParseAdvisedWait applies the documented precedence: retry-after-ms when
// it is a non-negative number (decimals allowed); otherwise retry-after as
// delay-seconds × 1000; otherwise retry-after as an HTTP-date, measured
// against the response Date header when it parses, else against now. A
// header that is present but fits none of these gives Source "invalid";
// no header at all gives "none".
//
// Whatever the unit, a wait over maxWaitMS is no wait a server means: the
// header that gave it counts as unusable, as if it were not a number.
//
// An HTTP-date in the past advises no wait at all, so it yields 0 ms
// rather than a negative value.
func ParseAdvisedWait(retryAfterMS, retryAfter, date string, now time.Time) AdvisedWait {
	ms, ra := trimOWS(retryAfterMS), trimOWS(retryAfter)
	if v, ok := parseNonNegative(ms); ok && v <= maxWaitMS {
		return AdvisedWait{MS: v, Source: results.WaitRetryAfterMS}
	}
	if v, ok := parseNonNegative(ra); ok && v*1000 <= maxWaitMS {
		return AdvisedWait{MS: v * 1000, Source: results.WaitRetryAfterSeconds}
	}
	if ra != "" {
		if t, err := http.ParseTime(ra); err == nil {
			ref := now
			if d, err := http.ParseTime(trimOWS(date)); err == nil {
				ref = d
			}
			// Sub saturates at about 292 years, well past the cap.
			wait := max(float64(t.Sub(ref))/float64(time.Millisecond), 0)
			if wait <= maxWaitMS {
				return AdvisedWait{MS: wait, Source: results.WaitRetryAfterDate}
			}
		}
	}
	if ms == "" && ra == "" {
		return AdvisedWait{MS: results.None, Source: results.WaitNone}
	}
	return AdvisedWait{MS: results.None, Source: results.WaitInvalid}
}

// maxWaitMS is results.MaxWaitMS: a believable advised wait in ms (about 31.7
// years), applied to the result of every source; beyond it the value is
// treated as garbage rather than a wait.
const maxWaitMS = results.MaxWaitMS

// parseNonNegative accepts only plain decimal numbers: digits with at most
// one '.', no sign, no exponent, no "inf"/"nan". strconv.ParseFloat alone
// would take "1e3", "+5", "0x10" and "Inf", none of which a server means.
// It knows no unit: the caller bounds the value.
func parseNonNegative(s string) (float64, bool) {
	if s == "" || len(s) > 32 {
		return 0, false
	}
	digits, dots := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return 0, false
		}
	}
	if digits == 0 || dots > 1 {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

// trimOWS removes HTTP optional white space (spaces and tabs).
func trimOWS(s string) string {
	i, j := 0, len(s)
	for i < j && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	for j > i && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	return s[i:j]
}
