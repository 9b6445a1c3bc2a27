package sim

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
)

// responseObject is the part of a Responses API answer the tests read.
type responseObject struct {
	ID     string
	Object string
	Status string
	Model  string
	Output []struct {
		Type    string
		Role    string
		Content []struct{ Type, Text string }
	}
	Usage *struct {
		InputTokens        int `json:"input_tokens"`
		OutputTokens       int `json:"output_tokens"`
		TotalTokens        int `json:"total_tokens"`
		InputTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
	}
}

// checkResponse: a completed response whose one message's text is as
// long as its usage says (four characters a token), its prompt counted.
func checkResponse(t *testing.T, r responseObject, prompt int) {
	t.Helper()
	if r.Object != "response" || r.Usage == nil || len(r.Output) != 1 || len(r.Output[0].Content) != 1 {
		t.Fatalf("not a response with one message: %+v", r)
	}
	c := r.Output[0].Content[0]
	if r.Output[0].Type != "message" || r.Output[0].Role != "assistant" || c.Type != "output_text" {
		t.Errorf("output %+v", r.Output[0])
	}
	if u := r.Usage; u.InputTokens != prompt || len(c.Text) != 4*u.OutputTokens-1 || u.TotalTokens != u.InputTokens+u.OutputTokens {
		t.Errorf("usage %+v for %d characters of text, want %d input tokens", *u, len(c.Text), prompt)
	}
	if r.Status != "completed" && r.Status != "incomplete" || strings.Contains(r.Model, "my-") {
		t.Errorf("status %q, model %q", r.Status, r.Model)
	}
}

// TestResponsesAPI: POST /v1/responses (and Azure's /openai/v1/responses
// and preview /openai/responses?api-version=)
// answers the Responses API's shape, whole or streamed, with usage; its
// input is a string or messages, instructions count as the prompt.
func TestResponsesAPI(t *testing.T) {
	t.Parallel()
	const body = `{"model":"my-gpt","input":"` + "0123456789abcdef" + `","max_output_tokens":20}`
	const msgs = `{"model":"my-gpt","instructions":"12345678","input":[{"role":"user","content":[{"type":"input_text","text":"abcdefgh"}]}],"max_output_tokens":5}`
	for _, tc := range []struct {
		dialect, path, body string
		prompt              int
	}{
		{DialectOpenAI, "/v1/responses", body, 4},
		{DialectAzure, "/openai/v1/responses", body, 4},
		// openai-node's AzureOpenAI (7.59.0) sends responses.create to the
		// preview route: /responses is not among its deployment paths.
		{DialectAzure, "/openai/responses?api-version=2025-04-01-preview", body, 4},
		{DialectAzure, "/v1/responses", msgs, 4},
		{DialectIETF, "/openai/v1/responses", msgs, 4},
	} {
		cfg := testConfig()
		cfg.Dialect = tc.dialect
		_, _, ts := newSim(t, cfg)
		resp, b := post(t, ts.URL, tc.path, tc.body, "Authorization", "Bearer k")
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", tc.dialect, tc.path, resp.StatusCode, b)
		}
		var r responseObject
		if err := json.Unmarshal([]byte(b), &r); err != nil {
			t.Fatal(err)
		}
		checkResponse(t, r, tc.prompt)

		resp, b = post(t, ts.URL, tc.path, strings.Replace(tc.body, `{`, `{"stream":true,`, 1), "Authorization", "Bearer k")
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("stream: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		checkResponseStream(t, b, tc.prompt)
	}
}

// checkResponseStream reads the events: response.created first, the
// deltas, response.completed last with the whole text and the usage.
func checkResponseStream(t *testing.T, stream string, prompt int) {
	t.Helper()
	var types []string
	var text strings.Builder
	var last responseObject
	sc := bufio.NewScanner(strings.NewReader(stream))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type     string
			Delta    string
			Response responseObject
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		types = append(types, ev.Type)
		text.WriteString(ev.Delta)
		last = ev.Response
	}
	if len(types) < 3 || types[0] != "response.created" || types[len(types)-1] != "response.completed" {
		t.Fatalf("events %v", types)
	}
	checkResponse(t, last, prompt)
	if got := last.Output[0].Content[0].Text; text.String() != got {
		t.Errorf("deltas %q, completed text %q", text.String(), got)
	}
}

// TestResponsesAPIRefusals: a bad Responses body is a 400 naming its
// field; a Responses call in a dialect without the route is a 404.
func TestResponsesAPIRefusals(t *testing.T) {
	t.Parallel()
	_, _, ts := newSim(t, testConfig())
	for _, tc := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"model":"m"}`, 400, "'input'"},
		{`{"model":"m","input":42}`, 400, "'input'"},
		{`{"model":"m","input":"x","max_output_tokens":0}`, 400, "max_output_tokens"},
		{`{"input":"x"}`, 400, "model"},
	} {
		resp, b := post(t, ts.URL, "/v1/responses", tc.body)
		if resp.StatusCode != tc.status || !strings.Contains(b, tc.want) {
			t.Errorf("%s: %d %s, want %d naming %s", tc.body, resp.StatusCode, b, tc.status, tc.want)
		}
	}
	cfg := testConfig()
	cfg.Dialect = DialectAnthropic
	_, _, ats := newSim(t, cfg)
	if resp, _ := post(t, ats.URL, "/v1/responses", `{"model":"m","input":"x"}`, "anthropic-version", "2023-06-01"); resp.StatusCode != 404 {
		t.Errorf("anthropic dialect: %d, want 404", resp.StatusCode)
	}
}
