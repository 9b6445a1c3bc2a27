package retryafter

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// testNow is the local clock of every table; testDate is the same instant
// as a Date header.
var testNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

const testDate = "Sun, 29 Nov 2026 12:00:00 GMT"

// advice is an Advice with every number absent.
func advice(ms float64, source, dialect string) Advice {
	return Advice{
		Wait: Wait{MS: ms, Source: source}, Dialect: dialect,
		RemainingRequests: results.None, RemainingTokens: results.None,
		LimitRequests: results.None, LimitTokens: results.None,
		ResetRequestsMS: results.None, ResetTokensMS: results.None, UtilizationPct: results.None,
	}
}

// util sets the utilization a reports.
func util(a Advice, pct float64) Advice {
	a.UtilizationPct = pct
	return a
}

func none(dialect string) Advice { return advice(results.None, results.WaitNone, dialect) }

func invalid(dialect string) Advice { return advice(results.None, results.WaitInvalid, dialect) }

// requests and tokens set the advertised numbers of a.
func requests(a Advice, remaining, limit int, resetMS float64) Advice {
	a.RemainingRequests, a.LimitRequests, a.ResetRequestsMS = remaining, limit, resetMS
	return a
}

func tokens(a Advice, remaining, limit int, resetMS float64) Advice {
	a.RemainingTokens, a.LimitTokens, a.ResetTokensMS = remaining, limit, resetMS
	return a
}

// header builds a header from name, value pairs; a name may repeat.
func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// rfc3339 is testNow moved by d, as Anthropic writes a reset.
func rfc3339(d time.Duration) string { return testNow.Add(d).Format(time.RFC3339) }

func epoch(d time.Duration) string { return strconv.FormatInt(testNow.Add(d).Unix(), 10) }

func epochMS(d time.Duration) string { return strconv.FormatInt(testNow.Add(d).UnixMilli(), 10) }

// retryInfo is a Google error body with the given retryDelay JSON values.
func retryInfo(delays ...string) string {
	var b strings.Builder
	b.WriteString(`{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED","details":[`)
	b.WriteString(`{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaValue":"250"}]}`)
	for _, d := range delays {
		b.WriteString(`,{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":` + d + `}`)
	}
	b.WriteString(`]}}`)
	return b.String()
}

type adviceCase struct {
	name   string
	status int
	header http.Header
	body   string
	want   Advice
}

func runAdvice(t *testing.T, cases []adviceCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var body []byte
			if c.body != "" {
				body = []byte(c.body)
			}
			if got := FromResponse(c.status, c.header, body, testNow); got != c.want {
				t.Errorf("FromResponse(%d, %v, %.60q)\n got %+v\nwant %+v", c.status, c.header, c.body, got, c.want)
			}
		})
	}
}

func TestFromResponseAzure(t *testing.T) {
	t.Parallel()
	runAdvice(t, []adviceCase{
		{"PTU refusal", 429, header("Retry-After-Ms", "43", "Retry-After", "1", "X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Remaining-Tokens", "1200", "Azure-Openai-Deployment-Utilization", "101.2%"),
			"", util(tokens(requests(advice(43, results.WaitRetryAfterMS, results.DialectAzure), 0, results.None, results.None), 1200, results.None, results.None), 101.2)},
		{"retry-after-ms alone", 429, header("Retry-After-Ms", "16921.125"), "", advice(16921.125, results.WaitRetryAfterMS, results.DialectAzure)},
		{"retry-after only, with x-ms-region", 429, header("Retry-After", "6", "X-Ms-Region", "Sweden Central"), "", advice(6000, results.WaitRetryAfterSeconds, results.DialectAzure)},
		{"success with utilization", 200, header("Azure-Openai-Deployment-Utilization", "12.5%"), "", util(none(results.DialectAzure), 12.5)},
		{"utilization without %", 200, header("Azure-Openai-Deployment-Utilization", " 97 "), "", util(none(results.DialectAzure), 97)},
		{"utilization that is no number", 200, header("Azure-Openai-Deployment-Utilization", "-3%"), "", none(results.DialectAzure)},
		{"utilization repeated, differing", 200, header("Azure-Openai-Deployment-Utilization", "12%", "Azure-Openai-Deployment-Utilization", "13%"), "", none(results.DialectAzure)},
		{"apim-request-id", 200, header("Apim-Request-Id", "0f9c"), "", none(results.DialectAzure)},
		{"spillover served", 200, header("X-Ms-Spillover-From-Deployment", "ptu"), "", none(results.DialectAzure)},
		// Azure sends x-ratelimit-remaining-* with no reset: an exhausted
		// limit without a reset advises nothing.
		{"exhausted without a reset", 429, header("X-Ratelimit-Remaining-Tokens", "0", "X-Ms-Region", "East US"), "",
			tokens(none(results.DialectAzure), 0, results.None, results.None)},
		// Azure's -1 is no count.
		{"negative remaining", 200, header("X-Ratelimit-Remaining-Tokens", "-1", "X-Ms-Region", "East US"), "", none(results.DialectAzure)},
	})
}

