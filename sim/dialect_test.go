package sim

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// dialectCall is a request of the dialect's own shape to the PTU
// deployment: a prompt of promptChars characters and a budget of
// maxTokens, from key.
func dialectCall(d string, promptChars, maxTokens int, key string) (path, body string, hdr []string) {
	prompt := strings.Repeat("p", promptChars)
	switch d {
	case DialectOpenAI:
		return "/v1/chat/completions",
			`{"model":"sim-ptu","messages":[{"role":"user","content":"` + prompt + `"}],"max_tokens":` + strconv.Itoa(maxTokens) + `}`,
			[]string{"Authorization", "Bearer " + key}
	case DialectAnthropic:
		return "/v1/messages",
			`{"model":"sim-ptu","max_tokens":` + strconv.Itoa(maxTokens) + `,"messages":[{"role":"user","content":"` + prompt + `"}]}`,
			[]string{"x-api-key", key, "anthropic-version", "2023-06-01"}
	case DialectGemini:
		return "/v1beta/models/sim-ptu:generateContent",
			`{"contents":[{"role":"user","parts":[{"text":"` + prompt + `"}]}],"generationConfig":{"maxOutputTokens":` + strconv.Itoa(maxTokens) + `}}`,
			[]string{"x-goog-api-key", key}
	}
	return azurePath, chatBody(promptChars, maxTokens), []string{"api-key", key}
}

// Error bodies, one struct per dialect's envelope.
type (
	azureError struct {
		Error struct{ Code, Message string }
	}
	openAIError struct {
		Error struct {
			Message string
			Type    string
			Param   *string
			Code    *string
		}
	}
	anthropicError struct {
		Type  string
		Error struct{ Type, Message string }
	}
	googleError struct {
		Error struct {
			Code    int
			Message string
			Status  string
			Details []map[string]any
		}
	}
	problem struct {
		Type     string
		Title    string
		Violated []string `json:"violated-policies"`
	}
)

// errorKind decodes an error body in the dialect's envelope and returns
// what names the error: Azure's code, OpenAI's type/code, Anthropic's
// type, Google's status, the problem's type.
func errorKind(t *testing.T, d, profile string, resp *http.Response, body string) string {
	t.Helper()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/") {
		t.Fatalf("content-type %q", resp.Header.Get("Content-Type"))
	}
	dec := func(v any) {
		t.Helper()
		if err := json.Unmarshal([]byte(body), v); err != nil {
			t.Fatalf("%s body %q: %v", d, body, err)
		}
	}
	switch {
	case d == DialectIETF && resp.StatusCode == http.StatusTooManyRequests:
		var p problem
		dec(&p)
		return p.Type
	case d == DialectOpenAI:
		var e openAIError
		dec(&e)
		if e.Error.Message == "" || !strings.Contains(body, `"param":null`) {
			t.Errorf("openai error %q lacks a message or a null param", body)
		}
		code := "null"
		if e.Error.Code != nil {
			code = *e.Error.Code
		}
		return e.Error.Type + "/" + code
	case d == DialectGemini:
		var e googleError
		dec(&e)
		if e.Error.Code != resp.StatusCode || e.Error.Message == "" {
			t.Errorf("google error %q: code is not the status %d", body, resp.StatusCode)
		}
		return e.Error.Status
	case d == DialectAnthropic || profile == ProfileGateway:
		var e anthropicError
		dec(&e)
		if e.Type != "error" || e.Error.Message == "" {
			t.Errorf("messages error %q", body)
		}
		return e.Error.Type
	}
	var e azureError
	dec(&e)
	return e.Error.Code
}

