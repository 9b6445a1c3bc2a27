package admission

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// geminiRefusal is a Gemini 429 body whose RetryInfo advises delay.
func geminiRefusal(delay string) string {
	return `{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED","details":[` +
		`{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerMinutePerProjectPerModel"}]},` +
		`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"` + delay + `"}]}}`
}

// TestEveryDialectIsHonoured: a refusal is decided on what
// retryafter.FromResponse reads of it, its body included, so a Gemini 429
// (advice in the body only) and a refusal that states only the reset of
// an exhausted limit are slept for, and the Decision names the source.
func TestEveryDialectIsHonoured(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		reply  func(now time.Time) reply
		wait   time.Duration
		source string
	}{
		{"Gemini's retryDelay, in the body", func(time.Time) reply {
			return reply{status: 429, header: map[string]string{}, body: geminiRefusal("2.5s")}
		}, 2500 * time.Millisecond, results.WaitGeminiRetryDelay},
		{"Gemini on a 503", func(time.Time) reply {
			return reply{status: 503, header: map[string]string{}, body: geminiRefusal("4s")}
		}, 4 * time.Second, results.WaitGeminiRetryDelay},
		{"OpenAI, reset only", func(time.Time) reply {
			return refuse(429, "X-Ratelimit-Remaining-Requests", "12", "X-Ratelimit-Reset-Requests", "20ms",
				"X-Ratelimit-Remaining-Tokens", "0", "X-Ratelimit-Reset-Tokens", "1m30.5s")
		}, 90500 * time.Millisecond, results.WaitOpenAIReset},
		{"Anthropic, reset only", func(now time.Time) reply {
			return refuse(429, "Anthropic-Ratelimit-Tokens-Remaining", "0", "Anthropic-Ratelimit-Tokens-Reset", now.Add(7*time.Second).UTC().Format(time.RFC3339))
		}, 7 * time.Second, results.WaitAnthropicReset},
		{"IETF RateLimit, r=0", func(time.Time) reply {
			return refuse(429, "RateLimit", `"default";r=0;t=3`, "RateLimit-Policy", `"default";q=100;w=60`)
		}, 3 * time.Second, results.WaitIETFReset},
		{"draft-7 RateLimit on a 503", func(time.Time) reply {
			return refuse(503, "RateLimit", "limit=100, remaining=0, reset=5")
		}, 5 * time.Second, results.WaitRateLimitReset},
		// Delta seconds: the bubble's clock starts in 2000, before the
		// 10^9 s from which retryafter reads a reset as an epoch time.
		{"X-RateLimit, delta seconds", func(time.Time) reply {
			return refuse(429, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", strconv.Itoa(9))
		}, 9 * time.Second, results.WaitXRateLimitReset},
		{"retry-after over the reset", func(time.Time) reply {
			return refuse(429, "Retry-After", "1", "X-Ratelimit-Remaining-Tokens", "0", "X-Ratelimit-Reset-Tokens", "6m0s")
		}, time.Second, results.WaitRetryAfterSeconds},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				l := newLab(t, Policy{MaxAttempts: DefaultMaxAttempts, Budget: 5 * time.Minute}, map[string][]reply{"/": {tt.reply(time.Now()), ok200}})
				status, _, err := l.do(t.Context(), "GET", "/", "")
				if err != nil || status != 200 {
					t.Fatalf("status %d, error %v", status, err)
				}
				if got := l.srv.offsets("/", l.start); !slices.Equal(got, []time.Duration{0, tt.wait}) {
					t.Errorf("arrivals %v, want [0 %v]", got, tt.wait)
				}
				ds := l.recorded()
				if len(ds) != 2 || ds[0].Action != ActionSleep || ds[0].Wait != tt.wait || ds[0].WaitSource != tt.source {
					t.Fatalf("decisions %+v, want a sleep of %v from %s", ds, tt.wait, tt.source)
				}
			})
		})
	}
}

// TestAdviceOnlyInRefusals: a 503 with a Google error but no RetryInfo is
// an outage, returned with its body whole; a reset on a status that is no
// refusal is not a wait.
func TestAdviceOnlyInRefusals(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		outage := `{"error":{"code":503,"status":"UNAVAILABLE","details":[]}}` + strings.Repeat(" ", 100<<10)
		l := newLab(t, Policy{MaxAttempts: DefaultMaxAttempts, Budget: DefaultBudget, Jitter: DefaultJitter}, map[string][]reply{
			"/outage":    {{status: 503, header: map[string]string{}, body: outage}},
			"/forbidden": {refuse(403, "X-Ratelimit-Remaining-Tokens", "0", "X-Ratelimit-Reset-Tokens", "1s")},
		})
		status, body, err := l.do(t.Context(), "GET", "/outage", "")
		if err != nil || status != 503 || body != outage {
			t.Fatalf("outage: status %d, error %v, body of %d bytes, want %d", status, err, len(body), len(outage))
		}
		status, _, err = l.do(t.Context(), "GET", "/forbidden", "")
		if err != nil || status != 403 {
			t.Fatalf("forbidden: status %d, error %v", status, err)
		}
		ds := l.recorded()
		if len(ds) != 2 || ds[0].WaitSource != results.WaitNone || ds[1].WaitSource != results.WaitNone || ds[1].Wait != -1 {
			t.Fatalf("decisions %+v", ds)
		}
	})
}

// TestAttemptCarriesTheRefusalBody: an attempt observer gets the body the
// Transport read of a refusal (for a caller that records its advice), and
// none of a response it returns.
func TestAttemptCarriesTheRefusalBody(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		body := geminiRefusal("1s")
		srv := newScript(map[string][]reply{"/": {{status: 429, header: map[string]string{}, body: body}, ok200}})
		tr, err := New(serveMem(t, srv), Policy{MaxAttempts: DefaultMaxAttempts, Budget: DefaultBudget})
		if err != nil {
			t.Fatal(err)
		}
		var as []Attempt
		req, _ := http.NewRequestWithContext(WithAttemptObserver(t.Context(), func(a Attempt) { as = append(as, a) }), "GET", "http://primary.invalid/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(as) != 2 || string(as[0].Body) != body || as[1].Body != nil {
			t.Fatalf("attempts %+v", as)
		}
	})
}
