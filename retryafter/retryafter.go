package retryafter

import (
	"net/http"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/httpfield"
	"github.com/ptuprobe/ptuprobe/results"
)

// Wait is the wait a response advises before retrying.
type Wait struct {
	MS     float64 // results.None unless Source names a usable header
	Source string  // one of the results.Wait* constants
}

// Usable reports whether the response advised a wait that can be acted on.
func (w Wait) Usable() bool { return w.MS >= 0 }

// Duration is the advised wait as a time.Duration; ok is false when the
// wait is not usable.
func (w Wait) Duration() (d time.Duration, ok bool) {
	if !w.Usable() {
		return 0, false
	}
	return time.Duration(w.MS * float64(time.Millisecond)), true
}

// FromHeader reads the advised wait of a response's header h from its
// retry-after fields alone (Retry-After-Ms, X-Ms-Retry-After-Ms,
// Retry-After, Date), with the precedence of the package documentation;
// now is the clock for an HTTP-date when the response has no usable Date.
// FromResponse reads every dialect.
func FromHeader(h http.Header, now time.Time) Wait {
	return parseWait(retryFieldsOf(h), h.Get("Date"), now)
}

// retryFields are the values of a response's retry-after fields.
type retryFields struct {
	ms    string // retry-after-ms
	xmsMS string // x-ms-retry-after-ms
	after string // retry-after
}

// retryFieldsOf reads the retry-after fields of h, repeats handled as
// Field does.
func retryFieldsOf(h http.Header) retryFields {
	return retryFields{ms: httpfield.Field(h, "Retry-After-Ms"), xmsMS: httpfield.Field(h, "X-Ms-Retry-After-Ms"), after: httpfield.Field(h, "Retry-After")}
}

// parseWait applies the documented precedence to the retry-after fields
// f: the first ms field that is a non-negative number (decimals
// allowed); otherwise retry-after as delay-seconds × 1000; otherwise
// retry-after as an HTTP-date, measured against the response Date header
// when it parses, else against now. A field that is present but fits none
// of these gives Source "invalid"; no field at all gives "none".
//
// Whatever the unit, a wait over maxWaitMS is no wait a server means: the
// field that gave it counts as unusable, as if it were not a number.
//
// An HTTP-date in the past advises no wait at all, so it yields 0 ms
// rather than a negative value.
func parseWait(f retryFields, date string, now time.Time) Wait {
	return waitAt(f, &clock{date: date, now: now})
}

// waitAt is parseWait with the response's clock.
func waitAt(f retryFields, clk *clock) Wait {
	ms, xms, ra := httpfield.TrimOWS(f.ms), httpfield.TrimOWS(f.xmsMS), httpfield.TrimOWS(f.after)
	if v, ok := httpfield.Number(ms); ok && v <= maxWaitMS {
		return Wait{MS: v, Source: results.WaitRetryAfterMS}
	}
	if v, ok := httpfield.Number(xms); ok && v <= maxWaitMS {
		return Wait{MS: v, Source: results.WaitXMSRetryAfterMS}
	}
	if v, ok := httpfield.Number(ra); ok && v*1000 <= maxWaitMS {
		return Wait{MS: v * 1000, Source: results.WaitRetryAfterSeconds}
	}
	if ra != "" {
		if t, ok := httpDate(ra); ok {
			ref := clk.at()
			// Sub saturates at about 292 years, well past the cap.
			wait := max(float64(t.Sub(ref))/float64(time.Millisecond), 0)
			if wait <= maxWaitMS {
				return Wait{MS: wait, Source: results.WaitRetryAfterDate}
			}
		}
	}
	if ms == "" && xms == "" && ra == "" {
		return Wait{MS: results.None, Source: results.WaitNone}
	}
	return Wait{MS: results.None, Source: results.WaitInvalid}
}

// httpDateLayouts are RFC 9110's three forms of an HTTP-date (§5.6.7):
// IMF-fixdate, the obsolete RFC 850 form and asctime's. An HTTP-date is
// GMT: the first two must say so, and asctime's, which has no zone, is
// UTC. http.ParseTime would take any zone name in the RFC 850 form, and
// read one the host knows (EST in New York) in the host's zone.
var httpDateLayouts = [...]string{http.TimeFormat, "Monday, 02-Jan-06 15:04:05 GMT", time.ANSIC}

// httpDate reads an HTTP-date, always in UTC.
func httpDate(s string) (time.Time, bool) {
	for _, layout := range httpDateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// maxWaitMS is results.MaxWaitMS: a believable advised wait in ms (about 31.7
// years), applied to the result of every source; beyond it the value is
// treated as garbage rather than a wait.
const maxWaitMS = results.MaxWaitMS
