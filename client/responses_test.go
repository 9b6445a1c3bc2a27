package client

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/sim"
)

// responsesBody is the Responses API request as documented, decoded
// strictly: a member the test does not know is an error.
type responsesBody struct {
	Model           string `json:"model"`
	Instructions    string `json:"instructions"`
	Input           string `json:"input"`
	MaxOutputTokens int    `json:"max_output_tokens"`
	Stream          bool   `json:"stream"`
}

// TestResponsesOnTheWire: the URL, the key's header and the body, on
// OpenAI's route and on Azure's v1 route.
func TestResponsesOnTheWire(t *testing.T) {
	t.Parallel()
	type seen struct {
		path, query, auth, apiKey string
		body                      []byte
	}
	var mu sync.Mutex
	var got seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = seen{r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), r.Header.Get("Api-Key"), b}
		mu.Unlock()
		w.Write([]byte(`{"id":"resp_1","object":"response","status":"completed","output":[],"usage":{"input_tokens":2000,"input_tokens_details":{"cached_tokens":1500},"output_tokens":64,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":2064}}`))
	}))
	defer srv.Close()
	tests := []struct {
		name                string
		cfg                 Config
		path, auth, apiKey  string
		model, instructions string
		stream              bool
	}{
		{"openai", Config{URL: srv.URL + "/v1/responses", Key: wireKey}, "/v1/responses", "Bearer " + wireKey, "", DefaultModel, "", false},
		{"openai, model, prefix and stream", Config{URL: srv.URL + "/v1/responses", Model: wireModel, Key: wireKey, SharedPrefixTokens: 1500, Stream: true},
			"/v1/responses", "Bearer " + wireKey, "", wireModel, "prefix", true},
		{"azure v1", Config{Endpoint: srv.URL + "/", Deployment: "dep-1", Key: wireKey}, "/openai/v1/responses", "", wireKey, "dep-1", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.API, cfg.PromptTokens, cfg.MaxTokens, cfg.Timeout = APIResponses, 2000, 64, 5*time.Second
			tg, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			rec := results.Blank()
			tg.attempt(context.Background(), 7, &rec)
			mu.Lock()
			g := got
			mu.Unlock()
			if g.path != tt.path || g.query != "" || g.auth != tt.auth || g.apiKey != tt.apiKey {
				t.Fatalf("path %q query %q auth %q api-key %q", g.path, g.query, g.auth, g.apiKey)
			}
			var b responsesBody
			decodeStrict(t, g.body, &b)
			if b.Model != tt.model || b.MaxOutputTokens != 64 || b.Stream != tt.stream || len(b.Input) != (2000-cfg.SharedPrefixTokens)*CharsPerToken {
				t.Fatalf("body %+v", b)
			}
			if (b.Instructions != "") != (tt.instructions != "") || len(b.Instructions) != cfg.SharedPrefixTokens*CharsPerToken {
				t.Fatalf("instructions of %d chars, want %d", len(b.Instructions), cfg.SharedPrefixTokens*CharsPerToken)
			}
			if rec.Status != 200 || rec.PromptTokens != 2000 || rec.CachedTokens != 1500 || rec.CompletionTokens != 64 {
				t.Fatalf("record %d %d/%d/%d", rec.Status, rec.PromptTokens, rec.CachedTokens, rec.CompletionTokens)
			}
		})
	}
}

// TestResponsesSettings: what New refuses, in words naming the field.
func TestResponsesSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cfg   Config
		field string
	}{
		{"no URL nor endpoint", Config{}, "URL"},
		{"a base URL", Config{URL: "http://127.0.0.1:1"}, "URL"},
		{"both", Config{URL: "http://127.0.0.1:1/v1/responses", Endpoint: "http://127.0.0.1:1", Deployment: "d"}, "URL"},
		{"azure without a deployment", Config{Endpoint: "http://127.0.0.1:1"}, "Deployment"},
		{"max_completion_tokens", Config{URL: "http://127.0.0.1:1/v1/responses", MaxTokensField: "max_completion_tokens"}, "MaxTokensField"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := tt.cfg
			cfg.API, cfg.PromptTokens, cfg.MaxTokens = APIResponses, 100, 10
			_, err := New(cfg)
			checkSettingError(t, err, tt.field)
		})
	}
}

// TestResponsesKeyFromTheEnvironment: OPENAI_API_KEY as Bearer on
// OpenAI's route; with an endpoint, azure's AZURE_OPENAI_API_KEY in
// api-key.
func TestResponsesKeyFromTheEnvironment(t *testing.T) {
	t.Parallel()
	env := map[string]string{envOpenAIKey: "openai-key-123456", envAzureKey: "azure-key-123456"}
	getenv := func(k string) string { return env[k] }
	for _, tt := range []struct {
		spec        Spec
		key, header string
	}{
		{Spec{API: APIResponses, URL: "http://127.0.0.1:1/v1/responses"}, "openai-key-123456", "Authorization"},
		{Spec{API: APIResponses, Endpoint: "http://127.0.0.1:1", Deployment: "d"}, "azure-key-123456", "api-key"},
	} {
		tt.spec.Timeout = time.Second
		c, err := Resolve(tt.spec, getenv)
		if err != nil || c.Key != tt.key || c.KeyHeader != tt.header {
			t.Errorf("%+v: key %q in %q, err %v; want %q in %q", tt.spec, c.Key, c.KeyHeader, err, tt.key, tt.header)
		}
	}
}

