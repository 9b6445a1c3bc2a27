package sim

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
)

// messageResponse is the Messages API's answer.
type messageResponse struct {
	ID, Type, Role, Model string
	Content               []struct{ Type, Text string }
	StopReason            string  `json:"stop_reason"`
	StopSequence          *string `json:"stop_sequence"`
	Usage                 struct {
		InputTokens              int `json:"input_tokens"`
		OutputTokens             int `json:"output_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	}
}

// generateContentResponse is Gemini's answer, or one chunk of a stream.
type generateContentResponse struct {
	Candidates []struct {
		Content struct {
			Parts []struct{ Text string }
			Role  string
		}
		FinishReason string
		Index        int
	}
	UsageMetadata struct {
		PromptTokenCount        int
		CandidatesTokenCount    int
		TotalTokenCount         int
		CachedContentTokenCount int
	}
	ModelVersion, ResponseID string
}

// sseEvents splits a server-sent event stream into (event name, data).
func sseEvents(t *testing.T, stream string) (names, data []string) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(stream))
	sc.Buffer(nil, 1<<20)
	name := ""
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			name = v
		} else if v, ok := strings.CutPrefix(line, "data: "); ok {
			names, data = append(names, name), append(data, v)
			name = ""
		}
	}
	return names, data
}

// TestMessagesAnswers: the anthropic dialect answers in the Messages API's
// shape, JSON or events, and reports a cached system prompt as
// cache_read_input_tokens, outside input_tokens.
func TestMessagesAnswers(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Dialect = DialectAnthropic
	cfg.PTU = 6000 // never over 100%
	_, _, ts := newSim(t, cfg)
	system := strings.Repeat("s", 4400) // 1,100 tokens: 1,024 cached the second time
	body := func(stream bool) string {
		b := `{"model":"sim-ptu","system":"` + system + `","max_tokens":40,"messages":[{"role":"user","content":[{"type":"text","text":"` + strings.Repeat("u", 400) + `"}]}]`
		if stream {
			b += `,"stream":true`
		}
		return b + "}"
	}
	av := []string{"anthropic-version", "2023-06-01"}
	for i, wantCached := range []int{0, 1024} {
		resp, out := post(t, ts.URL, "/v1/messages", body(false), av...)
		var m messageResponse
		if err := json.Unmarshal([]byte(out), &m); err != nil || resp.StatusCode != 200 {
			t.Fatalf("call %d: %d %v: %s", i, resp.StatusCode, err, out)
		}
		n := m.Usage.OutputTokens
		if m.Type != "message" || m.Role != "assistant" || m.Model != claudeModel || !strings.HasPrefix(m.ID, "msg_") ||
			len(m.Content) != 1 || m.Content[0].Type != "text" || len(m.Content[0].Text) != 4*n-1 || m.StopSequence != nil {
			t.Errorf("call %d: %+v", i, m)
		}
		if m.StopReason != "end_turn" && !(m.StopReason == "max_tokens" && n == 40) {
			t.Errorf("call %d: stop_reason %q with %d of 40 tokens", i, m.StopReason, n)
		}
		if m.Usage.CacheReadInputTokens != wantCached || m.Usage.InputTokens != 1200-wantCached || m.Usage.CacheCreationInputTokens != 0 {
			t.Errorf("call %d: usage %+v, want %d read from cache of 1,200", i, m.Usage, wantCached)
		}
	}

	resp, out := post(t, ts.URL, "/v1/messages", body(true), av...)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	names, data := sseEvents(t, out)
	if len(names) < 6 || names[0] != "message_start" || names[1] != "content_block_start" ||
		names[len(names)-3] != "content_block_stop" || names[len(names)-2] != "message_delta" || names[len(names)-1] != "message_stop" {
		t.Fatalf("events %v", names)
	}
	var text strings.Builder
	var start struct {
		Type    string
		Message messageResponse
	}
	var delta struct {
		Delta struct {
			StopReason string `json:"stop_reason"`
		}
		Usage struct {
			OutputTokens int `json:"output_tokens"`
		}
	}
	for i, d := range data {
		var ev struct {
			Type  string
			Delta struct{ Type, Text string }
		}
		if err := json.Unmarshal([]byte(d), &ev); err != nil || ev.Type != names[i] {
			t.Fatalf("event %s %q: %v", names[i], d, err)
		}
		switch names[i] {
		case "message_start":
			_ = json.Unmarshal([]byte(d), &start)
		case "content_block_delta":
			if ev.Delta.Type != "text_delta" {
				t.Errorf("delta %q", d)
			}
			text.WriteString(ev.Delta.Text)
		case "message_delta":
			_ = json.Unmarshal([]byte(d), &delta)
		}
	}
	n := delta.Usage.OutputTokens
	if start.Message.Usage.CacheReadInputTokens != 1024 || start.Message.Usage.InputTokens != 176 || start.Message.Model != claudeModel {
		t.Errorf("message_start %+v", start.Message)
	}
	if n < 12 || n > 40 || text.Len() != 4*n-1 || delta.Delta.StopReason == "" {
		t.Errorf("streamed %d characters, message_delta %+v", text.Len(), delta)
	}
}

// TestGenerateContentAnswers: the gemini dialect answers generateContent
// with one GenerateContentResponse, and streamGenerateContent with chunks
// as server-sent events (?alt=sse) or as a JSON array, the last carrying
// finishReason and the usage of the whole answer.
func TestGenerateContentAnswers(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Dialect = DialectGemini
	cfg.PTU = 6000
	_, _, ts := newSim(t, cfg)
	body := `{"systemInstruction":{"parts":[{"text":"` + strings.Repeat("s", 4400) + `"}]},"contents":[{"role":"user","parts":[{"text":"` +
		strings.Repeat("u", 400) + `"}]}],"generationConfig":{"maxOutputTokens":40}}`
	check := func(name string, chunks []generateContentResponse, wantCached int) {
		t.Helper()
		if len(chunks) == 0 {
			t.Fatalf("%s: no chunk", name)
		}
		var text strings.Builder
		for i, c := range chunks {
			if len(c.Candidates) != 1 || c.Candidates[0].Content.Role != "model" || c.ModelVersion != geminiModel || c.ResponseID == "" {
				t.Fatalf("%s: chunk %d %+v", name, i, c)
			}
			if last := i == len(chunks)-1; last != (c.Candidates[0].FinishReason != "") {
				t.Errorf("%s: chunk %d of %d has finishReason %q", name, i, len(chunks), c.Candidates[0].FinishReason)
			}
			for _, p := range c.Candidates[0].Content.Parts {
				text.WriteString(p.Text)
			}
		}
		u := chunks[len(chunks)-1].UsageMetadata
		n := u.CandidatesTokenCount
		if u.PromptTokenCount != 1200 || u.TotalTokenCount != 1200+n || u.CachedContentTokenCount != wantCached || n < 12 || n > 40 || text.Len() != 4*n-1 {
			t.Errorf("%s: usage %+v for %d characters, want 1,200 prompt tokens, %d cached", name, u, text.Len(), wantCached)
		}
		if f := chunks[len(chunks)-1].Candidates[0].FinishReason; f != "STOP" && !(f == "MAX_TOKENS" && n == 40) {
			t.Errorf("%s: finishReason %q with %d of 40 tokens", name, f, n)
		}
	}

	resp, out := post(t, ts.URL, "/v1beta/models/sim-ptu:generateContent", body)
	var one generateContentResponse
	if err := json.Unmarshal([]byte(out), &one); err != nil || resp.StatusCode != 200 || strings.Contains(out, "cachedContentTokenCount") {
		t.Fatalf("generateContent: %d %v: %s (nothing cached yet: no cachedContentTokenCount)", resp.StatusCode, err, out)
	}
	check("generateContent", []generateContentResponse{one}, 0)

	resp, out = post(t, ts.URL, "/v1beta/models/sim-ptu:streamGenerateContent?alt=sse", body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("sse: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	_, data := sseEvents(t, out)
	var chunks []generateContentResponse
	for _, d := range data {
		var c generateContentResponse
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatalf("sse chunk %q: %v", d, err)
		}
		chunks = append(chunks, c)
	}
	check("sse", chunks, 1024)

	resp, out = post(t, ts.URL, "/v1beta/models/sim-ptu:streamGenerateContent", body)
	chunks = nil
	if err := json.Unmarshal([]byte(out), &chunks); err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("json array: %d %v: %s", resp.StatusCode, err, out)
	}
	check("json array", chunks, 1024)
}
