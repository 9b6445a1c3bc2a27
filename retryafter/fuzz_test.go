package retryafter

import (
	"bytes"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/httpfield"
	"github.com/ptuprobe/ptuprobe/results"
)

// parseHeaderLines reads "Name: value" lines, a name repeated as often as
// it appears.
func parseHeaderLines(s string) http.Header {
	h := http.Header{}
	for line := range strings.SplitSeq(s, "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || name == "" {
			continue
		}
		h.Add(name, strings.TrimPrefix(value, " "))
	}
	return h
}

// sourceDialect is the dialect a source belongs to, "" for the sources
// any dialect may carry.
var sourceDialect = map[string]string{
	results.WaitGeminiRetryDelay: results.DialectGemini,
	results.WaitIETFReset:        results.DialectIETF,
	results.WaitRateLimitReset:   results.DialectLegacy,
	results.WaitXRateLimitReset:  results.DialectXRate,
	results.WaitOpenAIReset:      results.DialectOpenAI,
	results.WaitAnthropicReset:   results.DialectAnthropic,
}

// FuzzFromResponse holds FromResponse to its invariants whatever the
// status, the header fields and the body: no panic; a usable wait from 0
// to the cap, a source and a dialect from the published lists, and the
// two consistent; no wait (results.None) for none and invalid; reset
// sources only for a 429 or 503, Gemini's only for an error status;
// numbers absent or in range; a field whose value Reads does not claim
// cannot change the advice; a header httpfield.Silent calls silent
// advises as an empty one; and a family skipped for want of a key with
// its prefix reads as the same family read in full.
func FuzzFromResponse(f *testing.F) {
	seeds := []struct {
		status int
		header string
		body   string
	}{
		{429, "Retry-After-Ms: 43\nRetry-After: 1\nX-Ratelimit-Remaining-Requests: 0\nAzure-Openai-Deployment-Utilization: 101.2%", ""},
		{429, "X-Ratelimit-Limit-Tokens: 150000\nX-Ratelimit-Remaining-Tokens: 0\nX-Ratelimit-Reset-Tokens: 1m30.5s\nX-Ratelimit-Reset-Requests: 12ms", ""},
		{429, "Anthropic-Ratelimit-Tokens-Remaining: 0\nAnthropic-Ratelimit-Tokens-Reset: 2026-11-29T12:00:45Z\nDate: Sun, 29 Nov 2026 12:00:00 GMT", ""},
		{429, "Ratelimit: \"default\";r=0;t=30\nRatelimit-Policy: \"default\";q=100;w=60", ""},
		{503, "Ratelimit: \"rpm\";r=0;t=20, \"tpm\";r=0;t=12;pk=:cHsdsRa894==:\nRatelimit-Policy: \"tpm\";q=1000;qu=\"tokens\";w=60", ""},
		{429, "Ratelimit: limit=100, remaining=0, reset=30\nRatelimit-Policy: 100;w=60", ""},
		{429, "Ratelimit-Limit: 10, 10;w=1\nRatelimit-Remaining: 0\nRatelimit-Reset: 1795000000", ""},
		{429, "X-Ratelimit-Limit: 60\nX-Ratelimit-Remaining: 0\nX-Ratelimit-Reset: 1795000000123", ""},
		{429, "", retryInfo(`"30s"`)},
		{429, "Retry-After: soon", "[" + retryInfo(`"1.5s"`, `"2s"`) + "]"},
		{503, "Retry-After: Sun, 29 Nov 2026 12:00:05 GMT\nDate: Sun, 29 Nov 2026 12:00:00 GMT", ""},
		{200, "X-Ms-Region: East US\nRetry-After: 999999999999", ""},
		{429, "X-Ms-Retry-After-Ms: 400\nRetry-After: 3", ""},
		{200, "Azure-Openai-Deployment-Utilization: 87.5%\nX-Ratelimit-Remaining-Tokens: 1200", ""},
		{429, "Ratelimit: (1 2);r=0, \"a\";r=0;t=1.5\nX-Ratelimit-Reset-Requests: 6m0s", ""},
		{200, "Content-Type: application/json\nDate: Sun, 06 Dec 2026 20:33:09 GMT\nContent-Length: 57", `{"usage":{"prompt_tokens":1000}}`},
		{429, "date: soon\nX-Request-Id: 7\nServer: gw", `{"error":{"code":"429"}}`},
		{503, "Apim-Request-Id: 7\nDate: Sun, 06 Dec 2026 20:33:09 GMT", ""},
		{429, "x-ms-region: East US", ""},
		{429, "RATELIMITX: 1", ""},
	}
	for _, s := range seeds {
		f.Add(s.status, s.header, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, status int, headerLines string, body []byte) {
		h := parseHeaderLines(headerLines)
		a := FromResponse(status, h, body, testNow)
		w := a.Wait
		if !slices.Contains(results.WaitSources, w.Source) {
			t.Fatalf("source %q is not a results.Wait* constant", w.Source)
		}
		if !slices.Contains(results.Dialects, a.Dialect) {
			t.Fatalf("dialect %q is not a results.Dialect* constant", a.Dialect)
		}
		switch w.Source {
		case results.WaitNone, results.WaitInvalid:
			if w.MS != results.None {
				t.Fatalf("%s with a wait of %v", w.Source, w.MS)
			}
		default:
			if !(w.MS >= 0 && w.MS <= results.MaxWaitMS) {
				t.Fatalf("usable wait %v from %s", w.MS, w.Source)
			}
		}
		if d, ok := sourceDialect[w.Source]; ok && d != a.Dialect {
			t.Fatalf("source %s with dialect %s", w.Source, a.Dialect)
		}
		if d := sourceDialect[w.Source]; d != "" && d != results.DialectGemini && status != 429 && status != 503 {
			t.Fatalf("reset source %s for status %d", w.Source, status)
		}
		if w.Source == results.WaitGeminiRetryDelay && status < 400 {
			t.Fatalf("Gemini's retryDelay read for status %d", status)
		}
		switch a.Dialect {
		case results.DialectNone:
			if w.Source != results.WaitNone {
				t.Fatalf("dialect none with source %s", w.Source)
			}
		case results.DialectRFC9110:
			if w.Source != results.WaitRetryAfterSeconds && w.Source != results.WaitRetryAfterDate && w.Source != results.WaitInvalid {
				t.Fatalf("a bare retry-after with source %s", w.Source)
			}
		}
		if (w.Source == results.WaitRetryAfterMS || w.Source == results.WaitXMSRetryAfterMS) && a.Dialect != results.DialectAzure && a.Dialect != results.DialectAnthropic {
			t.Fatalf("retry-after-ms in dialect %s", a.Dialect)
		}
		for _, n := range []int{a.RemainingRequests, a.RemainingTokens, a.LimitRequests, a.LimitTokens} {
			if n < 0 && n != results.None {
				t.Fatalf("count %d in %+v", n, a)
			}
		}
		for _, ms := range []float64{a.ResetRequestsMS, a.ResetTokensMS} {
			if ms != results.None && !(ms >= 0 && ms <= results.MaxWaitMS) || math.IsNaN(ms) {
				t.Fatalf("reset %v in %+v", ms, a)
			}
		}
		if u := a.UtilizationPct; u != results.None && !(u >= 0 && u <= 1e6) {
			t.Fatalf("utilization %v in %+v", u, a)
		}
		// What Reads does not claim is read for its presence only.
		masked := http.Header{}
		for k, vs := range h {
			if httpfield.Reads(k) {
				masked[k] = vs
			} else {
				masked[k] = []string{"masked"}
			}
		}
		if b := FromResponse(status, masked, body, testNow); b != a {
			t.Fatalf("a field Reads does not claim changed the advice:\n%+v\n%+v", a, b)
		}
		// A header httpfield.Silent calls silent, with a body that holds
		// no RetryInfo, advises what an empty header does, whatever the
		// clock: the client takes that advice without reading the answer.
		if httpfield.Silent(h) && !bytes.Contains(body, []byte("google.rpc.RetryInfo")) {
			if b := FromResponse(status, nil, nil, time.Time{}); b != a {
				t.Fatalf("a header Silent calls silent advised otherwise than an empty one:\n%+v\n%+v", a, b)
			}
		}
		var b Advice
		if fromResponse(&b, status, h, body, testNow, scanKeys(h)|keyFamilies); b != a {
			t.Fatalf("a family skipped reads otherwise than read in full:\n%+v\n%+v", a, b)
		}
	})
}