func TestDialectRoutes(t *testing.T) {
	t.Parallel()
	const chat = `{"model":"sim-ptu","messages":[{"role":"user","content":"hi"}],"max_tokens":2}`
	const gem = `{"contents":[{"parts":[{"text":"hi"}]}]}`
	av := []string{"anthropic-version", "2023-06-01"}
	tests := []struct {
		dialect, profile string
		name, path, body string
		hdr              []string
		status           int
		kind             string // the error, as errorKind names it
	}{
		{DialectOpenAI, ProfilePTU, "chat", "/v1/chat/completions", chat, nil, 200, ""},
		{DialectOpenAI, ProfilePTU, "any model", "/v1/chat/completions", strings.Replace(chat, "sim-ptu", "gpt-4o", 1), nil, 200, ""},
		{DialectOpenAI, ProfilePTU, "no model", "/v1/chat/completions", `{"messages":[{"content":"hi"}]}`, nil, 400, "invalid_request_error/null"},
		{DialectOpenAI, ProfilePTU, "the Azure route", azurePath, chat, nil, 404, "invalid_request_error/unknown_url"},
		{DialectOpenAI, ProfilePTU, "the Azure v1 route", "/openai/v1/chat/completions", chat, nil, 404, "invalid_request_error/unknown_url"},
		{DialectOpenAI, ProfilePTU, "messages", "/v1/messages", chat, av, 404, "invalid_request_error/unknown_url"},
		{DialectOpenAI, ProfileGateway, "images on the gateway", "/v1/images/generations", `{"prompt":"a cat"}`, nil, 200, ""},
		{DialectOpenAI, ProfileGateway, "messages on the gateway", "/v1/messages", chat, av, 404, "invalid_request_error/unknown_url"},

		{DialectAnthropic, ProfilePTU, "messages", "/v1/messages", chat, av, 200, ""},
		{DialectAnthropic, ProfilePTU, "no anthropic-version", "/v1/messages", chat, nil, 400, "invalid_request_error"},
		{DialectAnthropic, ProfilePTU, "no max_tokens", "/v1/messages", `{"model":"sim-ptu","messages":[{"content":"hi"}]}`, av, 400, "invalid_request_error"},
		{DialectAnthropic, ProfilePTU, "any model", "/v1/messages", strings.Replace(chat, "sim-ptu", "claude-sonnet-4-5", 1), av, 200, ""},
		{DialectAnthropic, ProfilePTU, "chat completions", "/v1/chat/completions", chat, av, 404, "not_found_error"},
		{DialectAnthropic, ProfilePTU, "token counting on the PTU", "/v1/messages/count_tokens", chat, av, 404, "not_found_error"},
		{DialectAnthropic, ProfileGateway, "token counting on the gateway", "/v1/messages/count_tokens", chat, av, 200, ""},
		{DialectAnthropic, ProfileGateway, "images on the gateway", "/v1/images/generations", `{"prompt":"a cat"}`, av, 404, "not_found_error"},

		{DialectGemini, ProfilePTU, "generateContent", "/v1beta/models/sim-ptu:generateContent", gem, nil, 200, ""},
		{DialectGemini, ProfilePTU, "v1", "/v1/models/sim-ptu:generateContent", gem, nil, 200, ""},
		{DialectGemini, ProfilePTU, "stream as SSE", "/v1beta/models/sim-ptu:streamGenerateContent?alt=sse", gem, nil, 200, ""},
		{DialectGemini, ProfilePTU, "stream as a JSON array", "/v1beta/models/sim-ptu:streamGenerateContent", gem, nil, 200, ""},
		{DialectGemini, ProfilePTU, "any model", "/v1beta/models/gemini-2.5-flash:generateContent", gem, nil, 200, ""},
		{DialectGemini, ProfilePTU, "key in the URL", "/v1beta/models/sim-ptu:generateContent?key=sekrit", gem, nil, 400, "INVALID_ARGUMENT"},
		{DialectGemini, ProfilePTU, "countTokens", "/v1beta/models/sim-ptu:countTokens", gem, nil, 404, "NOT_FOUND"},
		{DialectGemini, ProfilePTU, "no method", "/v1beta/models/sim-ptu", gem, nil, 404, "NOT_FOUND"},
		{DialectGemini, ProfilePTU, "nested model", "/v1beta/models/a/b:generateContent", gem, nil, 404, "NOT_FOUND"},
		{DialectGemini, ProfilePTU, "no contents", "/v1beta/models/sim-ptu:generateContent", `{"generationConfig":{}}`, nil, 400, "INVALID_ARGUMENT"},
		{DialectGemini, ProfilePTU, "chat completions", "/v1/chat/completions", chat, nil, 404, "NOT_FOUND"},
		{DialectGemini, ProfileGateway, "any model on the gateway", "/v1beta/models/whatever:generateContent", gem, nil, 200, ""},

		{DialectIETF, ProfilePTU, "the Azure route", azurePath, chat, nil, 200, ""},
		{DialectIETF, ProfilePTU, "the OpenAI-compatible route", "/v1/chat/completions", chat, nil, 200, ""},
		{DialectIETF, ProfilePTU, "no api-version", "/openai/deployments/sim-ptu/chat/completions", chat, nil, 400, "MissingApiVersionParameter"},
		{DialectIETF, ProfilePTU, "any deployment", "/openai/deployments/nope/chat/completions?api-version=x", chat, nil, 200, ""},
		{DialectIETF, ProfileGateway, "messages on the gateway", "/v1/messages", chat, nil, 200, ""},
	}
	servers := map[string]string{}
	for _, tc := range tests {
		if _, ok := servers[tc.dialect+tc.profile]; !ok {
			cfg := testConfig()
			cfg.Dialect, cfg.Profile = tc.dialect, tc.profile
			cfg.Clock = instantClock{} // images take model time: here none
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(s)
			t.Cleanup(ts.Close)
			servers[tc.dialect+tc.profile] = ts.URL
		}
	}
	for _, tc := range tests {
		t.Run(tc.dialect+"/"+tc.profile+"/"+tc.name, func(t *testing.T) {
			t.Parallel()
			resp, body := post(t, servers[tc.dialect+tc.profile], tc.path, tc.body, tc.hdr...)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.status != 200 {
				if got := errorKind(t, tc.dialect, tc.profile, resp, body); got != tc.kind {
					t.Errorf("error %q, want %q: %s", got, tc.kind, body)
				}
				if strings.Contains(body, "nope") || strings.Contains(body, "sekrit") {
					t.Errorf("the error echoes the request: %s", body)
				}
			}
		})
	}
	// A method other than POST is refused in the dialect's envelope too.
	req, _ := http.NewRequest(http.MethodGet, servers[DialectGemini+ProfilePTU]+"/v1beta/models/sim-ptu:generateContent", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET: status %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

// keyedSim is a simulator of dialect d set by edit, and a call of the
// dialect from key, which it must admit.
func keyedSim(t *testing.T, d, key string, edit func(*Config)) (s *Server, ts *httptest.Server, path, body string, hdr []string) {
	t.Helper()
	cfg := testConfig()
	cfg.Dialect = d
	edit(&cfg)
	s, _, ts = newSim(t, cfg)
	path, body, hdr = dialectCall(d, 40, 1, key)
	if resp, b := post(t, ts.URL, path, body, hdr...); resp.StatusCode != 200 {
		t.Fatalf("with the key: %d %s", resp.StatusCode, b)
	}
	return s, ts, path, body, hdr
}

// TestDialectKeys: each dialect reads the key where its clients send it; a
// key in another dialect's header is no key.
func TestDialectKeys(t *testing.T) {
	t.Parallel()
	for _, d := range AllDialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			s, ts, path, body, hdr := keyedSim(t, d, "k1", func(c *Config) { c.RequireKey = true })
			want := http.StatusUnauthorized
			if d == DialectGemini {
				want = http.StatusForbidden // the service's answer to an unregistered caller
			}
			other := []string{"x-goog-api-key", "k1"}
			if d == DialectGemini {
				other = []string{"Authorization", "Bearer k1"}
			}
			withoutKey := append(other, hdr[2:]...) // keep anthropic-version
			if d == DialectAzure || d == DialectIETF {
				withoutKey = other
			}
			resp, b := post(t, ts.URL, path, body, withoutKey...)
			if resp.StatusCode != want {
				t.Fatalf("key in another dialect's header: %d, want %d: %s", resp.StatusCode, want, b)
			}
			errorKind(t, d, ProfilePTU, resp, b)
			if st := s.Stats(); st.Admitted != 1 || st.Rejected != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// TestOnlyKey: with OnlyKey, each dialect admits its key and refuses, in
// its envelope and counted, another key, a stale one beside it in
// another header, and none; no answer or stat holds a key.
func TestOnlyKey(t *testing.T) {
	t.Parallel()
	const key, stale = "ptuprobe-referee-0123", "sk-real-stale-key"
	for _, d := range AllDialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			s, ts, path, body, hdr := keyedSim(t, d, key, func(c *Config) { c.OnlyKey = key })
			_, _, other := dialectCall(d, 40, 1, stale)
			beside := append([]string{"Authorization", "Bearer " + stale}, hdr...)
			if d == DialectOpenAI {
				beside = append([]string{"api-key", stale}, hdr...)
			}
			want := http.StatusUnauthorized
			if d == DialectGemini {
				want = http.StatusBadRequest // API key not valid, as Google answers
			}
			for name, h := range map[string][]string{"another key": other, "a stale key beside it": beside, "no key": hdr[2:]} {
				resp, b := post(t, ts.URL, path, body, h...)
				if resp.StatusCode != want || strings.Contains(b, stale) || strings.Contains(b, key) {
					t.Errorf("%s: %d %s, want %d naming no key", name, resp.StatusCode, b, want)
				}
				errorKind(t, d, ProfilePTU, resp, b)
			}
			st := s.Stats()
			if st.Admitted != 1 || st.ForeignKeys != 3 || st.Rejected != 3 {
				t.Errorf("admitted %d, foreign keys %d, rejected %d; want 1, 3, 3", st.Admitted, st.ForeignKeys, st.Rejected)
			}
			if b, _ := json.Marshal(st); strings.Contains(string(b), "ptuprobe-referee") || strings.Contains(string(b), "sk-real") {
				t.Errorf("stats hold a key: %s", b)
			}
		})
	}
}

