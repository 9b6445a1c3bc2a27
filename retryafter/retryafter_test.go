package retryafter

import (
	"net/http"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/httpfield"
	"github.com/ptuprobe/ptuprobe/results"
)

func TestParse(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	date := "Sun, 29 Nov 2026 12:00:00 GMT"
	tests := []struct {
		name            string
		ms, ra, dateHdr string
		want            float64
		source          string
	}{
		{"ms integer", "43", "", "", 43, results.WaitRetryAfterMS},
		{"ms decimals", "16921.125", "", "", 16921.125, results.WaitRetryAfterMS},
		{"ms whitespace", " \t60 ", "", "", 60, results.WaitRetryAfterMS},
		{"ms zero", "0", "", "", 0, results.WaitRetryAfterMS},
		{"both: ms wins", "43", "17", "", 43, results.WaitRetryAfterMS},
		{"seconds", "", "17", "", 17000, results.WaitRetryAfterSeconds},
		{"seconds decimals", "", "1.5", "", 1500, results.WaitRetryAfterSeconds},
		{"bad ms falls back to seconds", "soon", "2", "", 2000, results.WaitRetryAfterSeconds},
		{"negative ms falls back", "-5", "3", "", 3000, results.WaitRetryAfterSeconds},
		{"date against Date header", "", "Sun, 29 Nov 2026 12:00:30 GMT", "Sun, 29 Nov 2026 12:00:10 GMT", 20000, results.WaitRetryAfterDate},
		{"date against local clock", "", "Sun, 29 Nov 2026 12:00:05 GMT", "", 5000, results.WaitRetryAfterDate},
		{"date with garbage Date header", "", "Sun, 29 Nov 2026 12:00:05 GMT", "yesterday", 5000, results.WaitRetryAfterDate},
		{"date in the past is no wait", "", "Sun, 29 Nov 2026 11:00:00 GMT", date, 0, results.WaitRetryAfterDate},
		{"rfc850 date", "", "Sunday, 29-Nov-26 12:00:07 GMT", date, 7000, results.WaitRetryAfterDate},
		{"negative seconds", "", "-1", "", results.None, results.WaitInvalid},
		{"negative ms only", "-1", "", "", results.None, results.WaitInvalid},
		{"garbage", "abc", "xyz", "", results.None, results.WaitInvalid},
		{"exponent is not a number here", "1e3", "", "", results.None, results.WaitInvalid},
		{"sign", "+5", "", "", results.None, results.WaitInvalid},
		{"inf", "Inf", "NaN", "", results.None, results.WaitInvalid},
		{"two dots", "1.2.3", "", "", results.None, results.WaitInvalid},
		{"huge", "99999999999999999999", "", "", results.None, results.WaitInvalid},
		// The cap is on the wait in ms, whatever unit the header uses.
		{"ms at the cap", "1000000000000", "", "", maxWaitMS, results.WaitRetryAfterMS},
		{"ms over the cap", "1000000000000.5", "", "", results.None, results.WaitInvalid},
		{"ms over the cap falls back to seconds", "1000000000001", "2", "", 2000, results.WaitRetryAfterSeconds},
		{"seconds at the cap", "", "1000000000", "", maxWaitMS, results.WaitRetryAfterSeconds},
		{"seconds over the cap", "", "999999999999", "", results.None, results.WaitInvalid},
		{"seconds just over the cap", "", "1000000000.001", "", results.None, results.WaitInvalid},
		{"date 30 years ahead", "", "Mon, 29 Nov 2056 12:00:00 GMT", date, 946_771_200_000, results.WaitRetryAfterDate},
		{"date 40 years ahead", "", "Wed, 29 Nov 2066 12:00:00 GMT", date, results.None, results.WaitInvalid},
		{"date at the end of time", "", "Fri, 31 Dec 9999 23:59:59 GMT", date, results.None, results.WaitInvalid},
		{"Date header far in the past", "", "Sun, 29 Nov 2026 12:00:05 GMT", "Mon, 01 Jan 1900 00:00:00 GMT", results.None, results.WaitInvalid},
		{"absent", "", "", "", results.None, results.WaitNone},
		{"blank", "  ", "\t", "", results.None, results.WaitNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := parseWait(retryFields{ms: tt.ms, after: tt.ra}, tt.dateHdr, now)
			if got.MS != tt.want || got.Source != tt.source {
				t.Fatalf("parseWait(%q, %q, %q) = %+v, want {%v %s}", tt.ms, tt.ra, tt.dateHdr, got, tt.want, tt.source)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range [][4]string{{"43", "", "", ""}, {"", "", "17", ""}, {"", "", "Wed, 21 Oct 2015 07:28:00 GMT", "Wed, 21 Oct 2015 07:27:00 GMT"},
		{"-1", "", "x", ""}, {"1.5", "", "2", ""}, {"", "", "", ""}, {"", "", "999999999999", ""}, {"", "", "Fri, 31 Dec 9999 23:59:59 GMT", ""},
		{"", "400", "3", ""}, {"x", "-4", "Sunday, 06-Nov-94 08:49:37 GMT", ""}, {"", "", "Sun Nov  6 08:49:37 1994", ""}} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, ms, xms, ra, date string) {
		w := parseWait(retryFields{ms: ms, xmsMS: xms, after: ra}, date, now)
		switch w.Source {
		case results.WaitRetryAfterMS, results.WaitXMSRetryAfterMS, results.WaitRetryAfterSeconds, results.WaitRetryAfterDate:
			if w.MS < 0 || w.MS != w.MS || w.MS > maxWaitMS {
				t.Fatalf("usable wait %v from %q %q %q", w.MS, ms, ra, date)
			}
		case results.WaitNone, results.WaitInvalid:
			if w.MS != results.None {
				t.Fatalf("%s with a value %v", w.Source, w.MS)
			}
			if w.Source == results.WaitNone && (httpfield.TrimOWS(ms) != "" || httpfield.TrimOWS(xms) != "" || httpfield.TrimOWS(ra) != "") {
				t.Fatalf("none although a header is present: %q %q %q", ms, xms, ra)
			}
		default:
			t.Fatalf("unknown source %q", w.Source)
		}
	})
}

// TestXMSRetryAfterMS reads x-ms-retry-after-ms, other Azure services' ms
// field, as azcore does: after retry-after-ms, before retry-after.
func TestXMSRetryAfterMS(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		h      http.Header
		want   float64
		source string
	}{
		{"alone", header("X-Ms-Retry-After-Ms", "400"), 400, results.WaitXMSRetryAfterMS},
		{"decimals and white space", header("x-ms-retry-after-ms", " 16.5\t"), 16.5, results.WaitXMSRetryAfterMS},
		{"retry-after-ms first", header("Retry-After-Ms", "500", "X-Ms-Retry-After-Ms", "400", "Retry-After", "300"), 500, results.WaitRetryAfterMS},
		{"before retry-after", header("X-Ms-Retry-After-Ms", "400", "Retry-After", "3"), 400, results.WaitXMSRetryAfterMS},
		{"before a retry-after date", header("X-Ms-Retry-After-Ms", "400", "Retry-After", "Sun, 29 Nov 2026 12:00:30 GMT"), 400, results.WaitXMSRetryAfterMS},
		{"after an unusable retry-after-ms", header("Retry-After-Ms", "soon", "X-Ms-Retry-After-Ms", "400"), 400, results.WaitXMSRetryAfterMS},
		{"unusable: retry-after next", header("X-Ms-Retry-After-Ms", "-1", "Retry-After", "3"), 3000, results.WaitRetryAfterSeconds},
		{"over the cap: retry-after next", header("X-Ms-Retry-After-Ms", "1000000000001", "Retry-After", "3"), 3000, results.WaitRetryAfterSeconds},
		{"unusable alone", header("X-Ms-Retry-After-Ms", "1e3"), results.None, results.WaitInvalid},
		{"repeats that differ", header("X-Ms-Retry-After-Ms", "400", "X-Ms-Retry-After-Ms", "500"), results.None, results.WaitInvalid},
		{"repeats that agree", header("X-Ms-Retry-After-Ms", "400", "X-Ms-Retry-After-Ms", "400 "), 400, results.WaitXMSRetryAfterMS},
		{"blank", header("X-Ms-Retry-After-Ms", " "), results.None, results.WaitNone},
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		if got := FromHeader(tt.h, now); got.MS != tt.want || got.Source != tt.source {
			t.Errorf("%s: FromHeader(%v) = %+v, want {%v %s}", tt.name, tt.h, got, tt.want, tt.source)
		}
		a := FromResponse(429, tt.h, nil, now)
		if a.Wait.MS != tt.want || a.Wait.Source != tt.source {
			t.Errorf("%s: FromResponse(429, %v).Wait = %+v, want {%v %s}", tt.name, tt.h, a.Wait, tt.want, tt.source)
		}
		if tt.source != results.WaitNone && a.Dialect != results.DialectAzure {
			t.Errorf("%s: dialect %s, want azure", tt.name, a.Dialect)
		}
	}
}

