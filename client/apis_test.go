package client

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// The Messages API and the Gemini API on the wire: what a server receives
// (method, path, query, headers, body as JSON) and what is read from what
// it answers (usage, from JSON and from event streams).

const (
	wireKey   = "sk-wire-key-Ux7Rp2Lq9Zc4"
	wireModel = "wire-model-1.5"
)

// newAPITarget is a Target for api against srvURL with the key in the
// API's header, 2000 prompt tokens (prefix of them shared) and 64 output
// tokens.
func newAPITarget(t *testing.T, api, url string, prefix int, stream bool) *Target {
	t.Helper()
	tg, err := New(Config{API: api, URL: url, Model: wireModel, Key: wireKey,
		PromptTokens: 2000, SharedPrefixTokens: prefix, MaxTokens: 64, Stream: stream, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tg.Close)
	return tg
}

// anthropicBody and geminiBody are the request bodies as the APIs document
// them, decoded strictly: a member the test does not know is an error.
type anthropicBody struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	System    []struct {
		Type         string `json:"type"`
		Text         string `json:"text"`
		CacheControl struct {
			Type string `json:"type"`
		} `json:"cache_control"`
	} `json:"system"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Stream bool `json:"stream"`
}

type geminiPart struct {
	Text string `json:"text"`
}

type geminiBody struct {
	SystemInstruction *struct {
		Parts []geminiPart `json:"parts"`
	} `json:"systemInstruction"`
	Contents []struct {
		Role  string       `json:"role"`
		Parts []geminiPart `json:"parts"`
	} `json:"contents"`
	GenerationConfig struct {
		MaxOutputTokens int `json:"maxOutputTokens"`
	} `json:"generationConfig"`
}

func decodeStrict(t *testing.T, b []byte, v any) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		t.Fatalf("body %.200s…: %v", b, err)
	}
}

// prompt is the system and user text of a body of api.
func prompt(t *testing.T, api string, body []byte) (system, user string) {
	t.Helper()
	switch api {
	case APIAnthropic:
		var b anthropicBody
		decodeStrict(t, body, &b)
		if len(b.System) == 1 {
			system = b.System[0].Text
		}
		if len(b.Messages) != 1 || b.Messages[0].Role != "user" {
			t.Fatalf("messages %+v", b.Messages)
		}
		return system, b.Messages[0].Content
	default:
		var b geminiBody
		decodeStrict(t, body, &b)
		if b.SystemInstruction != nil && len(b.SystemInstruction.Parts) == 1 {
			system = b.SystemInstruction.Parts[0].Text
		}
		if len(b.Contents) != 1 || b.Contents[0].Role != "user" || len(b.Contents[0].Parts) != 1 {
			t.Fatalf("contents %+v", b.Contents)
		}
		return system, b.Contents[0].Parts[0].Text
	}
}

func TestAPIRequestOnTheWire(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		api       string
		path      string // appended to the server's URL for Config.URL
		prefix    int
		stream    bool
		wantPath  string
		wantQuery string
		check     func(t *testing.T, body []byte)
	}{
		{"anthropic", APIAnthropic, "/v1/messages", 0, false, "/v1/messages", "", func(t *testing.T, body []byte) {
			var b anthropicBody
			decodeStrict(t, body, &b)
			if b.Model != wireModel || b.MaxTokens != 64 || b.Stream || b.System != nil {
				t.Fatalf("body %+v", b)
			}
			if bytes.Contains(body, []byte(`"stream"`)) || bytes.Contains(body, []byte(`"system"`)) {
				t.Fatalf("body has members it should not: %.300s", body)
			}
		}},
		{"anthropic, prefix and stream", APIAnthropic, "/v1/messages", 1500, true, "/v1/messages", "", func(t *testing.T, body []byte) {
			var b anthropicBody
			decodeStrict(t, body, &b)
			if b.Model != wireModel || b.MaxTokens != 64 || !b.Stream || len(b.System) != 1 ||
				b.System[0].Type != "text" || b.System[0].CacheControl.Type != "ephemeral" {
				t.Fatalf("body %+v", b)
			}
		}},
		{"anthropic through a gateway path", APIAnthropic, "/anthropic/v1/messages", 0, false, "/anthropic/v1/messages", "", nil},
		{"gemini", APIGemini, "", 0, false, "/v1beta/models/" + wireModel + ":generateContent", "", func(t *testing.T, body []byte) {
			var b geminiBody
			decodeStrict(t, body, &b)
			if b.GenerationConfig.MaxOutputTokens != 64 || b.SystemInstruction != nil {
				t.Fatalf("body %+v", b)
			}
			if bytes.Contains(body, []byte(wireModel)) {
				t.Fatal("the model is in the body; it belongs in the path")
			}
		}},
		{"gemini, prefix and stream", APIGemini, "/", 1500, true, "/v1beta/models/" + wireModel + ":streamGenerateContent", "alt=sse", func(t *testing.T, body []byte) {
			var b geminiBody
			decodeStrict(t, body, &b)
			if b.GenerationConfig.MaxOutputTokens != 64 || b.SystemInstruction == nil || len(b.SystemInstruction.Parts) != 1 {
				t.Fatalf("body %+v", b)
			}
		}},
		{"gemini behind a gateway path and query", APIGemini, "/gw/google?tenant=t1", 0, true, "/gw/google/v1beta/models/" + wireModel + ":streamGenerateContent", "alt=sse&tenant=t1", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, seen := recordingServer(t, http.StatusOK)
			tg := newAPITarget(t, tt.api, srv.URL+tt.path, tt.prefix, tt.stream)
			if r := send(tg); r.Status != http.StatusOK || r.Error != "" {
				t.Fatalf("row %+v", r)
			}
			got := <-seen
			if got.method != http.MethodPost || got.url.Path != tt.wantPath || got.url.RawQuery != tt.wantQuery {
				t.Fatalf("request %s %s?%s, want POST %s?%s", got.method, got.url.Path, got.url.RawQuery, tt.wantPath, tt.wantQuery)
			}
			if strings.Contains(got.url.String(), wireKey) || strings.Contains(strings.ToLower(got.url.RawQuery), "key") {
				t.Fatalf("the key is in the URL: %s", got.url)
			}
			keyHeader := map[string]string{APIAnthropic: "X-Api-Key", APIGemini: "X-Goog-Api-Key"}[tt.api]
			for _, h := range []string{"X-Api-Key", "X-Goog-Api-Key", "Api-Key", "Authorization"} {
				want := ""
				if h == keyHeader {
					want = wireKey
				}
				if v := got.header.Get(h); v != want {
					t.Errorf("header %s = %q, want %q", h, v, want)
				}
			}
			wantVersion := ""
			if tt.api == APIAnthropic {
				wantVersion = DefaultAnthropicVersion
			}
			if v := got.header.Get("Anthropic-Version"); v != wantVersion {
				t.Errorf("anthropic-version %q, want %q", v, wantVersion)
			}
			if ct := got.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if !bytes.Equal(got.body, tg.Body(7)) {
				t.Fatalf("sent body differs from Body(7)")
			}
			if tt.check != nil {
				tt.check(t, got.body)
			}
			// The prompt: the shared prefix identical across requests, the
			// user text unique, about 2000 tokens of 4 characters in all.
			sys1, user1 := prompt(t, tt.api, tg.Body(1))
			sys2, user2 := prompt(t, tt.api, tg.Body(2))
			if sys1 != sys2 || len(sys1) != tt.prefix*CharsPerToken || user1 == user2 {
				t.Fatalf("prefix %d and %d chars (equal %v), user texts equal %v", len(sys1), len(sys2), sys1 == sys2, user1 == user2)
			}
			if n := len(sys1) + len(user1); n < 7900 || n > 8100 {
				t.Fatalf("prompt of %d chars, want about 8000", n)
			}
		})
	}
}

// TestAnthropicVersionHeader: the version asked for is the one sent.
func TestAnthropicVersionHeader(t *testing.T) {
	t.Parallel()
	srv, seen := recordingServer(t, http.StatusOK)
	tg, err := New(Config{API: APIAnthropic, URL: srv.URL + "/v1/messages", Model: wireModel, AnthropicVersion: "2026-10-21",
		PromptTokens: 10, MaxTokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	send(tg)
	if v := (<-seen).header.Get("Anthropic-Version"); v != "2026-10-21" {
		t.Fatalf("anthropic-version %q", v)
	}
}

// TestGeminiModelResourceName: a model named by its resource name
// ("models/…") is sent by its id.
func TestGeminiModelResourceName(t *testing.T) {
	t.Parallel()
	tg, err := New(Config{API: APIGemini, URL: "https://generativelanguage.googleapis.com", Model: "models/gemini-2.5-flash",
		PromptTokens: 10, MaxTokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if want := "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"; tg.url != want {
		t.Fatalf("URL %s, want %s", tg.url, want)
	}
}

// TestUsageFixtures serves the documented response shapes in testdata and
// checks the token counts recorded, in the results' (OpenAI's) terms.
func TestUsageFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file                       string
		api                        string
		stream                     bool
		prompt, cached, completion int
	}{
		// 262 uncached + 1536 read from the cache.
		{"anthropic-message.json", APIAnthropic, false, 1798, 1536, 100},
		// message_start: 262 + 1536 written to the cache; message_delta: 100 out.
		{"anthropic-stream.sse", APIAnthropic, true, 1798, 0, 100},
		// message_delta repeats the input counts, cumulative.
		{"anthropic-stream-cumulative.sse", APIAnthropic, true, 1798, 1536, 100},
		// promptTokenCount holds the cached part; 27 answer + 72 thinking tokens.
		{"gemini-generate.json", APIGemini, false, 1712, 1021, 99},
		// No cachedContentTokenCount, no thoughtsTokenCount: 0, left out.
		{"gemini-generate-uncached.json", APIGemini, false, 262, 0, 12},
		{"gemini-stream.sse", APIGemini, true, 1712, 1021, 99},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				if tt.stream {
					w.Header().Set("Content-Type", "text/event-stream")
				}
				w.Write(body)
			}))
			defer srv.Close()
			path := ""
			if tt.api == APIAnthropic {
				path = "/v1/messages"
			}
			r := send(newAPITarget(t, tt.api, srv.URL+path, 0, tt.stream))
			if r.Status != 200 || r.Error != "" || r.PromptTokens != tt.prompt || r.CachedTokens != tt.cached || r.CompletionTokens != tt.completion || r.MaxTokens != 64 {
				t.Fatalf("row %+v, want usage %d/%d/%d", r, tt.prompt, tt.cached, tt.completion)
			}
		})
	}
}

// streamOf is the row's usage of body as tg reads a streamed answer, the
// body coming in pieces of piece bytes.
func streamOf(tg *Target, body []byte, piece int) results.Record {
	b := responseBody{stream: &streamBody{usage: tg.usageFor(), newTail: tg.newBody}}
	for p := body; len(p) > 0; {
		n := min(piece, len(p))
		b.stream.write(p[:n])
		p = p[n:]
	}
	b.stream.end()
	r := results.Blank()
	b.parseUsage(tg, &r)
	return r
}

// usageOfRow is r's token counts.
func usageOfRow(r results.Record) [3]int {
	return [3]int{r.PromptTokens, r.CachedTokens, r.CompletionTokens}
}

// bodyOf is b as a response body read into a Target's bodyTail.
func bodyOf(api string, stream bool, b string) *bodyTail {
	t := &Target{cfg: Config{API: api, Stream: stream}}
	body := t.newBody()
	body.Write([]byte(b))
	return &body
}

// TestUsageEdges: what the documents allow or a target may do: counts
// absent, null or hostile; an event stream or a JSON body longer than
// what is kept whole; content that mentions usage.
func TestUsageEdges(t *testing.T) {
	t.Parallel()
	none := results.None
	longText := strings.Repeat("lorem ipsum ", 3*keptBodyBytes/12)
	delta := func(text string) string {
		return `event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + text + `"}}` + "\n\n"
	}
	start := func(usage string) string {
		return "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_x\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":" + usage + "}}\n\n"
	}
	end := func(usage string) string {
		return "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":" + usage + "}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	}
	gchunk := func(usage string) string {
		return `data: {"candidates":[{"content":{"parts":[{"text":"lorem ipsum "}],"role":"model"},"index":0}],"usageMetadata":` + usage + "}\r\n\r\n"
	}
	tests := []struct {
		name                       string
		api                        string
		stream                     bool
		body                       string
		prompt, cached, completion int
	}{
		{"anthropic stream longer than the tail: input counts from the head", APIAnthropic, true,
			start(`{"input_tokens":20,"cache_read_input_tokens":1000,"cache_creation_input_tokens":0,"output_tokens":1}`) +
				strings.Repeat(delta("lorem ipsum "), 3*keptBodyBytes/100) + end(`{"output_tokens":9000}`),
			1020, 1000, 9000},
		{"anthropic delta overrides what it carries, null leaves", APIAnthropic, true,
			start(`{"input_tokens":20,"cache_read_input_tokens":0,"output_tokens":1}`) + end(`{"input_tokens":25,"cache_read_input_tokens":null,"output_tokens":7}`),
			25, 0, 7},
		{"anthropic stream without message_start", APIAnthropic, true, end(`{"output_tokens":7}`), none, none, 7},
		{"anthropic stream whose start has no cache counts", APIAnthropic, true,
			start(`{"input_tokens":20,"output_tokens":1}`) + end(`{"output_tokens":7}`), 20, none, 7},
		{"anthropic stream without usage", APIAnthropic, true, delta("hi") + "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", none, none, none},
		{"anthropic content that names an event is no event", APIAnthropic, true,
			delta(`message_delta \"usage\":{\"output_tokens\":5}`) + end(`{"output_tokens":7}`), none, none, 7},
		{"anthropic long message, usage last", APIAnthropic, false,
			`{"id":"msg_x","type":"message","content":[{"type":"text","text":"` + longText + `"}],"usage":{"input_tokens":3,"cache_creation_input_tokens":2,"cache_read_input_tokens":1,"output_tokens":9000}}`,
			6, 1, 9000},
		{"anthropic negative and huge counts are no counts", APIAnthropic, false,
			`{"usage":{"input_tokens":10,"cache_creation_input_tokens":-5,"cache_read_input_tokens":9223372036854775807,"output_tokens":-1}}`,
			10, none, none},
		{"anthropic error body", APIAnthropic, false, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, none, none, none},
		{"gemini long stream: the last chunk's totals", APIGemini, true,
			strings.Repeat(gchunk(`{"promptTokenCount":40,"candidatesTokenCount":3,"totalTokenCount":43}`), 3*keptBodyBytes/150) +
				gchunk(`{"promptTokenCount":40,"candidatesTokenCount":8000,"thoughtsTokenCount":10,"cachedContentTokenCount":32}`),
			40, 32, 8010},
		{"gemini long JSON, usage near the end", APIGemini, false,
			`{"candidates":[{"content":{"parts":[{"text":"` + longText + `"}],"role":"model"}}],"usageMetadata":{"promptTokenCount":40,"candidatesTokenCount":9000},"modelVersion":"m","responseId":"r"}`,
			40, 0, 9000},
		{"gemini usage without a prompt count is no usage", APIGemini, false, `{"usageMetadata":{"candidatesTokenCount":5}}`, none, none, none},
		{"gemini content that names usageMetadata", APIGemini, true,
			`data: {"candidates":[{"content":{"parts":[{"text":"\"usageMetadata\": {\"promptTokenCount\": 5}"}]}}]}` + "\r\n\r\n", none, none, none},
		{"gemini stream cut before its usage", APIGemini, true, `data: {"candidates":[],"usageMetadata":{"promptTokenCount":4`, none, none, none},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := results.Blank()
			tg := &Target{cfg: Config{API: tt.api, Stream: tt.stream}}
			tg.parseUsage(bodyOf(tt.api, tt.stream, tt.body), &r)
			if r.PromptTokens != tt.prompt || r.CachedTokens != tt.cached || r.CompletionTokens != tt.completion {
				t.Fatalf("usage %d/%d/%d, want %d/%d/%d", r.PromptTokens, r.CachedTokens, r.CompletionTokens, tt.prompt, tt.cached, tt.completion)
			}
			if got := streamOf(tg, []byte(tt.body), streamRead); tt.stream && usageOfRow(got) != usageOfRow(r) {
				t.Fatalf("read as it comes: usage %v, want %v", usageOfRow(got), usageOfRow(r))
			}
		})
	}
}