// readWire reads every advised wait a 429 carries, in wall ms, the way a
// client of the dialect would, independently of the simulator's writer:
// the retry headers, the reset of an exhausted limit (remaining 0), the
// RateLimit fields, Gemini's RetryInfo. now is the client's clock, which
// an absolute reset is measured from.
func readWire(t *testing.T, resp *http.Response, body string, now time.Time) map[string]int64 {
	t.Helper()
	h := resp.Header
	out := map[string]int64{}
	num := func(v string) int64 {
		t.Helper()
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("not a number: %q", v)
		}
		return n
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		out[SourceRetryAfterMS] = num(v)
	}
	if v := h.Get("Retry-After"); v != "" {
		out[SourceRetryAfter] = 1000 * num(v)
	}
	for kind, src := range map[string]string{"requests": SourceResetRequests, "tokens": SourceResetTokens} {
		if h.Get("X-Ratelimit-Remaining-"+kind) == "0" && h.Get("X-Ratelimit-Reset-"+kind) != "" {
			d, err := time.ParseDuration(h.Get("X-Ratelimit-Reset-" + kind))
			if err != nil {
				t.Fatal(err)
			}
			out[src] = d.Milliseconds()
		}
	}
	for kind, src := range map[string]string{"Requests": SourceAnthropicRequestsReset, "Tokens": SourceAnthropicTokensReset} {
		if h.Get("Anthropic-Ratelimit-"+kind+"-Remaining") == "0" {
			at, err := time.Parse(time.RFC3339, h.Get("Anthropic-Ratelimit-"+kind+"-Reset"))
			if err != nil {
				t.Fatal(err)
			}
			out[src] = ceilMS(at.Sub(now))
		}
	}
	if v := h.Get("RateLimit"); v != "" {
		var r, tt int64 = -1, -1
		for _, p := range strings.Split(v, ";")[1:] {
			k, val, _ := strings.Cut(p, "=")
			switch k {
			case "r":
				r = num(val)
			case "t":
				tt = num(val)
			}
		}
		if r == 0 {
			out[SourceRateLimit] = 1000 * tt
		}
	}
	if h.Get("RateLimit-Remaining") == "0" {
		out[SourceRateLimitReset] = 1000 * num(h.Get("RateLimit-Reset"))
	}
	if strings.Contains(body, "RetryInfo") {
		var e googleError
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			t.Fatal(err)
		}
		for _, d := range e.Error.Details {
			if d["@type"] == "type.googleapis.com/google.rpc.RetryInfo" {
				delay, err := time.ParseDuration(d["retryDelay"].(string))
				if err != nil {
					t.Fatal(err)
				}
				out[SourceRetryInfo] = delay.Milliseconds()
			}
		}
	}
	return out
}