// TestHTTPDateIsGMT reads the three forms of an HTTP-date on a host in New
// York: each is GMT (RFC 9110 §5.6.7) whatever the host's zone, and an
// IMF-fixdate or RFC 850 date in any other zone is no HTTP-date, as
// Retry-After and as Date. It sets time.Local, so it is not parallel (the
// parallel tests run after it).
func TestHTTPDateIsGMT(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	saved := time.Local
	time.Local = ny
	defer func() { time.Local = saved }()

	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name, ra, date string
		want           float64
		source         string
	}{
		{"IMF-fixdate", "Sun, 29 Nov 2026 12:00:37 GMT", "", 37000, results.WaitRetryAfterDate},
		{"RFC 850", "Sunday, 29-Nov-26 12:00:37 GMT", "", 37000, results.WaitRetryAfterDate},
		{"asctime is UTC", "Sun Nov 29 12:00:37 2026", "", 37000, results.WaitRetryAfterDate},
		{"asctime, one-digit day", "Mon Nov  2 12:00:00 2026", "Sun Nov  1 12:00:00 2026", 86_400_000, results.WaitRetryAfterDate},
		{"RFC 850 in EST", "Sunday, 29-Nov-26 12:00:37 EST", "", results.None, results.WaitInvalid},
		{"RFC 850 in UTC", "Sunday, 29-Nov-26 12:00:37 UTC", "", results.None, results.WaitInvalid},
		{"IMF-fixdate in EST", "Sun, 29 Nov 2026 12:00:37 EST", "", results.None, results.WaitInvalid},
		{"IMF-fixdate in lower case gmt", "Sun, 29 Nov 2026 12:00:37 gmt", "", results.None, results.WaitInvalid},
		{"asctime with a zone", "Sun Nov 29 12:00:37 EST 2026", "", results.None, results.WaitInvalid},
		{"Date in EST is no Date: the local clock", "Sun, 29 Nov 2026 12:00:37 GMT", "Sunday, 29-Nov-26 07:00:30 EST", 37000, results.WaitRetryAfterDate},
		{"Date in RFC 850 GMT", "Sun, 29 Nov 2026 12:00:37 GMT", "Sunday, 29-Nov-26 12:00:30 GMT", 7000, results.WaitRetryAfterDate},
	}
	for _, tt := range tests {
		h := http.Header{"Retry-After": {tt.ra}}
		if tt.date != "" {
			h.Set("Date", tt.date)
		}
		if got := FromHeader(h, now); got.MS != tt.want || got.Source != tt.source {
			t.Errorf("%s: FromHeader(%v) = %+v, want {%v %s}", tt.name, h, got, tt.want, tt.source)
		}
	}
	// The Date header is the clock of the other dialects' dates too.
	h := http.Header{"Anthropic-Ratelimit-Tokens-Remaining": {"0"}, "Anthropic-Ratelimit-Tokens-Reset": {"2026-11-29T12:00:45Z"},
		"Date": {"Sunday, 29-Nov-26 07:00:30 EST"}}
	if got := FromResponse(429, h, nil, now).Wait; got.MS != 45000 {
		t.Errorf("an EST Date moved the clock of Anthropic's reset: %+v, want 45000 ms from the local clock", got)
	}
}