func TestFromResponseOpenAI(t *testing.T) {
	t.Parallel()
	all := func(remReq, remTok, resetReq, resetTok string) http.Header {
		return header("X-Ratelimit-Limit-Requests", "60", "X-Ratelimit-Limit-Tokens", "150000",
			"X-Ratelimit-Remaining-Requests", remReq, "X-Ratelimit-Remaining-Tokens", remTok,
			"X-Ratelimit-Reset-Requests", resetReq, "X-Ratelimit-Reset-Tokens", resetTok)
	}
	numbers := func(a Advice, remReq, remTok int, resetReq, resetTok float64) Advice {
		return tokens(requests(a, remReq, 60, resetReq), remTok, 150000, resetTok)
	}
	withRetry := all("0", "149984", "1s", "6m0s")
	withRetry.Set("Retry-After", "20")
	badReset := all("0", "5", "soon", "1s")
	noReset := all("0", "5", "", "1s")
	noReset.Del("X-Ratelimit-Reset-Requests")
	runAdvice(t, []adviceCase{
		{"success", 200, all("59", "149984", "1s", "6m0s"), "", numbers(none(results.DialectOpenAI), 59, 149984, 1000, 360000)},
		{"retry-after wins over the reset", 429, withRetry, "", numbers(advice(20000, results.WaitRetryAfterSeconds, results.DialectOpenAI), 0, 149984, 1000, 360000)},
		{"reset-only refusal: the exhausted limit's reset", 429, all("5", "0", "12ms", "1m30.5s"), "", numbers(advice(90500, results.WaitOpenAIReset, results.DialectOpenAI), 5, 0, 12, 90500)},
		{"both exhausted: the longer reset", 429, all("0", "0", "2s", "500ms"), "", numbers(advice(2000, results.WaitOpenAIReset, results.DialectOpenAI), 0, 0, 2000, 500)},
		{"none exhausted: no wait", 429, all("3", "10", "2s", "500ms"), "", numbers(none(results.DialectOpenAI), 3, 10, 2000, 500)},
		{"exhausted on a success: no wait", 200, all("0", "10", "2s", "500ms"), "", numbers(none(results.DialectOpenAI), 0, 10, 2000, 500)},
		{"exhausted on a 503", 503, all("0", "10", "2h3m", "500ms"), "", numbers(advice(7_380_000, results.WaitOpenAIReset, results.DialectOpenAI), 0, 10, 7_380_000, 500)},
		{"exhausted on another refusal status", 403, all("0", "10", "2s", "500ms"), "", numbers(none(results.DialectOpenAI), 0, 10, 2000, 500)},
		{"unreadable reset of the exhausted limit", 429, badReset, "", numbers(invalid(results.DialectOpenAI), 0, 5, results.None, 1000)},
		{"an exhausted limit without a reset", 429, noReset, "", numbers(none(results.DialectOpenAI), 0, 5, results.None, 1000)},
		{"an unreadable reset, another exhausted one usable", 429, all("0", "0", "soon", "3s"), "", numbers(advice(3000, results.WaitOpenAIReset, results.DialectOpenAI), 0, 0, results.None, 3000)},
		{"the gateway profile: remaining only", 429, header("Retry-After", "2", "X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Remaining-Tokens", "40"), "",
			tokens(requests(advice(2000, results.WaitRetryAfterSeconds, results.DialectOpenAI), 0, results.None, results.None), 40, results.None, results.None)},
		{"reset over the cap", 429, header("X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Reset-Requests", "300000000h"), "", requests(invalid(results.DialectOpenAI), 0, results.None, results.None)},
	})
}

