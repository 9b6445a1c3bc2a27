package client

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/internal/memnet"
	"github.com/ptuprobe/ptuprobe/results"
)

// dialectDate is the Date of every scripted answer below, so a reset
// stated as a time is exact.
var dialectDate = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func geminiRefusalBody(delay string) string {
	return `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"` + delay + `"}]}}`
}

// answer is a handler that answers status with the given header fields
// (name, value pairs) and body, dated dialectDate.
func answer(status int, body string, kv ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Date", dialectDate.Format(http.TimeFormat))
		for i := 0; i+1 < len(kv); i += 2 {
			w.Header().Add(kv[i], kv[i+1])
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// dialectRow is what a row records of a response's advice.
type dialectRow struct {
	waitMS                 float64
	source, dialect        string
	remReq, remTok         int
	limReq, limTok         int
	resetReqMS, resetTokMS float64
}

func rowOf(r *results.Record) dialectRow {
	return dialectRow{r.WaitMS, r.WaitSource, r.Dialect, r.RatelimitRemainingRequests, r.RatelimitRemainingTokens,
		r.LimitRequests, r.LimitTokens, r.ResetRequestsMS, r.ResetTokensMS}
}

const none = results.None

// TestRecordEveryDialect: a row records what retryafter reads of each
// dialect, from a real response: the wait and its source, the dialect,
// the limits, their remaining and their resets; a Gemini wait comes from
// the body.
func TestRecordEveryDialect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    dialectRow
	}{
		{"azure", answer(429, "", "Retry-After-Ms", "43", "Retry-After", "1", "X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Remaining-Tokens", "1200", "Azure-Openai-Deployment-Utilization", "104.2%"),
			dialectRow{43, results.WaitRetryAfterMS, results.DialectAzure, 0, 1200, none, none, none, none}},
		{"openai, reset only", answer(429, `{"error":{"type":"tokens"}}`, "X-Ratelimit-Limit-Requests", "60", "X-Ratelimit-Limit-Tokens", "150000",
			"X-Ratelimit-Remaining-Requests", "59", "X-Ratelimit-Remaining-Tokens", "0", "X-Ratelimit-Reset-Requests", "1s", "X-Ratelimit-Reset-Tokens", "6m0s"),
			dialectRow{360000, results.WaitOpenAIReset, results.DialectOpenAI, 59, 0, 60, 150000, 1000, 360000}},
		{"anthropic", answer(429, "", "Retry-After", "30", "Anthropic-Ratelimit-Requests-Limit", "50", "Anthropic-Ratelimit-Requests-Remaining", "0",
			"Anthropic-Ratelimit-Requests-Reset", dialectDate.Add(12*time.Second).Format(time.RFC3339)),
			dialectRow{30000, results.WaitRetryAfterSeconds, results.DialectAnthropic, 0, none, 50, none, 12000, none}},
		{"ietf", answer(429, "", "RateLimit", `"rpm";r=0;t=20, "tpm";r=500;t=12`, "RateLimit-Policy", `"rpm";q=60;w=60, "tpm";q=1000;qu="tokens";w=60`),
			dialectRow{20000, results.WaitIETFReset, results.DialectIETF, 0, 500, 60, 1000, 20000, 12000}},
		{"x-ratelimit, epoch seconds", answer(429, "", "X-RateLimit-Limit", "100", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1795953605"),
			dialectRow{5000, results.WaitXRateLimitReset, results.DialectXRate, 0, none, 100, none, 5000, none}},
		{"gemini, in the body", answer(429, geminiRefusalBody("2.5s")),
			dialectRow{2500, results.WaitGeminiRetryDelay, results.DialectGemini, none, none, none, none, none, none}},
		{"gemini, a body longer than what is kept", answer(429, geminiRefusalBody("2.5s")+strings.Repeat(" ", keptBodyBytes)),
			dialectRow{none, results.WaitNone, results.DialectNone, none, none, none, none, none, none}},
		{"nothing", answer(200, `{"usage":{"prompt_tokens":1,"completion_tokens":1}}`),
			dialectRow{none, results.WaitNone, results.DialectNone, none, none, none, none, none, none}},
	}
	if got := dialectDate.Add(5 * time.Second).Unix(); got != 1795953605 {
		t.Fatalf("the epoch reset of the table is stale: %d", got)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			r := send(newAzure(t, srv.URL))
			if got := rowOf(&r); got != tt.want {
				t.Fatalf("row %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestEchoedSecretsInDialectFields: a secret echoed in any field retryafter
// reads is read as no value (a reset that holds it is unreadable, a
// RateLimit field that holds it malformed), one echoed in a Gemini body
// keeps the body from being read, and none reaches the file.
func TestEchoedSecretsInDialectFields(t *testing.T) {
	t.Parallel()
	const digits = "12345678" // a key of digits would read as a number
	tests := []struct {
		name    string
		key     string
		handler func(key string) http.HandlerFunc
		want    dialectRow
	}{
		{"in an exhausted limit's reset", echoKey, func(k string) http.HandlerFunc {
			return answer(429, "", "X-Ratelimit-Remaining-Tokens", "0", "X-Ratelimit-Reset-Tokens", k, "X-Ratelimit-Limit-Tokens", k)
		}, dialectRow{none, results.WaitInvalid, results.DialectOpenAI, none, 0, none, none, none, none}},
		{"in the RateLimit field", echoKey, func(k string) http.HandlerFunc {
			return answer(429, "", "RateLimit", `"`+k+`";r=0;t=30`)
		}, dialectRow{none, results.WaitNone, results.DialectNone, none, none, none, none, none, none}},
		{"a key of digits as a reset", digits, func(k string) http.HandlerFunc {
			return answer(429, "", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", k)
		}, dialectRow{none, results.WaitInvalid, results.DialectXRate, 0, none, none, none, none, none}},
		{"a key of digits as x-ms-retry-after-ms", digits, func(k string) http.HandlerFunc {
			return answer(429, "", "X-Ms-Retry-After-Ms", k)
		}, dialectRow{none, results.WaitInvalid, results.DialectAzure, none, none, none, none, none, none}},
		{"a key of digits as Gemini's retryDelay", digits, func(k string) http.HandlerFunc {
			return answer(429, geminiRefusalBody(k+"s"))
		}, dialectRow{none, results.WaitNone, results.DialectNone, none, none, none, none, none, none}},
		{"the key elsewhere in a Gemini body", echoKey, func(k string) http.HandlerFunc {
			return answer(429, strings.Replace(geminiRefusalBody("3s"), `"code"`, `"key":"`+k+`","code"`, 1))
		}, dialectRow{none, results.WaitNone, results.DialectNone, none, none, none, none, none, none}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tt.handler(tt.key))
			defer srv.Close()
			tg, err := New(Config{API: APIAzure, Endpoint: srv.URL, Deployment: "d", Key: tt.key, PromptTokens: 10, MaxTokens: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			r := send(tg)
			if got := rowOf(&r); got != tt.want {
				t.Fatalf("row %+v\nwant %+v", got, tt.want)
			}
			path := filepath.Join(t.TempDir(), "results.csv")
			w, err := results.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(&r); err != nil {
				t.Fatal(err)
			}
			w.Close()
			file, _ := os.ReadFile(path)
			if leak := leakedPart(file, tt.key); leak != "" {
				t.Fatalf("the results file holds %q of the secret:\n%s", leak, file)
			}
		})
	}
}

// TestOwnerRecordsBodyAdvice: with a retry owner, the refusal it consumed
// is recorded from the body the owner read: a Gemini 429 is a row with the
// wait from its RetryInfo, slept exactly.
func TestOwnerRecordsBodyAdvice(t *testing.T) {
	t.Parallel()
	var rows []results.Record
	synctest.Test(t, func(t *testing.T) {
		n := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			if n++; n == 1 {
				w.WriteHeader(429)
				io.WriteString(w, geminiRefusalBody("1.5s"))
				return
			}
			io.WriteString(w, `{"usage":{"prompt_tokens":10,"completion_tokens":1}}`)
		})
		ln := memnet.Listen()
		srv := &http.Server{Handler: h}
		go srv.Serve(ln)
		defer srv.Close()
		tg, err := New(Config{API: APIAzure, Endpoint: "http://sim.invalid", Deployment: "d", PromptTokens: 10, MaxTokens: 1,
			DialContext: ln.DialContext, Owner: &admission.Policy{MaxAttempts: 2, Budget: 10 * time.Second}, PolicyName: "honor"})
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Close()
		first := results.Blank()
		ctx := context.Background()
		tg.Send(ctx, first, time.Now(), ctx, func(r *results.Record) { rows = append(rows, *r) })
	})
	if len(rows) != 2 {
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	r := rows[0]
	if r.Status != 429 || r.WaitMS != 1500 || r.WaitSource != results.WaitGeminiRetryDelay || r.Dialect != results.DialectGemini || r.Decision != results.DecisionSleep {
		t.Fatalf("refusal row %+v", r)
	}
	if next := rows[1]; next.Status != 200 || next.IntendedMS != r.SentMS+r.LatencyMS+1500 || next.Dialect != results.DialectNone {
		t.Fatalf("retry row %+v after %+v", next, r)
	}
}