// soonestOf is the shortest of the waits read.
func soonestOf(w map[string]int64) int64 {
	var ms int64
	for _, v := range w {
		if ms == 0 || v < ms {
			ms = v
		}
	}
	return ms
}

// advisedOf is what the simulator recorded for refusal n, by source.
func advisedOf(s *Server, n uint64) map[string]int64 {
	out := map[string]int64{}
	for _, a := range s.Advised() {
		if a.Refusal == n {
			out[a.Source] = a.WallMS
		}
	}
	return out
}

// TestDialectAnswers plays one script in every dialect on the test
// deployment (D = 1,000 tokens/s, C = 1,000, max_tokens 1 so a completion
// costs exactly its estimate): R1 costs 101 tokens (899 left, empty again
// in 101 ms), R2 1,401 (level 1,502: nothing left, back under 100% in 502
// ms), R3 is refused with a wait of 502 ms. The headers of each answer,
// the 429's body, what a client reads from it and what the simulator
// recorded are checked against that arithmetic, then the client comes
// back after the shortest wait it read and is on time.
func TestDialectAnswers(t *testing.T) {
	t.Parallel()
	type answer = map[string]string // header → value; "" means absent
	tests := []struct {
		name     string
		dialect  string
		mut      func(*Config)
		r1, r2   answer
		r3       answer
		advised  map[string]int64
		body429  string // the 429 error, as errorKind names it
		r3Header []string
	}{
		{
			name: "azure", dialect: DialectAzure,
			r1:      answer{"X-Ratelimit-Remaining-Tokens": "", "Retry-After": ""},
			r2:      answer{"Retry-After-Ms": ""},
			r3:      answer{"Retry-After-Ms": "502", "Retry-After": "1", "Ratelimit": ""},
			advised: map[string]int64{SourceRetryAfterMS: 502, SourceRetryAfter: 1000},
			body429: "429",
		},
		{
			name: "azure without retry headers", dialect: DialectAzure, mut: func(c *Config) { c.OmitRetryHeaders = true },
			r3:      answer{"Retry-After-Ms": "", "Retry-After": ""},
			advised: map[string]int64{},
			body429: "429",
		},
		{
			name: "openai", dialect: DialectOpenAI,
			r1: answer{"X-Ratelimit-Limit-Tokens": "1000", "X-Ratelimit-Remaining-Tokens": "899", "X-Ratelimit-Reset-Tokens": "101ms",
				"X-Ratelimit-Limit-Requests": "", "X-Ratelimit-Remaining-Requests": "", "Retry-After": ""},
			r2:      answer{"X-Ratelimit-Remaining-Tokens": "0", "X-Ratelimit-Reset-Tokens": "502ms", "Retry-After": ""},
			r3:      answer{"X-Ratelimit-Limit-Tokens": "1000", "X-Ratelimit-Remaining-Tokens": "0", "X-Ratelimit-Reset-Tokens": "502ms", "Retry-After": "1", "Retry-After-Ms": ""},
			advised: map[string]int64{SourceResetTokens: 502, SourceRetryAfter: 1000},
			body429: "tokens/rate_limit_exceeded",
		},
		{
			name: "openai without retry headers", dialect: DialectOpenAI, mut: func(c *Config) { c.OmitRetryHeaders = true },
			r3:      answer{"X-Ratelimit-Remaining-Tokens": "0", "X-Ratelimit-Reset-Tokens": "502ms", "Retry-After": "", "Retry-After-Ms": ""},
			advised: map[string]int64{SourceResetTokens: 502},
			body429: "tokens/rate_limit_exceeded",
		},
		{
			name: "anthropic", dialect: DialectAnthropic,
			r1: answer{"Anthropic-Ratelimit-Tokens-Limit": "1000", "Anthropic-Ratelimit-Tokens-Remaining": "899", "Anthropic-Ratelimit-Tokens-Reset": "2025-01-01T00:00:01Z",
				"Anthropic-Ratelimit-Input-Tokens-Remaining": "899", "Anthropic-Ratelimit-Output-Tokens-Limit": "1000", "Anthropic-Ratelimit-Output-Tokens-Remaining": "899",
				"Anthropic-Ratelimit-Requests-Limit": "", "Retry-After": ""},
			r2: answer{"Anthropic-Ratelimit-Tokens-Remaining": "0", "Anthropic-Ratelimit-Tokens-Reset": "2025-01-01T00:00:01Z"},
			r3: answer{"Anthropic-Ratelimit-Tokens-Remaining": "0", "Anthropic-Ratelimit-Input-Tokens-Remaining": "0", "Anthropic-Ratelimit-Output-Tokens-Remaining": "0",
				"Anthropic-Ratelimit-Tokens-Reset": "2025-01-01T00:00:01Z", "Anthropic-Ratelimit-Output-Tokens-Reset": "2025-01-01T00:00:01Z", "Retry-After": "1"},
			advised: map[string]int64{SourceAnthropicTokensReset: 1000, SourceRetryAfter: 1000},
			body429: "rate_limit_error",
		},
		{
			name: "anthropic with output tokens weighing 4", dialect: DialectAnthropic, mut: func(c *Config) { c.OutputWeight = 4 },
			// R1 costs 100 + 4 = 104 (896 left), R2 1,404 (level 1,508).
			r1:      answer{"Anthropic-Ratelimit-Tokens-Remaining": "896", "Anthropic-Ratelimit-Output-Tokens-Limit": "250", "Anthropic-Ratelimit-Output-Tokens-Remaining": "224"},
			r3:      answer{"Anthropic-Ratelimit-Output-Tokens-Remaining": "0", "Retry-After": "1"},
			advised: map[string]int64{SourceAnthropicTokensReset: 1000, SourceRetryAfter: 1000},
			body429: "rate_limit_error",
		},
		{
			name: "ietf", dialect: DialectIETF,
			r1:      answer{"Ratelimit-Policy": `"default";q=1000;qu="tokens";w=1`, "Ratelimit": `"default";r=899;t=1`, "Retry-After": "", "X-Ratelimit-Remaining-Tokens": ""},
			r2:      answer{"Ratelimit": `"default";r=0;t=1`},
			r3:      answer{"Ratelimit-Policy": `"default";q=1000;qu="tokens";w=1`, "Ratelimit": `"default";r=0;t=1`, "Retry-After": "", "Content-Type": "application/problem+json"},
			advised: map[string]int64{SourceRateLimit: 1000},
			body429: "https://iana.org/assignments/http-problem-types#quota-exceeded",
		},
		{
			name: "ietf with retry-after", dialect: DialectIETF, mut: func(c *Config) { c.IETFRetryAfter = true },
			r3:      answer{"Ratelimit": `"default";r=0;t=1`, "Retry-After": "1"},
			advised: map[string]int64{SourceRateLimit: 1000, SourceRetryAfter: 1000},
			body429: "https://iana.org/assignments/http-problem-types#quota-exceeded",
		},
		{
			name: "ietf, older drafts", dialect: DialectIETF, mut: func(c *Config) { c.IETFLegacy = true },
			r1:      answer{"Ratelimit-Limit": "1000", "Ratelimit-Remaining": "899", "Ratelimit-Reset": "1", "Ratelimit": "", "Ratelimit-Policy": ""},
			r3:      answer{"Ratelimit-Limit": "1000", "Ratelimit-Remaining": "0", "Ratelimit-Reset": "1", "Retry-After": ""},
			advised: map[string]int64{SourceRateLimitReset: 1000},
			body429: "https://iana.org/assignments/http-problem-types#quota-exceeded",
		},
		{
			name: "gemini", dialect: DialectGemini,
			r1:      answer{"X-Ratelimit-Remaining-Tokens": "", "Anthropic-Ratelimit-Tokens-Remaining": "", "Ratelimit": ""},
			r3:      answer{"Retry-After": "", "Retry-After-Ms": "", "X-Ratelimit-Reset-Tokens": "", "Ratelimit": ""},
			advised: map[string]int64{SourceRetryInfo: 502},
			body429: "RESOURCE_EXHAUSTED",
		},
		{
			name: "gemini with retry headers omitted: nothing changes", dialect: DialectGemini, mut: func(c *Config) { c.OmitRetryHeaders = true },
			r3:      answer{"Retry-After": ""},
			advised: map[string]int64{SourceRetryInfo: 502},
			body429: "RESOURCE_EXHAUSTED",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig()
			cfg.Dialect = tc.dialect
			if tc.mut != nil {
				tc.mut(&cfg)
			}
			s, clk, ts := newSim(t, cfg)
			s.wall = clk.Now // a manual wall clock: absolute resets are exact
			check := func(step string, resp *http.Response, want answer) {
				t.Helper()
				for k, v := range want {
					if got := resp.Header.Get(k); got != v {
						t.Errorf("%s: %s = %q, want %q", step, k, got, v)
					}
				}
			}
			send := func(chars int) (*http.Response, string) {
				path, body, hdr := dialectCall(tc.dialect, chars, 1, "k1")
				return post(t, ts.URL, path, body, hdr...)
			}
			resp, _ := send(400)
			check("R1", resp, tc.r1)
			resp, _ = send(5600)
			check("R2", resp, tc.r2)
			if resp.StatusCode != 200 {
				t.Fatalf("R2: status %d", resp.StatusCode)
			}
			resp, body := send(40)
			if resp.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("R3: status %d, want 429", resp.StatusCode)
			}
			check("R3", resp, tc.r3)
			if got := errorKind(t, tc.dialect, ProfilePTU, resp, body); got != tc.body429 {
				t.Errorf("429 body names %q, want %q: %s", got, tc.body429, body)
			}
			wire := readWire(t, resp, body, clk.Now())
			if !maps.Equal(wire, tc.advised) {
				t.Errorf("the 429 advises %v on the wire, want %v", wire, tc.advised)
			}
			if got := advisedOf(s, 1); !maps.Equal(got, tc.advised) {
				t.Errorf("the simulator recorded %v, want %v", got, tc.advised)
			}
			// Back after the shortest wait the client read: on time, and the
			// bucket has drained back to 100%, so admitted.
			back := soonestOf(wire)
			if back == 0 {
				back = 502 // advised nothing: come back when the model would admit
			}
			clk.Advance(time.Duration(back) * time.Millisecond)
			resp, _ = send(40)
			st := s.Stats()
			wantOnTime := uint64(1)
			if len(tc.advised) == 0 {
				wantOnTime = 0 // nothing advised, nothing to be on time for
			}
			if resp.StatusCode != 200 || st.EarlyReturns != 0 || st.RetriesOnTime != wantOnTime {
				t.Errorf("the retry: status %d, early %d, on time %d; want 200, 0, %d", resp.StatusCode, st.EarlyReturns, st.RetriesOnTime, wantOnTime)
			}
		})
	}
}