func TestFromResponseAnthropic(t *testing.T) {
	t.Parallel()
	all := func(tokRemaining, tokReset string, extra ...string) http.Header {
		h := header("Anthropic-Ratelimit-Requests-Limit", "1000", "Anthropic-Ratelimit-Requests-Remaining", "999",
			"Anthropic-Ratelimit-Requests-Reset", rfc3339(time.Second),
			"Anthropic-Ratelimit-Tokens-Limit", "96000", "Anthropic-Ratelimit-Tokens-Remaining", tokRemaining,
			"Anthropic-Ratelimit-Tokens-Reset", tokReset)
		for i := 0; i+1 < len(extra); i += 2 {
			h.Set(extra[i], extra[i+1])
		}
		return h
	}
	numbers := func(a Advice, tokRemaining int, tokReset float64) Advice {
		return tokens(requests(a, 999, 1000, 1000), tokRemaining, 96000, tokReset)
	}
	runAdvice(t, []adviceCase{
		{"success", 200, all("96000", rfc3339(0)), "", numbers(none(results.DialectAnthropic), 96000, 0)},
		{"refusal with retry-after", 429, all("0", rfc3339(45*time.Second), "Retry-After", "30"), "", numbers(advice(30000, results.WaitRetryAfterSeconds, results.DialectAnthropic), 0, 45000)},
		{"refusal without retry-after: the exhausted limit's reset", 429, all("0", rfc3339(45*time.Second)), "", numbers(advice(45000, results.WaitAnthropicReset, results.DialectAnthropic), 0, 45000)},
		{"input and output tokens exhausted: the longer", 429, all("1000", rfc3339(5*time.Second),
			"Anthropic-Ratelimit-Input-Tokens-Remaining", "0", "Anthropic-Ratelimit-Input-Tokens-Reset", rfc3339(time.Minute),
			"Anthropic-Ratelimit-Output-Tokens-Remaining", "0", "Anthropic-Ratelimit-Output-Tokens-Reset", rfc3339(20*time.Second)),
			"", numbers(advice(60000, results.WaitAnthropicReset, results.DialectAnthropic), 1000, 5000)},
		{"a reset in the past is no wait", 429, all("0", rfc3339(-time.Minute)), "", numbers(advice(0, results.WaitAnthropicReset, results.DialectAnthropic), 0, 0)},
		{"fractional seconds and an offset", 429, all("0", "2026-11-29T13:00:01.5+01:00"), "", numbers(advice(1500, results.WaitAnthropicReset, results.DialectAnthropic), 0, 1500)},
		// Measured against the response's Date, not the local clock.
		{"against the Date header", 429, all("0", rfc3339(45*time.Second), "Date", "Sun, 29 Nov 2026 12:00:30 GMT"), "",
			tokens(requests(advice(15000, results.WaitAnthropicReset, results.DialectAnthropic), 999, 1000, 0), 0, 96000, 15000)},
		{"an unreadable reset", 429, all("0", "tomorrow"), "", numbers(invalid(results.DialectAnthropic), 0, results.None)},
		{"retry-after-ms beside Anthropic's fields", 429, all("0", rfc3339(0), "Retry-After-Ms", "250"), "", numbers(advice(250, results.WaitRetryAfterMS, results.DialectAnthropic), 0, 0)},
	})
}