// TestResponsesAgainstTheSimulator: the embedded simulator's /v1/responses
// (openai dialect) and /openai/v1/responses (azure), whole and streamed:
// the usage is read from the answer, ttfb comes before the end.
func TestResponsesAgainstTheSimulator(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		dialect string
		stream  bool
	}{{sim.DialectOpenAI, false}, {sim.DialectOpenAI, true}, {sim.DialectAzure, false}, {sim.DialectAzure, true}} {
		name := tt.dialect
		if tt.stream {
			name += ", streamed"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			scfg := sim.DefaultConfig()
			scfg.Dialect = tt.dialect
			scfg.TTFT, scfg.TPOT = 2*time.Millisecond, 100*time.Microsecond
			s, err := sim.New(scfg)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(s)
			defer srv.Close()
			cfg := Config{API: APIResponses, Key: wireKey, PromptTokens: 400, SharedPrefixTokens: 300, MaxTokens: 20, Stream: tt.stream, Timeout: 10 * time.Second}
			if tt.dialect == sim.DialectAzure {
				cfg.Endpoint, cfg.Deployment = srv.URL, "any-deployment"
			} else {
				cfg.URL, cfg.Model = srv.URL+"/v1/responses", "any-model"
			}
			tg, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			for seq := range 2 {
				rec := results.Blank()
				tg.attempt(context.Background(), seq, &rec)
				if rec.Status != 200 || rec.Error != "" {
					t.Fatalf("status %d error %q", rec.Status, rec.Error)
				}
				if rec.PromptTokens < 350 || rec.PromptTokens > 450 || rec.CompletionTokens < 1 || rec.CompletionTokens > 20 || rec.CachedTokens == results.None {
					t.Fatalf("usage %d/%d/%d", rec.PromptTokens, rec.CachedTokens, rec.CompletionTokens)
				}
				if rec.TTFBMS <= 0 || rec.TTFBMS > rec.LatencyMS {
					t.Fatalf("ttfb %v, latency %v", rec.TTFBMS, rec.LatencyMS)
				}
			}
		})
	}
}

// TestResponsesUsageEdges: the answer's shapes, and what a target may do.
func TestResponsesUsageEdges(t *testing.T) {
	t.Parallel()
	none := results.None
	ev := func(typ, rest string) string {
		return "event: " + typ + "\ndata: {\"type\":\"" + typ + "\"" + rest + "}\n\n"
	}
	usage := `"usage":{"input_tokens":40,"input_tokens_details":{"cached_tokens":32},"output_tokens":9,"total_tokens":49}`
	created := ev("response.created", `,"response":{"id":"r","status":"in_progress","output":[],"usage":null}`)
	longText := strings.Repeat("lorem ipsum ", 3*keptBodyBytes/12)
	tests := []struct {
		name                       string
		stream                     bool
		body                       string
		prompt, cached, completion int
	}{
		{"whole", false, `{"id":"r","object":"response","status":"completed","output":[],` + usage + `}`, 40, 32, 9},
		{"whole, long output", false, `{"id":"r","output":[{"type":"message","content":[{"type":"output_text","text":"` + longText + `"}]}],` + usage + `}`, 40, 32, 9},
		{"stream", true, created + ev("response.output_text.delta", `,"delta":"hi"`) + ev("response.completed", `,"response":{"id":"r","status":"completed",`+usage+`}`), 40, 32, 9},
		{"stream cut by max_output_tokens", true, created + ev("response.incomplete", `,"response":{"status":"incomplete",`+usage+`}`), 40, 32, 9},
		{"stream, long final event", true, created + ev("response.completed", `,"response":{"output":[{"type":"message","content":[{"type":"output_text","text":"`+longText+`"}]}],`+usage+`}`), 40, 32, 9},
		{"stream without its end", true, created + ev("response.output_text.delta", `,"delta":"hi"`), none, none, none},
		{"delta text that names the event", true, created + ev("response.output_text.delta", `,"delta":"\"response.completed\" \"usage\":{\"input_tokens\":5}"`), none, none, none},
		{"negative and huge counts", false, `{"usage":{"input_tokens":-1,"input_tokens_details":{"cached_tokens":9223372036854775807},"output_tokens":3}}`, none, none, 3},
		{"error body", false, `{"error":{"message":"Rate limit","type":"requests","code":"rate_limit_exceeded"}}`, none, none, none},
		{"not JSON", false, `<html>`, none, none, none},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := results.Blank()
			tg := &Target{cfg: Config{API: APIResponses, Stream: tt.stream}}
			tg.parseUsage(bodyOf(APIResponses, tt.stream, tt.body), &r)
			if r.PromptTokens != tt.prompt || r.CachedTokens != tt.cached || r.CompletionTokens != tt.completion {
				t.Fatalf("usage %d/%d/%d, want %d/%d/%d", r.PromptTokens, r.CachedTokens, r.CompletionTokens, tt.prompt, tt.cached, tt.completion)
			}
			if got := streamOf(tg, []byte(tt.body), streamRead); tt.stream && usageOfRow(got) != usageOfRow(r) {
				t.Fatalf("read as it comes: usage %v, want %v", usageOfRow(got), usageOfRow(r))
			}
		})
	}
}