// TestPathIsRouted: Config.Path names, in every dialect, a path the
// simulator answers for its PTU deployment, streamed or not.
func TestPathIsRouted(t *testing.T) {
	t.Parallel()
	for _, d := range AllDialects() {
		for _, stream := range []bool{false, true} {
			t.Run(d+"/stream "+strconv.FormatBool(stream), func(t *testing.T) {
				t.Parallel()
				cfg := testConfig()
				cfg.Dialect = d
				_, _, ts := newSim(t, cfg)
				_, body, hdr := dialectCall(d, 40, 1, "k")
				path := cfg.Path(stream)
				switch {
				case d == DialectAzure || d == DialectIETF:
					path += "?api-version=2024-10-21"
				case d == DialectGemini && stream:
					path += "?alt=sse"
				}
				if stream && d != DialectGemini {
					body = strings.Replace(body, `"messages"`, `"stream":true,"messages"`, 1)
				}
				resp, out := post(t, ts.URL, path, body, hdr...)
				ct := resp.Header.Get("Content-Type")
				if resp.StatusCode != 200 || stream != (ct == "text/event-stream") {
					t.Fatalf("%s: %d %q %s", path, resp.StatusCode, ct, out)
				}
			})
		}
	}
}

// TestAnthropicBearerKey: the anthropic dialect reads the key from
// x-api-key or Authorization: Bearer (what @anthropic-ai/sdk sends given
// an auth token), and the same key either way is one key.
func TestAnthropicBearerKey(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Dialect, cfg.RequireKey = DialectAnthropic, true
	s, _, ts := newSim(t, cfg)
	path, body, hdr := dialectCall(DialectAnthropic, 40, 1, "k1")
	for _, h := range [][]string{hdr, {"Authorization", "Bearer k1", "anthropic-version", "2023-06-01"}} {
		if resp, b := post(t, ts.URL, path, body, h...); resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", h[0], resp.StatusCode, b)
		}
	}
	if st := s.Stats(); st.Admitted != 2 || len(st.Keys) != 1 {
		t.Errorf("admitted %d as %d keys, want 2 as one key", st.Admitted, len(st.Keys))
	}
}