func TestFromResponseIETF(t *testing.T) {
	t.Parallel()
	rl := func(v string, kv ...string) http.Header { return header(append([]string{"Ratelimit", v}, kv...)...) }
	ietf := func(ms float64) Advice { return advice(ms, results.WaitIETFReset, results.DialectIETF) }
	twoLines := header("Ratelimit", `"a";r=1;t=5`, "Ratelimit", `"b";r=0;t=9`)
	runAdvice(t, []adviceCase{
		{"exhausted policy", 429, rl(`"default";r=0;t=30`), "", requests(ietf(30000), 0, results.None, 30000)},
		{"its quota from RateLimit-Policy", 429, rl(`"default";r=0;t=30`, "Ratelimit-Policy", `"default";q=100;w=60`), "", requests(ietf(30000), 0, 100, 30000)},
		{"two exhausted policies: the longer", 429, rl(`"burst";r=0;t=5, "daily";r=0;t=3600`), "", requests(ietf(3_600_000), 0, results.None, 3_600_000)},
		{"most restrictive of the request limits", 200, rl(`"burst";r=9;t=5, "daily";r=2;t=3600`, "Ratelimit-Policy", `"burst";q=10;w=10, "daily";q=1000;w=86400`), "", requests(none(results.DialectIETF), 2, 1000, 3_600_000)},
		{"not exhausted: no wait", 429, rl(`"default";r=5;t=30`), "", requests(none(results.DialectIETF), 5, results.None, 30000)},
		{"a token policy", 429, rl(`"rpm";r=7;t=20, "tpm";r=0;t=12`, "Ratelimit-Policy", `"rpm";q=60;w=60, "tpm";q=1000;qu="tokens";w=60`), "",
			tokens(requests(ietf(12000), 7, 60, 20000), 0, 1000, 12000)},
		{"a content-bytes policy counts only when exhausted", 429, rl(`"bytes";r=0;t=4`, "Ratelimit-Policy", `"bytes";q=65535;qu="content-bytes";w=10`), "", ietf(4000)},
		{"retry-after takes precedence", 429, rl(`"default";r=0;t=30`, "Retry-After", "5"), "", requests(advice(5000, results.WaitRetryAfterSeconds, results.DialectIETF), 0, results.None, 30000)},
		{"malformed (a trailing comma): ignored", 429, rl(`"default";r=0;t=30,`), "", none(results.DialectNone)},
		{"malformed (an unclosed string): ignored", 429, rl(`"default;r=0;t=30`, "Retry-After", "3"), "", advice(3000, results.WaitRetryAfterSeconds, results.DialectRFC9110)},
		{"an item without r is skipped", 429, rl(`"a";t=30, "b";r=0;t=10`), "", requests(ietf(10000), 0, results.None, 10000)},
		{"a decimal t is unreadable", 429, rl(`"a";r=0;t=1.5`), "", requests(invalid(results.DialectIETF), 0, results.None, results.None)},
		{"a negative t is unreadable", 429, rl(`"a";r=0;t=-3`), "", requests(invalid(results.DialectIETF), 0, results.None, results.None)},
		{"exhausted without t", 429, rl(`"a";r=0`), "", requests(none(results.DialectIETF), 0, results.None, results.None)},
		{"field lines combined", 429, twoLines, "", requests(ietf(9000), 0, results.None, 9000)},
		{"a Token name, a partition key and other parameters", 429, rl(`default;r=0;t=7;pk=:cHsdsRa894==:;acme-burst=?1`), "", requests(ietf(7000), 0, results.None, 7000)},
		{"a Byte Sequence that does not decode: ignored", 429, rl(`"a";r=0;t=7;pk=:a=GVsbG8=:`), "", none(results.DialectNone)},
		{"a policy alone", 200, header("Ratelimit-Policy", `"default";q=100;w=60`), "", requests(none(results.DialectIETF), results.None, 100, results.None)},
		{"t at the cap", 429, rl(`"a";r=0;t=1000000000`), "", requests(ietf(results.MaxWaitMS), 0, results.None, results.MaxWaitMS)},
		{"t over the cap", 429, rl(`"a";r=0;t=1000000001`), "", requests(invalid(results.DialectIETF), 0, results.None, results.None)},
	})
}