// FuzzUsage holds every usage reader (the Responses API's too) to never failing on what a target
// sends and never recording a negative count.
func FuzzUsage(f *testing.F) {
	for _, name := range []string{"anthropic-message.json", "anthropic-stream.sse", "anthropic-stream-cumulative.sse", "gemini-generate.json", "gemini-stream.sse"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"usage":{"prompt_tokens":1,"completion_tokens":2}}`))
	f.Add([]byte("data: {\"usage\":{\"input_tokens\":1}}\r\rdata:\n\n"))
	f.Add([]byte(`{"object":"response","usage":{"input_tokens":4,"input_tokens_details":{"cached_tokens":2},"output_tokens":3}}`))
	f.Add([]byte("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":4,\"output_tokens\":3}}}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, api := range []string{APIOpenAI, APIAnthropic, APIGemini, APIResponses} {
			for _, stream := range []bool{false, true} {
				r := results.Blank()
				tg := &Target{cfg: Config{API: api, Stream: stream}}
				tg.parseUsage(bodyOf(api, stream, string(body)), &r)
				for _, n := range []int{r.PromptTokens, r.CachedTokens, r.CompletionTokens} {
					if n != results.None && n < 0 {
						t.Fatalf("%s: negative count in %+v", api, r)
					}
				}
				if !stream || len(body) > keptBodyBytes {
					continue
				}
				// Read as it comes, in pieces, a streamed answer gives
				// the usage it gives read whole.
				for _, piece := range []int{1, 1 + len(body)%13, streamRead} {
					if got := streamOf(tg, body, piece); usageOfRow(got) != usageOfRow(r) {
						t.Fatalf("%s in pieces of %d: usage %v, read whole %v", api, piece, usageOfRow(got), usageOfRow(r))
					}
				}
			}
		}
	})
}

// eventLog is a streamUsage that notes the events it is given.
type eventLog struct{ got []string }

func (l *eventLog) event(data []byte) bool { l.got = append(l.got, string(data)); return false }
func (l *eventLog) cut(head, tail []byte) bool {
	l.got = append(l.got, "cut:"+string(head[:4])+"…"+string(tail[len(tail)-4:]))
	return false
}
func (l *eventLog) counted() tokens { return noTokens() }

// TestEachEvent: fields and line ends as the event stream format has them,
// whatever the pieces the stream comes in; an event longer than
// maxEventBytes is read from its head and tail.
func TestEachEvent(t *testing.T) {
	t.Parallel()
	long := "<" + strings.Repeat("x", 3*maxEventBytes) + ">"
	stream := "ta: cut\n\nevent: a\r\ndata: 1\r\ndata:2\r\n\r\n: comment\ndata: 3\r\rid: 4\ndata:  spaced \n\ndata: " + long + "\n\ndata: last"
	want := []string{"1\n2", "3", "spaced", "cut:<xxx…xxx>", "last"}
	for _, size := range []int{1, 2, 3, 7, 512, len(stream)} {
		var l eventLog
		e := newEvents(&l)
		for b := []byte(stream); len(b) > 0; {
			n := min(size, len(b))
			e.Write(b[:n])
			b = b[n:]
		}
		e.end()
		if strings.Join(l.got, "|") != strings.Join(want, "|") {
			t.Fatalf("in pieces of %d: events %q, want %q", size, l.got, want)
		}
	}
}

// FuzzUsageScan holds the in-place usage reader to encoding/json: on every
// document it answers alone it must find what json.Unmarshal finds (the
// rest it hands to encoding/json itself).
func FuzzUsageScan(f *testing.F) {
	for _, s := range []string{
		`{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":1000,"completion_tokens":50,"total_tokens":1050,"prompt_tokens_details":{"cached_tokens":128}}}`,
		`{"usage":{"prompt_tokens":1,"completion_tokens":2}}`,
		`{"usage":null}`, `{"usage":{}}`, `{"usage":{"prompt_tokens":null}}`, `{"usage":[]}`, `{"usage":1}`,
		`{"Usage":{"prompt_tokens":3}}`, `{"usage":{"Prompt_Tokens":3}}`, `{"usage":{"prompt_tokens":1},"usage":{"completion_tokens":2}}`,
		`{"usage":{"prompt_tokens":1,"prompt_tokens":null}}`, `{"usage":{"prompt_tokens":1.0}}`, `{"usage":{"prompt_tokens":1e3}}`,
		`{"usage":{"prompt_tokens":-4}}`, `{"usage":{"prompt_tokens":99999999999999999999}}`, `{"usage":{"prompt_tokens":"7"}}`,
		`{"u\u0073age":{"prompt_tokens":3}}`, `{"uſage":{"prompt_tokens":3}}`, `{"usage":{"prompt_tokens_details":null,"prompt_tokens_details":{"cached_tokens":1}}}`,
		`{"usage":{"prompt_tokens":1}} x`, `{"usage":{"prompt_tokens":1}`, `{"a":"\xff","usage":{"completion_tokens":0}}`,
		`{"usage":{"prompt_tokens_details":{"cached_tokens":2,"CACHED_TOKENS":3}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var c counts
		found, err := scanUsage(doc, &c)
		if err != nil {
			return // encoding/json's to read
		}
		var ub usageBody
		if jerr := json.Unmarshal(doc, &ub); jerr != nil {
			t.Fatalf("scanUsage read %q, which json.Unmarshal refuses: %v", doc, jerr)
		}
		if found != (ub.Usage != nil) {
			t.Fatalf("%q: scanUsage found %v, json %v", doc, found, ub.Usage != nil)
		}
		if got, want := c, ub.Usage.counts(); got != want {
			t.Fatalf("%q: scanUsage %+v, json %+v", doc, got, want)
		}
	})
}

// usageString is c as prompt/completion/cached, "-" for a count not given.
func usageString(c counts) string {
	out := ""
	for i, v := range []int{c.prompt, c.completion, c.cached} {
		if i > 0 {
			out += "/"
		}
		if !c.set[i] {
			out += "-"
			continue
		}
		out += strconv.Itoa(v)
	}
	return out
}

// TestUsageOf: the usual bodies are read in place, the unusual ones by
// encoding/json, and both give json.Unmarshal's answer.
func TestUsageOf(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		doc     string
		inPlace bool
		want    string // usageString
	}{
		{`{"id":"c","choices":[{"message":{"content":"a \"usage\": 1"}}],"usage":{"prompt_tokens":1000,"completion_tokens":50,"prompt_tokens_details":{"cached_tokens":128}}}`, true, "1000/50/128"},
		{`{"usage":{"prompt_tokens":1,"completion_tokens":null}}`, true, "1/-/-"},
		{`{"usage":null}`, true, "-/-/-"},
		{`{"choices":[]}`, true, "-/-/-"},
		{`{"Usage":{"prompt_tokens":3}}`, false, "3/-/-"},
		{`{"usage":{"prompt_tokens":1},"usage":{"completion_tokens":2}}`, false, "1/2/-"},
		{`{"usage":{"prompt_tokens":1.5,"completion_tokens":2}}`, false, "-/-/-"},
		{`{"usage":{"prompt_tokens":1}`, false, "-/-/-"},
	} {
		var c counts
		_, err := scanUsage([]byte(tt.doc), &c)
		if (err == nil) != tt.inPlace {
			t.Errorf("%s: read in place %v, want %v", tt.doc, err == nil, tt.inPlace)
		}
		if got := usageString(usageOf([]byte(tt.doc))); got != tt.want {
			t.Errorf("%s: usage %q, want %q", tt.doc, got, tt.want)
		}
	}
}

func BenchmarkUsageOf(b *testing.B) {
	doc := []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1764590000,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"lorem ipsum dolor sit amet"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":50,"total_tokens":1050,"prompt_tokens_details":{"cached_tokens":0}}}`)
	b.Run("in place", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if c := usageOf(doc); !c.set[0] {
				b.Fatal("no usage")
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var ub usageBody
			if json.Unmarshal(doc, &ub) != nil || ub.Usage == nil {
				b.Fatal("no usage")
			}
		}
	})
}