// TestAnyNameIsThePTUDeployment: whatever model or deployment a call
// names, it is served by (and refused by) the PTU deployment, unless it
// names the standard deployment; the name is never echoed.
func TestAnyNameIsThePTUDeployment(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.SpilloverDeployment, cfg.SpilloverPerRequest = "sim-standard", true
	s, _, ts := newSim(t, cfg)
	fill := chatBody(4000, 1) // 1,001 tokens: the whole bucket
	if resp, b := post(t, ts.URL, "/openai/deployments/customer-gpt4o/chat/completions?api-version=x", fill); resp.StatusCode != 200 {
		t.Fatalf("any deployment: %d %s", resp.StatusCode, b)
	}
	resp, b := post(t, ts.URL, "/v1/chat/completions", `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 429 {
		t.Fatalf("any model after the PTU is full: %d, want 429", resp.StatusCode)
	}
	if strings.Contains(b, "gpt-4o") || strings.Contains(b, "customer") {
		t.Errorf("the answer echoes the name: %s", b)
	}
	if resp, b := post(t, ts.URL, "/openai/deployments/sim-standard/chat/completions?api-version=x", chatBody(40, 1)); resp.StatusCode != 200 || resp.Header.Get("X-Ms-Deployment-Name") != "sim-standard" {
		t.Fatalf("the standard deployment by name: %d %s", resp.StatusCode, b)
	}
	if st := s.Stats(); st.Admitted != 2 || st.Refused != 1 {
		t.Errorf("admitted %d refused %d, want 2 and 1", st.Admitted, st.Refused)
	}
}
