package sim

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestParseRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		body    string
		kind    bodyKind
		prompt  int
		system  int
		max     int
		stream  bool
		usage   bool
		wantErr string
	}{
		{"string content", `{"messages":[{"role":"user","content":"abcdefgh"}],"max_tokens":7}`, kindChat, 2, 0, 7, false, false, ""},
		{"chars rounded up", `{"messages":[{"role":"user","content":"abcde"}]}`, kindChat, 2, 0, 256, false, false, ""},
		{"runes not bytes", `{"messages":[{"role":"user","content":"ééééé"}]}`, kindChat, 2, 0, 256, false, false, ""},
		{"parts", `{"messages":[{"role":"user","content":[{"type":"text","text":"abcd"},{"type":"image_url"},{"type":"text","text":"efgh"}]}]}`, kindChat, 2, 0, 256, false, false, ""},
		{"system message", `{"messages":[{"role":"system","content":"ssss"},{"role":"user","content":"uuuu"}]}`, kindChat, 2, 1, 256, false, false, ""},
		{"system field", `{"system":"ssssssss","messages":[{"role":"user","content":"uuuu"}]}`, kindChat, 3, 2, 256, false, false, ""},
		{"max_completion_tokens wins", `{"messages":[{"role":"user","content":"x"}],"max_tokens":5,"max_completion_tokens":9}`, kindChat, 1, 0, 9, false, false, ""},
		{"stream with usage", `{"messages":[{"role":"user","content":"x"}],"stream":true,"stream_options":{"include_usage":true}}`, kindChat, 1, 0, 256, true, true, ""},
		{"null content", `{"messages":[{"role":"assistant","content":null},{"role":"user","content":"x"}]}`, kindChat, 1, 0, 256, false, false, ""},
		{"count", `{"messages":[{"role":"user","content":"abcdefgh"}]}`, kindCount, 2, 0, 0, false, false, ""},
		{"count ignores the budget", `{"messages":[{"content":"abcd"}],"max_tokens":5}`, kindCount, 1, 0, 0, false, false, ""},
		{"null text part", `{"messages":[{"content":[{"text":null},{"type":"text","text":"abcd"}]}]}`, kindChat, 1, 0, 256, false, false, ""},
		{"developer message is the system text", `{"messages":[{"role":"developer","content":"dddd"},{"content":"uuuu"}]}`, kindChat, 2, 1, 256, false, false, ""},
		{"last of a repeated field wins", `{"messages":[{"content":"abcdefgh"}],"messages":[{"content":"x"}],"max_tokens":3,"max_tokens":null}`, kindChat, 1, 0, 256, false, false, ""},
		{"null system field is no system field", `{"system":null,"messages":[{"role":"system","content":"ssss"}]}`, kindChat, 1, 1, 256, false, false, ""},
		{"image", `{"prompt":"a cat on a mat","n":3}`, kindImage, 4, 0, 0, false, false, ""},
		{"not an object", `"hi"`, kindChat, 0, 0, 0, false, false, "JSON object"},
		{"no messages", `{"messages":[]}`, kindChat, 0, 0, 0, false, false, "'messages'"},
		{"number content", `{"messages":[{"content":1}]}`, kindChat, 0, 0, 0, false, false, "messages[0].content"},
		{"zero max_tokens", `{"messages":[{"content":"x"}],"max_tokens":0}`, kindChat, 0, 0, 0, false, false, "max_tokens"},
		{"fractional max_tokens", `{"messages":[{"content":"x"}],"max_tokens":1.5}`, kindChat, 0, 0, 0, false, false, "must be an integer"},
		{"escapes count as one character", `{"messages":[{"content":"\u00e9\n\"\\ab"}]}`, kindChat, 2, 0, 256, false, false, ""},
		{"escaped role", `{"messages":[{"role":"syst\u0065m","content":"abcd"}]}`, kindChat, 1, 1, 256, false, false, ""},
		{"unknown fields skipped", `{"tools":[{"a":[1,2,{"b":null}]}],"temperature":0.5e-3,"messages":[{"content":"abcd","name":"x"}],"user":true}`, kindChat, 1, 0, 256, false, false, ""},
		{"nulls", `{"model":null,"max_tokens":null,"stream":null,"stream_options":null,"system":null,"messages":[null,{"role":null,"content":null},{"content":"abcd"}]}`, kindChat, 1, 0, 256, false, false, ""},
		{"include_usage without stream", `{"messages":[{"content":"x"}],"stream_options":{"include_usage":true}}`, kindChat, 1, 0, 256, false, false, ""},
		{"trailing garbage", `{"messages":[{"content":"x"}]} x`, kindChat, 0, 0, 0, false, false, "valid JSON"},
		{"trailing NUL byte", "{\"messages\":[{\"content\":\"x\"}]}\x00", kindChat, 0, 0, 0, false, false, "valid JSON"},
		{"raw control character", "{\"messages\":[{\"content\":\"a\tb\"}]}", kindChat, 0, 0, 0, false, false, "valid JSON"},
		{"bad escape", `{"messages":[{"content":"\q"}]}`, kindChat, 0, 0, 0, false, false, "valid JSON"},
		{"too deep", `{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `,"messages":[{"content":"x"}]}`, kindChat, 0, 0, 0, false, false, "nested too deeply"},
		{"string max_tokens", `{"messages":[{"content":"x"}],"max_tokens":"5"}`, kindChat, 0, 0, 0, false, false, "'max_tokens': must be an integer"},
		{"huge max_tokens", `{"messages":[{"content":"x"}],"max_tokens":123456789012345678901234567890}`, kindChat, 0, 0, 0, false, false, "max_tokens must be"},
		{"part not an object", `{"messages":[{"content":["x"]}]}`, kindChat, 0, 0, 0, false, false, "array of parts"},
		{"image without prompt", `{"n":1}`, kindImage, 0, 0, 0, false, false, "'prompt'"},
		{"image n too big", `{"prompt":"x","n":11}`, kindImage, 0, 0, 0, false, false, "'n'"},
		{"image body with a bad messages field", `{"prompt":"x","messages":5}`, kindImage, 0, 0, 0, false, false, "'messages': must be an array"},
		{"chat body with a bad n", `{"messages":[{"content":"x"}],"n":"2"}`, kindChat, 0, 0, 0, false, false, "'n': must be an integer"},
		{"second message not an object", `{"messages":[{"content":"x"},7]}`, kindChat, 0, 0, 0, false, false, "'messages[1]': must be an object"},
		{"model too long", `{"model":"` + strings.Repeat("m", 257) + `","messages":[{"content":"x"}]}`, kindChat, 0, 0, 0, false, false, "'model': is too long"},
		{"stream_options not an object", `{"messages":[{"content":"x"}],"stream_options":true}`, kindChat, 0, 0, 0, false, false, "'stream_options': must be an object"},
		{"gemini contents", `{"contents":[{"role":"user","parts":[{"text":"abcd"},{"inlineData":{}},{"text":"efgh"}]},{"role":"model","parts":[{"text":"ijkl"}]}]}`, kindGemini, 3, 0, 256, false, false, ""},
		{"gemini system instruction and budget", `{"systemInstruction":{"parts":[{"text":"ssssssss"}]},"contents":[{"parts":[{"text":"uuuu"}]}],"generationConfig":{"temperature":1,"maxOutputTokens":42}}`, kindGemini, 3, 2, 42, false, false, ""},
		{"gemini snake case", `{"system_instruction":{"parts":[{"text":"ssss"}]},"contents":[{"parts":[{"text":"uuuu"}]}],"generation_config":{"max_output_tokens":7}}`, kindGemini, 2, 1, 7, false, false, ""},
		{"gemini ignores chat fields", `{"contents":[{"parts":[{"text":"uuuu"}]}],"max_tokens":9,"stream":true}`, kindGemini, 1, 0, 256, false, false, ""},
		{"gemini without contents", `{"messages":[{"content":"x"}]}`, kindGemini, 0, 0, 0, false, false, "contents is not specified"},
		{"gemini empty contents", `{"contents":[]}`, kindGemini, 0, 0, 0, false, false, "contents is not specified"},
		{"gemini content not an object", `{"contents":["x"]}`, kindGemini, 0, 0, 0, false, false, "'contents[0]': must be an object"},
		{"gemini parts not an array", `{"contents":[{"parts":"x"}]}`, kindGemini, 0, 0, 0, false, false, "'contents[0]': 'parts': must be an array"},
		{"gemini zero budget", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"maxOutputTokens":0}}`, kindGemini, 0, 0, 0, false, false, "generationConfig.maxOutputTokens must be"},
		{"gemini generationConfig not an object", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":3}`, kindGemini, 0, 0, 0, false, false, "'generationConfig': must be an object"},
		{"chat body with bad contents", `{"messages":[{"content":"x"}],"contents":5}`, kindChat, 0, 0, 0, false, false, "'contents': must be an array"},
		{"responses string input", `{"input":"abcdefgh","max_output_tokens":9,"stream":true}`, kindResponses, 2, 0, 9, true, false, ""},
		{"responses messages and instructions", `{"instructions":"ssss","input":[{"role":"user","content":[{"type":"input_text","text":"uuuu"}]}]}`, kindResponses, 2, 1, 256, false, false, ""},
		{"responses developer message first", `{"input":[{"role":"developer","content":"ssssssss"},{"role":"user","content":"u"}]}`, kindResponses, 3, 2, 256, false, false, ""},
		{"responses ignore max_tokens", `{"input":"x","max_tokens":3}`, kindResponses, 1, 0, 256, false, false, ""},
		{"responses without input", `{"messages":[{"content":"x"}]}`, kindResponses, 0, 0, 0, false, false, "'input' must be"},
		{"responses input a number", `{"input":5}`, kindResponses, 0, 0, 0, false, false, "'input': must be a string or an array of messages"},
		{"responses zero budget", `{"input":"x","max_output_tokens":0}`, kindResponses, 0, 0, 0, false, false, "max_output_tokens must be"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := parseRequest([]byte(tc.body), tc.kind, 256)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, errBadRequest) {
					t.Fatalf("error %v, want one about %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.PromptTokens != tc.prompt || r.SystemTokens != tc.system || r.MaxTokens != tc.max || r.Stream != tc.stream || r.IncludeUsage != tc.usage {
				t.Errorf("got %+v", r)
			}
		})
	}
}