func TestFromResponseLegacy(t *testing.T) {
	t.Parallel()
	legacy := func(ms float64) Advice { return advice(ms, results.WaitRateLimitReset, results.DialectLegacy) }
	xrate := func(ms float64) Advice { return advice(ms, results.WaitXRateLimitReset, results.DialectXRate) }
	sep := func(remaining, reset string, kv ...string) http.Header {
		return header(append([]string{"Ratelimit-Limit", "100", "Ratelimit-Remaining", remaining, "Ratelimit-Reset", reset}, kv...)...)
	}
	x := func(remaining, reset string, kv ...string) http.Header {
		return header(append([]string{"X-Ratelimit-Limit", "60", "X-Ratelimit-Remaining", remaining, "X-Ratelimit-Reset", reset}, kv...)...)
	}
	runAdvice(t, []adviceCase{
		{"draft 7 dictionary", 429, header("Ratelimit", "limit=100, remaining=0, reset=30", "Ratelimit-Policy", "100;w=60"), "", requests(legacy(30000), 0, 100, 30000)},
		{"draft 7, not exhausted", 429, header("Ratelimit", "limit=100, remaining=4, reset=30"), "", requests(none(results.DialectLegacy), 4, 100, 30000)},
		{"draft 7 policy alone", 200, header("Ratelimit-Policy", "10;w=1, 50;w=60"), "", none(results.DialectLegacy)},
		{"draft 7, a reset that is no Integer", 429, header("Ratelimit", `limit=100, remaining=0, reset="soon"`), "", requests(invalid(results.DialectLegacy), 0, 100, results.None)},
		{"separate fields, delta seconds", 429, sep("0", "30"), "", requests(legacy(30000), 0, 100, 30000)},
		{"separate fields, epoch seconds (GitLab)", 429, sep("0", epoch(time.Minute)), "", requests(legacy(60000), 0, 100, 60000)},
		{"a limit with its policies appended", 200, header("Ratelimit-Limit", "10, 10;w=1, 50;w=60", "Ratelimit-Remaining", "3"), "", requests(none(results.DialectLegacy), 3, 10, results.None)},
		{"X-RateLimit, delta seconds", 429, x("0", "30"), "", requests(xrate(30000), 0, 60, 30000)},
		{"X-RateLimit, decimal delta", 429, x("0", "1.5"), "", requests(xrate(1500), 0, 60, 1500)},
		{"X-RateLimit, epoch seconds against the Date header", 429, x("0", epoch(90*time.Second), "Date", testDate), "", requests(xrate(90000), 0, 60, 90000)},
		{"X-RateLimit, epoch seconds: Date, not the local clock", 429, x("0", epoch(90*time.Second), "Date", "Sun, 29 Nov 2026 11:59:30 GMT"), "", requests(xrate(120000), 0, 60, 120000)},
		{"X-RateLimit, epoch ms", 429, x("0", epochMS(2500*time.Millisecond)), "", requests(xrate(2500), 0, 60, 2500)},
		{"X-RateLimit, epoch in the past", 429, x("0", epoch(-time.Hour)), "", requests(xrate(0), 0, 60, 0)},
		{"X-RateLimit, the largest delta", 429, x("0", "999999999"), "", requests(xrate(999_999_999_000), 0, 60, 999_999_999_000)},
		{"X-RateLimit, epoch ms far ahead is over the cap", 429, x("0", "100000000000000000"), "", requests(invalid(results.DialectXRate), 0, 60, results.None)},
		{"X-RateLimit, not exhausted", 429, x("1", "30"), "", requests(none(results.DialectXRate), 1, 60, 30000)},
		{"X-RateLimit, an unreadable reset", 429, x("0", "Tue Feb 16 2021 09:02:42 GMT+0100"), "", requests(invalid(results.DialectXRate), 0, 60, results.None)},
		{"X-RateLimit, a signed reset", 429, x("0", "-30"), "", requests(invalid(results.DialectXRate), 0, 60, results.None)},
		// Two dialects exhausted: the longest reset wins, whoever said it.
		{"the longest of several dialects", 429, x("0", "30", "Ratelimit", `"a";r=0;t=45`), "", requests(ietf45(), 0, results.None, 45000)},
	})
}

// ietf45 is the IETF wait of 45 s.
func ietf45() Advice { return advice(45000, results.WaitIETFReset, results.DialectIETF) }

