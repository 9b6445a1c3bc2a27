package sim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

type chatResponse struct {
	Object  string
	Choices []struct {
		Message      struct{ Role, Content string }
		FinishReason string `json:"finish_reason"`
	}
	Usage struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	}
}

func TestRoutesAndErrors(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.SpilloverDeployment = "sim-standard"
	_, _, ts := newSim(t, cfg)
	tests := []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
		code                     string
	}{
		{"azure route", "POST", azurePath, chatBody(40, 10), nil, 200, ""},
		{"openai route", "POST", "/v1/chat/completions", `{"model":"sim-ptu","messages":[{"role":"user","content":"hi"}]}`, nil, 200, ""},
		{"openai v1 under /openai", "POST", "/openai/v1/chat/completions", `{"model":"sim-ptu","messages":[{"role":"user","content":"hi"}]}`, nil, 200, ""},
		{"standard deployment directly", "POST", "/openai/deployments/sim-standard/chat/completions?api-version=x", chatBody(40, 10), nil, 200, ""},
		{"missing api-version", "POST", "/openai/deployments/sim-ptu/chat/completions", chatBody(40, 10), nil, 400, "MissingApiVersionParameter"},
		{"any deployment", "POST", "/openai/deployments/my-gpt4o/chat/completions?api-version=x", chatBody(40, 10), nil, 200, ""},
		{"any model", "POST", "/v1/chat/completions", `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`, nil, 200, ""},
		{"no model", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}]}`, nil, 400, "400"},
		{"unknown path", "POST", "/v1/embeddings", "{}", nil, 404, "404"},
		{"gateway route on ptu", "POST", "/v1/messages", "{}", nil, 404, "404"},
		{"GET", "GET", azurePath, "", nil, 405, "405"},
		{"garbage body", "POST", azurePath, "\x00\xffnot json", nil, 400, "400"},
		{"empty body", "POST", azurePath, "", nil, 400, "400"},
		{"array body", "POST", azurePath, "[1,2]", nil, 400, "400"},
		{"no messages", "POST", azurePath, `{"max_tokens":5}`, nil, 400, "400"},
		{"bad content", "POST", azurePath, `{"messages":[{"role":"user","content":42}]}`, nil, 400, "400"},
		{"negative max_tokens", "POST", azurePath, `{"messages":[{"role":"user","content":"x"}],"max_tokens":-1}`, nil, 400, "400"},
		{"huge max_tokens", "POST", azurePath, `{"messages":[{"role":"user","content":"x"}],"max_tokens":99999999}`, nil, 400, "400"},
		{"truncated JSON", "POST", azurePath, `{"messages":[{"role":"user","content":"x`, nil, 400, "400"},
		{"unknown spillover header", "POST", azurePath, chatBody(40, 10), []string{"x-ms-spillover-deployment", "other"}, 400, "InvalidSpilloverDeployment"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, _ := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
			for i := 0; i+1 < len(tc.hdr); i += 2 {
				req.Header.Set(tc.hdr[i], tc.hdr[i+1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			var e struct {
				Error struct{ Code, Message string }
			}
			_ = json.NewDecoder(resp.Body).Decode(&e)
			if e.Error.Code != tc.code {
				t.Errorf("error code %q, want %q", e.Error.Code, tc.code)
			}
			if strings.Contains(e.Error.Message, "not json") || strings.Contains(e.Error.Message, "nope") {
				t.Errorf("error message echoes the request: %q", e.Error.Message)
			}
		})
	}
}

func TestRequireKeyAndStatsNeverHoldTheKey(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.RequireKey = true
	s, _, ts := newSim(t, cfg)
	resp, _ := post(t, ts.URL, azurePath, chatBody(40, 10))
	if resp.StatusCode != 401 {
		t.Fatalf("no key: status %d, want 401", resp.StatusCode)
	}
	const secret = "sekrit-key-4711"
	for _, hdr := range [][]string{{"api-key", secret}, {"Authorization", "Bearer " + secret}, {"api-key", "other-key"}} {
		if resp, body := post(t, ts.URL, azurePath, chatBody(40, 10), hdr...); resp.StatusCode != 200 || strings.Contains(body, secret) {
			t.Fatalf("with %s: status %d body %s", hdr[0], resp.StatusCode, body)
		}
	}
	r, err := http.Get(ts.URL + "/sim/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var st Stats
	if err := json.NewDecoder(r.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(st)
	if strings.Contains(string(b), "sekrit") || strings.Contains(string(b), "other-key") {
		t.Fatalf("stats hold a key: %s", b)
	}
	if len(st.Keys) != 2 || st.Keys[0].Key != "key-0" || st.Keys[0].Admitted != 2 || st.Keys[1].Admitted != 1 {
		t.Errorf("per-key counters %+v, want key-0: 2 admitted, key-1: 1", st.Keys)
	}
	if st.Admitted != 3 || st.Rejected != 1 || s.Stats().Requests != 4 {
		t.Errorf("stats %+v", st)
	}
}

func TestPromptCaching(t *testing.T) {
	t.Parallel()
	system := func(chars int) string {
		return `{"messages":[{"role":"system","content":"` + strings.Repeat("s", chars) + `"},{"role":"user","content":"` + strings.Repeat("u", 400) + `"}],"max_tokens":1}`
	}
	tests := []struct {
		name        string
		first, then string
		gap         time.Duration
		wantCached  int
		wantPrompt  int
	}{
		{"long system message seen before", system(4400), system(4400), time.Minute, 1024, 1200}, // 1,100 tokens → 8 steps of 128
		{"in 128-token steps", system(8000), system(8000), time.Second, 1920, 2100},              // 2,000 tokens → 15 steps
		{"too short to cache", system(4000), system(4000), time.Second, 0, 1100},                 // 1,000 tokens < 1,024
		{"different system message", system(4400), system(4404), time.Second, 0, 1201},
		{"expired after 5 minutes", system(4400), system(4400), 5*time.Minute + time.Second, 0, 1200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig()
			cfg.PTU = 6000 // never over 100%
			s, clk, ts := newSim(t, cfg)
			post(t, ts.URL, azurePath, tc.first)
			clk.Advance(tc.gap)
			before := s.Stats().UtilizationPct
			resp, body := post(t, ts.URL, azurePath, tc.then)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			var cr chatResponse
			if err := json.Unmarshal([]byte(body), &cr); err != nil {
				t.Fatal(err)
			}
			if cr.Usage.PromptTokensDetails.CachedTokens != tc.wantCached || cr.Usage.PromptTokens != tc.wantPrompt {
				t.Errorf("cached %d of %d, want %d of %d", cr.Usage.PromptTokensDetails.CachedTokens, cr.Usage.PromptTokens, tc.wantCached, tc.wantPrompt)
			}
			// The cached part is discounted: cost = prompt − cached + 1.
			cap := cfg.CapacityTokens()
			if got, want := (s.Stats().UtilizationPct-before)*cap/100, float64(tc.wantPrompt-tc.wantCached+1); abs(got-want) > 1e-6 {
				t.Errorf("charged %.3f tokens, want %.0f", got, want)
			}
		})
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestCompletionCorrectsTheEstimate(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.TTFT = time.Second
	cfg.TPOT = 10 * time.Millisecond
	s, clk, ts := newSim(t, cfg)
	done := goPost(t, ts.URL, azurePath, chatBody(400, 100)) // 100 prompt + 100 budget
	waitSleepers(t, clk, 1)
	if got := s.Stats().UtilizationPct; got != 20 {
		t.Fatalf("utilization in flight %.2f%%, want 20%% (the estimate, 200 tokens)", got)
	}
	if s.Stats().InFlight != 1 {
		t.Fatalf("in flight %d, want 1", s.Stats().InFlight)
	}
	clk.Advance(2 * time.Second) // past TTFT + 100 × TPOT
	var cr chatResponse
	if err := json.Unmarshal([]byte(<-done), &cr); err != nil {
		t.Fatal(err)
	}
	n := cr.Usage.CompletionTokens
	if n < 30 || n > 100 {
		t.Fatalf("completion tokens %d, want 30..100", n)
	}
	// Level after completion: actual (100 + n) less 2 s of drain → 0.
	if got := s.Stats().UtilizationPct; got != 0 {
		t.Errorf("utilization after completion %.2f%%, want 0", got)
	}
	if cr.Object != "chat.completion" || len(cr.Choices) != 1 || len(cr.Choices[0].Message.Content) != 4*n-1 {
		t.Errorf("response %+v", cr)
	}
}

func TestCorrectionBeforeDrain(t *testing.T) {
	t.Parallel()
	// Drain slowly so the correction is visible: D = 1 token/s.
	cfg := testConfig()
	cfg.PTU = 0.06
	cfg.BucketDepth = 1000 * time.Second
	cfg.TTFT = time.Millisecond
	s, clk, ts := newSim(t, cfg)
	// A prompt of PrefillRefTokens takes TTFT to its first token.
	done := goPost(t, ts.URL, azurePath, chatBody(4*PrefillRefTokens, 100))
	waitSleepers(t, clk, 1)
	clk.Advance(time.Millisecond)
	var cr chatResponse
	if err := json.Unmarshal([]byte(<-done), &cr); err != nil {
		t.Fatal(err)
	}
	want := PrefillRefTokens + float64(cr.Usage.CompletionTokens) - 0.001 // actual cost less 1 ms of drain
	if got := s.Stats().UtilizationPct * 1000 / 100; abs(got-want) > 1e-6 {
		t.Errorf("level %.4f tokens, want %.4f", got, want)
	}
}

func TestStreaming(t *testing.T) {
	t.Parallel()
	for _, includeUsage := range []bool{false, true} {
		t.Run(fmt.Sprint("include_usage ", includeUsage), func(t *testing.T) {
			t.Parallel()
			cfg := testConfig()
			_, _, ts := newSim(t, cfg)
			body := `{"messages":[{"role":"user","content":"hello there"}],"max_tokens":40,"stream":true`
			if includeUsage {
				body += `,"stream_options":{"include_usage":true}`
			}
			resp, out := post(t, ts.URL, azurePath, body+"}")
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d, content-type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			var events []string
			sc := bufio.NewScanner(strings.NewReader(out))
			for sc.Scan() {
				if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
					events = append(events, d)
				}
			}
			if len(events) < 3 || events[len(events)-1] != "[DONE]" {
				t.Fatalf("events %v: want chunks ending in [DONE]", events)
			}
			var text strings.Builder
			usage := 0
			for _, e := range events[:len(events)-1] {
				var c struct {
					Object  string
					Choices []struct{ Delta struct{ Content string } }
					Usage   *struct {
						CompletionTokens int `json:"completion_tokens"`
					}
				}
				if err := json.Unmarshal([]byte(e), &c); err != nil || c.Object != "chat.completion.chunk" {
					t.Fatalf("event %q: %v", e, err)
				}
				for _, ch := range c.Choices {
					text.WriteString(ch.Delta.Content)
				}
				if c.Usage != nil {
					usage = c.Usage.CompletionTokens
				}
			}
			if includeUsage != (usage > 0) {
				t.Fatalf("include_usage %v, usage chunk reports %d", includeUsage, usage)
			}
			if usage > 0 && len(text.String()) != 4*usage-1 {
				t.Errorf("streamed %d characters for %d tokens", len(text.String()), usage)
			}
		})
	}
}

func TestSpilloverRouting(t *testing.T) {
	t.Parallel()
	base := testConfig()
	base.PTU = 0.6 // D = 10 tokens/s, C = 10: one request fills it
	base.SpilloverDeployment = "sim-standard"
	base.StandardRPM = 120 // 2 per second
	base.StandardTPM = 1_000_000
	t.Run("what the PTU refuses spills, until standard is full", func(t *testing.T) {
		t.Parallel()
		_, clk, ts := newSim(t, base)
		clk.Advance(100 * time.Millisecond)
		if resp, _ := post(t, ts.URL, azurePath, chatBody(req100, 1)); resp.StatusCode != 200 || resp.Header.Get("X-Ms-Spillover-From-Deployment") != "" {
			t.Fatalf("first request: %d, spilled %q", resp.StatusCode, resp.Header.Get("X-Ms-Spillover-From-Deployment"))
		}
		for i := range 2 {
			resp, _ := post(t, ts.URL, azurePath, chatBody(req100, 1))
			if resp.StatusCode != 200 || resp.Header.Get("X-Ms-Spillover-From-Deployment") != DefaultDeployment || resp.Header.Get("X-Ms-Deployment-Name") != "sim-standard" {
				t.Fatalf("spill %d: status %d headers %v", i, resp.StatusCode, resp.Header)
			}
			if got := resp.Header.Get("X-Ratelimit-Remaining-Requests"); got != []string{"1", "0"}[i] {
				t.Errorf("spill %d: remaining requests %q", i, got)
			}
		}
		resp, _ := post(t, ts.URL, azurePath, chatBody(req100, 1))
		// PTU: 90 tokens over at 10/s = 9 s; standard: 900 ms to the next second.
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After-Ms") != "900" || resp.Header.Get("X-Ratelimit-Remaining-Requests") != "0" || resp.Header.Get("X-Ratelimit-Remaining-Tokens") == "" {
			t.Fatalf("both full: status %d headers %v", resp.StatusCode, resp.Header)
		}
		clk.Advance(900 * time.Millisecond)
		if resp, _ := post(t, ts.URL, azurePath, chatBody(req100, 1)); resp.StatusCode != 200 || resp.Header.Get("X-Ms-Deployment-Name") != "sim-standard" {
			t.Fatalf("after the advised wait: status %d", resp.StatusCode)
		}
	})
	t.Run("per request: only with the header", func(t *testing.T) {
		t.Parallel()
		cfg := base
		cfg.SpilloverPerRequest = true
		s, _, ts := newSim(t, cfg)
		post(t, ts.URL, azurePath, chatBody(req100, 1))
		if resp, _ := post(t, ts.URL, azurePath, chatBody(req100, 1)); resp.StatusCode != 429 || resp.Header.Get("X-Ratelimit-Remaining-Requests") != "" {
			t.Fatalf("without header: status %d", resp.StatusCode)
		}
		if resp, _ := post(t, ts.URL, azurePath, chatBody(req100, 1), "x-ms-spillover-deployment", "sim-standard"); resp.StatusCode != 200 || resp.Header.Get("X-Ms-Spillover-From-Deployment") != DefaultDeployment {
			t.Fatalf("with header: status %d", resp.StatusCode)
		}
		if st := s.Stats(); st.Spilled != 1 || st.Refused != 1 || st.Admitted != 2 {
			t.Errorf("stats %+v", st)
		}
	})
}

// TestStandardDeploymentAsFallback is the policy lab's redirect target:
// with per-request spillover, what the PTU deployment refuses stays a 429
// (nothing spills unasked), and the standard deployment, called by name,
// serves under its own limits and advises its own waits.
func TestStandardDeploymentAsFallback(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		rpm, tpm int
		wantWait string // the standard deployment's retry-after-ms once full
	}{
		{"requests per minute, over 1-second windows", 120, 1_000_000, "1000"},
		{"tokens per minute", 6000, 250, "60000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig()
			cfg.PTU = 0.6 // D = 10 tokens/s, C = 10: one request fills it
			cfg.SpilloverDeployment = "sim-standard"
			cfg.SpilloverPerRequest = true
			cfg.StandardRPM, cfg.StandardTPM = tc.rpm, tc.tpm
			cfg.UtilizationHeader = true
			s, clk, ts := newSim(t, cfg)
			body := chatBody(req100, 1) // 100 tokens to either deployment

			if resp, _ := post(t, ts.URL, azurePath, body); resp.StatusCode != 200 || resp.Header.Get("X-Ms-Deployment-Name") != "" {
				t.Fatalf("PTU: status %d, deployment %q", resp.StatusCode, resp.Header.Get("X-Ms-Deployment-Name"))
			}
			resp, msg := post(t, ts.URL, azurePath, body)
			if resp.StatusCode != 429 || resp.Header.Get("Retry-After-Ms") != "9000" || resp.Header.Get("X-Ms-Spillover-From-Deployment") != "" ||
				resp.Header.Get("X-Ratelimit-Remaining-Requests") != "" || !strings.Contains(msg, "provisioned throughput") {
				t.Fatalf("PTU refusal: status %d headers %v body %s; want a 429 of its own, no spillover", resp.StatusCode, resp.Header, msg)
			}
			util := s.Stats().UtilizationPct

			for i, remaining := range []string{"1", "0"} {
				resp, _ := post(t, ts.URL, standardPath, body)
				if resp.StatusCode != 200 || resp.Header.Get("X-Ms-Deployment-Name") != "sim-standard" ||
					resp.Header.Get("X-Ms-Spillover-From-Deployment") != "" || resp.Header.Get("Azure-Openai-Deployment-Utilization") != "" {
					t.Fatalf("standard %d: status %d headers %v", i, resp.StatusCode, resp.Header)
				}
				if got := resp.Header.Get("X-Ratelimit-Remaining-Requests"); tc.rpm == 120 && got != remaining {
					t.Errorf("standard %d: remaining requests %q, want %s", i, got, remaining)
				}
			}
			resp, msg = post(t, ts.URL, standardPath, body)
			if resp.StatusCode != 429 || resp.Header.Get("Retry-After-Ms") != tc.wantWait || resp.Header.Get("X-Ratelimit-Remaining-Tokens") == "" ||
				resp.Header.Get("Azure-Openai-Deployment-Utilization") != "" || !strings.Contains(msg, "rate limit of this standard deployment") {
				t.Fatalf("standard full: status %d headers %v body %s; want its own 429, retry-after-ms %s", resp.StatusCode, resp.Header, msg, tc.wantWait)
			}
			st := s.Stats()
			if st.UtilizationPct != util || st.Spilled != 0 || st.Standard == nil || st.Standard.RequestsThisSecond != 2 || st.Refused != 2 || st.Admitted != 3 {
				t.Errorf("stats %+v (standard %+v): the standard's traffic must not touch the PTU", st, st.Standard)
			}
			ms, _ := strconv.Atoi(tc.wantWait)
			clk.Advance(time.Duration(ms) * time.Millisecond)
			if resp, _ := post(t, ts.URL, standardPath, body); resp.StatusCode != 200 {
				t.Fatalf("standard after its advised wait: status %d", resp.StatusCode)
			}
		})
	}
}

func TestDeterministicUnderSeed(t *testing.T) {
	t.Parallel()
	run := func(seed int64) []int {
		cfg := testConfig()
		cfg.PTU = 6000
		cfg.Seed = seed
		_, _, ts := newSim(t, cfg)
		var lens []int
		for range 20 {
			_, body := post(t, ts.URL, azurePath, chatBody(40, 200))
			var cr chatResponse
			_ = json.Unmarshal([]byte(body), &cr)
			lens = append(lens, cr.Usage.CompletionTokens)
		}
		return lens
	}
	a, b, c := run(7), run(7), run(8)
	if fmtInts(a) != fmtInts(b) {
		t.Fatalf("same seed, different completions: %v vs %v", a, b)
	}
	if fmtInts(a) == fmtInts(c) {
		t.Errorf("different seeds, same completions: %v", a)
	}
	for _, n := range a {
		if n < 60 || n > 200 {
			t.Errorf("completion %d outside 30%%..100%% of 200", n)
		}
	}
}

func fmtInts(v []int) string {
	b, _ := json.Marshal(v)
	return string(b)
}