func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		chatBody(4000, 100),
		`{"messages":[{"role":"system","content":[{"type":"text","text":"x"}]}],"stream":true}`,
		`{"system":[{"type":"text","text":"s"}],"messages":[{"content":"u"}],"max_tokens":16384}`,
		`{"prompt":"p","n":2}`, `{`, `[]`, `null`, "", "\x00", `{"messages":[{"content":{"a":1}}]}`,
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Add([]byte(`{"systemInstruction":{"parts":[{"text":"s"}]},"contents":[{"parts":[{"text":"u"}]}],"generationConfig":{"maxOutputTokens":3}}`), uint8(kindGemini))
	f.Add([]byte(`{"instructions":"s","input":[{"role":"user","content":"u"}],"max_output_tokens":3}`), uint8(kindResponses))
	f.Fuzz(func(t *testing.T, body []byte, k uint8) {
		kind := bodyKind(k % 5)
		r, err := parseRequest(body, kind, DefaultMaxTokens)
		// parseRequest accepts only JSON, and calls "not valid JSON" only what
		// is not (the scanner itself is fuzzed in internal/jsonscan).
		if err == nil && !json.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
		if err != nil && strings.Contains(err.Error(), "not valid JSON") && json.Valid(body) {
			t.Fatalf("rejected valid JSON %q as invalid", body)
		}
		if err != nil {
			if !errors.Is(err, errBadRequest) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q is not one bad-request line", err)
			}
			return
		}
		if r.PromptTokens < 0 || r.SystemTokens > r.PromptTokens || ((kind == kindChat || kind == kindGemini || kind == kindResponses) && (r.MaxTokens < 1 || r.MaxTokens > MaxOutputTokens)) {
			t.Fatalf("parsed %+v from %q", r, body)
		}
	})
}