func TestFromResponseGemini(t *testing.T) {
	t.Parallel()
	gemini := func(ms float64) Advice { return advice(ms, results.WaitGeminiRetryDelay, results.DialectGemini) }
	runAdvice(t, []adviceCase{
		{"retryDelay", 429, nil, retryInfo(`"30s"`), gemini(30000)},
		{"fractional seconds", 429, nil, retryInfo(`"1.5s"`), gemini(1500)},
		{"nanoseconds", 429, nil, retryInfo(`"0.000001s"`), gemini(0.001)},
		{"in an array, as streamGenerateContent answers", 429, nil, "[" + retryInfo(`"22s"`) + "]", gemini(22000)},
		{"two that agree", 429, nil, retryInfo(`"5s"`, `"5s"`), gemini(5000)},
		{"two that disagree", 429, nil, retryInfo(`"5s"`, `"6s"`), invalid(results.DialectGemini)},
		{"unreadable retryDelay", 429, nil, retryInfo(`"soon"`), invalid(results.DialectGemini)},
		{"a number, not a Duration", 429, nil, retryInfo(`30`), invalid(results.DialectGemini)},
		{"negative", 429, nil, retryInfo(`"-1s"`), invalid(results.DialectGemini)},
		{"no unit", 429, nil, retryInfo(`"30"`), invalid(results.DialectGemini)},
		{"a point without digits", 429, nil, retryInfo(`"30.s"`), invalid(results.DialectGemini)},
		{"ten fractional digits", 429, nil, retryInfo(`"1.1234567891s"`), invalid(results.DialectGemini)},
		{"an exponent", 429, nil, retryInfo(`"1e3s"`), invalid(results.DialectGemini)},
		{"over the cap", 429, nil, retryInfo(`"1000000001s"`), invalid(results.DialectGemini)},
		{"missing retryDelay", 429, nil, retryInfo(`null`), invalid(results.DialectGemini)},
		{"a 503", 503, nil, retryInfo(`"2s"`), gemini(2000)},
		{"a success body is not read", 200, nil, retryInfo(`"30s"`), none(results.DialectNone)},
		{"not JSON", 429, nil, `google.rpc.RetryInfo "retryDelay": "30s"`, none(results.DialectNone)},
		{"a cut document", 429, nil, retryInfo(`"30s"`)[:200], none(results.DialectNone)},
		{"over MaxBody", 429, nil, retryInfo(`"30s"`) + strings.Repeat(" ", MaxBody), none(results.DialectNone)},
		{"an error without RetryInfo", 429, nil, retryInfo(), none(results.DialectNone)},
		{"retry-after takes precedence", 429, header("Retry-After", "5"), retryInfo(`"30s"`), advice(5000, results.WaitRetryAfterSeconds, results.DialectGemini)},
		{"over an unusable retry-after-ms", 429, header("Retry-After-Ms", "soon"), retryInfo(`"30s"`), gemini(30000)},
	})
}

func TestFromResponsePrecedence(t *testing.T) {
	t.Parallel()
	everything := header("Retry-After-Ms", "100", "Retry-After", "2",
		"X-Ratelimit-Remaining", "0", "X-Ratelimit-Reset", "40", "Ratelimit", `"a";r=0;t=50`)
	noMS := everything.Clone()
	noMS.Del("Retry-After-Ms")
	onlyResets := noMS.Clone()
	onlyResets.Del("Retry-After")
	badRetry := onlyResets.Clone()
	badRetry.Set("Retry-After", "soon")
	date := onlyResets.Clone()
	date.Set("Retry-After", "Sun, 29 Nov 2026 12:00:07 GMT")
	date.Set("Date", testDate)
	xr := func(a Advice) Advice { return requests(a, 0, results.None, 50000) }
	runAdvice(t, []adviceCase{
		{"retry-after-ms first", 429, everything, retryInfo(`"30s"`), xr(advice(100, results.WaitRetryAfterMS, results.DialectAzure))},
		{"then retry-after", 429, noMS, retryInfo(`"30s"`), xr(advice(2000, results.WaitRetryAfterSeconds, results.DialectIETF))},
		{"then an HTTP-date", 429, date, "", xr(advice(7000, results.WaitRetryAfterDate, results.DialectIETF))},
		{"then Gemini's retryDelay", 429, onlyResets, retryInfo(`"30s"`), xr(advice(30000, results.WaitGeminiRetryDelay, results.DialectGemini))},
		{"then the longest exhausted reset", 429, onlyResets, "", xr(advice(50000, results.WaitIETFReset, results.DialectIETF))},
		// Advice that is present but unusable is no licence to guess from
		// the resets.
		{"unusable retry advice: invalid, no reset", 429, badRetry, "", xr(invalid(results.DialectIETF))},
		// An invalid wait names no source, so the fields name the dialect.
		{"unusable retryDelay: invalid, no reset", 429, onlyResets, retryInfo(`"soon"`), xr(invalid(results.DialectIETF))},
		{"OpenAI's numbers before Anthropic's", 200, header("X-Ratelimit-Remaining-Requests", "3", "Anthropic-Ratelimit-Requests-Remaining", "9"), "", requests(none(results.DialectAnthropic), 3, results.None, results.None)},
	})
}

func TestFromResponseNothing(t *testing.T) {
	t.Parallel()
	runAdvice(t, []adviceCase{
		{"nil header", 429, nil, "", none(results.DialectNone)},
		{"no rate-limit field", 429, header("Content-Type", "application/json"), `{"error":{"code":"429"}}`, none(results.DialectNone)},
		{"blank fields", 429, header("Retry-After", " ", "Retry-After-Ms", "\t"), "", none(results.DialectNone)},
		{"a bare retry-after", 429, header("Retry-After", "17"), "", advice(17000, results.WaitRetryAfterSeconds, results.DialectRFC9110)},
		{"a bare HTTP-date", 503, header("Retry-After", "Sun, 29 Nov 2026 12:00:05 GMT", "Date", testDate), "", advice(5000, results.WaitRetryAfterDate, results.DialectRFC9110)},
		{"a bare garbage retry-after", 429, header("Retry-After", "soon"), "", invalid(results.DialectRFC9110)},
		{"retry-after over the cap", 429, header("Retry-After", "1000000000.001"), "", invalid(results.DialectRFC9110)},
		{"repeated retry-after that disagree", 429, header("Retry-After", "1", "Retry-After", "2"), "", invalid(results.DialectRFC9110)},
		{"status 0", 0, header("X-Ratelimit-Remaining", "0", "X-Ratelimit-Reset", "3"), "", requests(none(results.DialectXRate), 0, results.None, 3000)},
	})
}

func TestOpenAIDuration(t *testing.T) {
	t.Parallel()
	good := map[string]float64{
		"0s": 0, "12ms": 12, "1.5ms": 1.5, "999ms": 999, "1s": 1000, "0.5s": 500, "8.64s": 8640, "90s": 90000,
		"6m0s": 360000, "1m30.5s": 90500, "2h3m": 7_380_000, "2h3m4s": 7_384_000, "1h0m0s": 3_600_000,
		"5m": 300000, "1h": 3_600_000, "1h30s": 3_630_000, "277777h": 999_997_200_000,
	}
	for in, want := range good {
		if got, ok := openAIDuration(in); !ok || got != want {
			t.Errorf("openAIDuration(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{
		"", "0", "12", "1S", "1 s", " 1s", "1s ", "+1s", "-1s", "1e3s", ".5s", "5.s", "06s", "00s",
		"1s500ms", "1m1h", "1s1s", "1h1h", "1m60s", "1h60m", "1.5m", "1.5h", "1.5m30s", "1.5s2ms", "1ms1s",
		"1µs", "1us", "1ns", "1d", "1hms", "ms", "s", "1m30", "0x10s", "Infs", "NaNs", "1,5s",
		"300000000h", strings.Repeat("1", 40) + "s",
	} {
		if got, ok := openAIDuration(in); ok {
			t.Errorf("openAIDuration(%q) = %v, accepted", in, got)
		}
	}
}

func TestProtoDuration(t *testing.T) {
	t.Parallel()
	good := map[string]float64{"0s": 0, "30s": 30000, "1.5s": 1500, "1.000s": 1000, "0.25s": 250, "1000000000s": results.MaxWaitMS}
	for in, want := range good {
		if got, ok := protoDuration(in); !ok || got != want {
			t.Errorf("protoDuration(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "s", "30", "-1s", "+1s", "1.s", ".5s", "1.5", "1e3s", "1.0000000001s", "1000000001s", "30 s", "1m", "1,5s"} {
		if got, ok := protoDuration(in); ok {
			t.Errorf("protoDuration(%q) = %v, accepted", in, got)
		}
	}
}

func TestStructuredFields(t *testing.T) {
	t.Parallel()
	lists := []struct {
		in   string
		n    int // members; -1: refused
		name string
	}{
		{``, 0, ""},
		{`"default";r=50;t=30`, 1, "default"},
		{`"a";r=1, "b";r=2`, 2, "a"},
		{`"a";r=1,"b";r=2`, 2, "a"},
		{"\"a\";r=1 ,\t\"b\";r=2", 2, "a"},
		{`  "a"  `, 1, "a"},
		{`tok/en:x;r=1`, 1, "tok/en:x"},
		{`*star`, 1, "*star"},
		{`"esc\"aped\\"`, 1, `esc"aped\`},
		{`(1 2 "x");p=1, "b"`, 2, ""},
		{`()`, 1, ""},
		{`1.5, -3, ?1, :aGVsbG8=:, 123456789012345`, 5, ""},
		{`"a";r`, 1, "a"},
		{`"a";r=1,`, -1, ""},
		{`,"a"`, -1, ""},
		{`"a" "b"`, -1, ""},
		{`"a`, -1, ""},
		{`"a\n"`, -1, ""},
		{"\"caf\u00e9\"", -1, ""},
		{`"a";R=1`, -1, ""},
		{`"a";=1`, -1, ""},
		{`1234567890123456`, -1, ""},
		{`1234567890123.5`, -1, ""},
		{`1.2345`, -1, ""},
		{`1.`, -1, ""},
		{`-`, -1, ""},
		{`?2`, -1, ""},
		{`:not base64!:`, -1, ""},
		{`:=aGVsbG8=:`, -1, ""},
		{`:a=GVsbG8=:`, -1, ""},
		{`:a:`, -1, ""},
		{`:aGVsbG8:`, 1, ""},
		{`:open`, -1, ""},
		{`(1 2`, -1, ""},
		{`(1,2)`, -1, ""},
		{`limit=100`, -1, ""},
		{`@1700000000`, -1, ""},
		{`%"display"`, -1, ""},
	}
	for _, c := range lists {
		got, ok := parseSFList(c.in)
		switch {
		case c.n < 0 && ok:
			t.Errorf("parseSFList(%q) = %+v, accepted", c.in, got)
		case c.n >= 0 && (!ok || len(got) != c.n):
			t.Errorf("parseSFList(%q) = %+v, %v; want %d members", c.in, got, ok, c.n)
		case c.n > 0 && c.name != "":
			if name, _ := got[0].bare.name(); name != c.name {
				t.Errorf("parseSFList(%q): first name %q, want %q", c.in, name, c.name)
			}
		}
	}
	d, ok := parseSFDictionary(`limit=100, remaining=0, reset=30, flag;x=1, limit=7`)
	if !ok || len(d) != 4 || d[0].key != "limit" || d[0].item.bare.i != 7 || d[3].key != "flag" || d[3].item.bare.kind != sfBoolean {
		t.Errorf("dictionary = %+v, %v", d, ok)
	}
	for _, in := range []string{`Limit=1`, `limit=1,`, `limit=1 remaining=2`, `"a"=1`, `limit=`} {
		if got, ok := parseSFDictionary(in); ok {
			t.Errorf("parseSFDictionary(%q) = %+v, accepted", in, got)
		}
	}
	it, _ := parseSFList(`"a";r=1;t=2;r=3`)
	if v, _ := it[0].param("r"); v.i != 3 || len(it[0].params) != 2 {
		t.Errorf("repeated parameter: %+v", it[0].params)
	}
}

// BenchmarkFromResponse reads the advice of typical responses: the client
// does it for every attempt.
func BenchmarkFromResponse(b *testing.B) {
	azure := header("Retry-After-Ms", "43", "Retry-After", "1", "X-Ratelimit-Remaining-Requests", "0",
		"X-Ratelimit-Remaining-Tokens", "1200", "Azure-Openai-Deployment-Utilization", "101.2%", "Date", testDate,
		"Content-Type", "application/json", "X-Ms-Region", "East US", "Apim-Request-Id", "0f9c4d2e-0000")
	openai := header("X-Ratelimit-Limit-Requests", "60", "X-Ratelimit-Limit-Tokens", "150000", "X-Ratelimit-Remaining-Requests", "59",
		"X-Ratelimit-Remaining-Tokens", "0", "X-Ratelimit-Reset-Requests", "1s", "X-Ratelimit-Reset-Tokens", "6m0s", "Date", testDate)
	ietf := header("Ratelimit", `"rpm";r=0;t=20, "tpm";r=500;t=12`, "Ratelimit-Policy", `"rpm";q=60;w=60, "tpm";q=1000;qu="tokens";w=60`)
	gemini := []byte(retryInfo(`"30s"`))
	for _, c := range []struct {
		name   string
		status int
		h      http.Header
		body   []byte
	}{
		{"azure 429", 429, azure, nil},
		{"openai 429 reset only", 429, openai, nil},
		{"ietf 429", 429, ietf, nil},
		{"gemini 429", 429, nil, gemini},
		{"openai 200", 200, openai, []byte(`{"usage":{"prompt_tokens":1}}`)},
		{"bare 200", 200, header("Content-Type", "application/json", "Date", testDate, "Content-Length", "57"), nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				FromResponse(c.status, c.h, c.body, testNow)
			}
		})
	}
}