// FuzzServe throws arbitrary bodies and paths at both profiles in every
// dialect: the server must answer every one with a well-formed status,
// never panic.
func FuzzServe(f *testing.F) {
	f.Add([]byte(chatBody(100, 10)), "/openai/deployments/sim-ptu/chat/completions?api-version=1", uint8(0))
	f.Add([]byte(`{"model":"sim-ptu","messages":[{"content":"x"}],"stream":true}`), "/v1/chat/completions", uint8(1))
	f.Add([]byte(`{"max_tokens":3,"messages":[{"content":"x"}]}`), "/v1/messages", uint8(2))
	f.Add([]byte(`{"max_tokens":3,"messages":[{"content":"x"}]}`), "/v1/messages", uint8(7))
	f.Add([]byte(`{"prompt":"x"}`), "/v1/images/generations", uint8(6))
	f.Add([]byte("\xff\xfe"), "/v1/messages/count_tokens", uint8(5))
	f.Add([]byte(`{"contents":[{"parts":[{"text":"x"}]}]}`), "/v1beta/models/sim-ptu:streamGenerateContent?alt=sse", uint8(4))
	f.Add([]byte(`{"contents":[{"parts":[{"text":"x"}]}]}`), "/v1beta/models/sim-ptu:generateContent?key=k", uint8(9))
	var servers []*Server
	for _, profile := range []string{ProfilePTU, ProfileGateway} {
		for _, d := range AllDialects() {
			cfg := testConfig()
			cfg.Profile, cfg.Dialect = profile, d
			cfg.Clock = instantClock{}
			s, err := New(cfg)
			if err != nil {
				f.Fatal(err)
			}
			servers = append(servers, s)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, path string, mode uint8) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req, err := http.NewRequest(http.MethodPost, "http://sim"+path, strings.NewReader(string(body)))
		if err != nil {
			return // not a URL a client could send
		}
		req.Header.Set("Anthropic-Version", "2023-06-01")
		rec := httptest.NewRecorder()
		servers[int(mode)%len(servers)].ServeHTTP(rec, req)
		switch rec.Code {
		case 200, 400, 404, 405, 413, 429:
		default:
			t.Fatalf("status %d for %q", rec.Code, body)
		}
	})
}

// instantClock never moves and never makes anyone wait: latency is
// skipped, so a fuzz run needs no one to drive time.
type instantClock struct{}

func (instantClock) Now() time.Time                                   { return t0 }
func (instantClock) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }
