package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/tokenize"
	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// marker is prompt text no output may hold.
const marker = "zqxmarker"

const promptsFile = `{"messages":[{"role":"system","content":"be brief ` + marker + `"},{"role":"user","content":"say hi ` + marker + `"}]}
{"prompt":"tell me a story ` + marker + `","max_tokens":77}

{"input":"what is 2+2 ` + marker + `"}
{"messages":[{"role":"user","content":[{"type":"text","text":"parts ` + marker + `"}]}]}
`

func readPrompts(t *testing.T, s string) *Prompts {
	t.Helper()
	p, err := ReadPrompts(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Each API gets every line it can send in one request, mapped sensibly;
// the count is the texts' and the chat overhead.
func TestPromptsFileDialects(t *testing.T) {
	t.Parallel()
	o200k, _ := tokenize.Get(tokenize.O200kBase)
	p := readPrompts(t, "\uFEFF"+strings.ReplaceAll(promptsFile, "\n", "\r\n"))
	if p.Len() != 4 || fmt.Sprint(p) != "4 prompts" || fmt.Sprintf("%#v", p) != "4 prompts" || strings.Contains(fmt.Sprintf("%+v %v", *p, []*Prompts{p}), marker) {
		t.Fatalf("%d lines, printed %v", p.Len(), p)
	}
	want := map[string][]string{
		APIAzure: {
			`{"messages":[{"role":"system","content":"be brief zqxmarker"},{"role":"user","content":"say hi zqxmarker"}],"max_tokens":100}`,
			`{"messages":[{"role":"user","content":"tell me a story zqxmarker"}],"max_tokens":77}`,
			`{"messages":[{"role":"user","content":"what is 2+2 zqxmarker"}],"max_tokens":100}`,
			`{"messages":[{"role":"user","content":[{"type":"text","text":"parts zqxmarker"}]}],"max_tokens":100}`,
		},
		APIAnthropic: {
			`{"model":"m","max_tokens":100,"system":"be brief zqxmarker","messages":[{"role":"user","content":"say hi zqxmarker"}]}`,
			`{"model":"m","max_tokens":77,"messages":[{"role":"user","content":"tell me a story zqxmarker"}]}`,
			`{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"what is 2+2 zqxmarker"}]}`,
			`{"model":"m","max_tokens":100,"messages":[{"role":"user","content":[{"type":"text","text":"parts zqxmarker"}]}]}`,
		},
		APIGemini: {
			`{"systemInstruction":{"parts":[{"text":"be brief zqxmarker"}]},"contents":[{"role":"user","parts":[{"text":"say hi zqxmarker"}]}],"generationConfig":{"maxOutputTokens":100}}`,
			`{"contents":[{"role":"user","parts":[{"text":"tell me a story zqxmarker"}]}],"generationConfig":{"maxOutputTokens":77}}`,
			`{"contents":[{"role":"user","parts":[{"text":"what is 2+2 zqxmarker"}]}],"generationConfig":{"maxOutputTokens":100}}`,
			`{"contents":[{"role":"user","parts":[{"text":"parts zqxmarker"}]}],"generationConfig":{"maxOutputTokens":100}}`,
		},
	}
	for api, bodies := range want {
		cfg := Config{API: api, Endpoint: "http://127.0.0.1:1", Deployment: "d", URL: "http://127.0.0.1:1/v1/messages", Model: "m",
			PromptTokens: 10, MaxTokens: 100, Prompts: p, Tokenizer: o200k}
		if api != APIAzure {
			cfg.Endpoint = ""
		}
		tg, err := New(cfg)
		if err != nil {
			t.Fatalf("%s: %v", api, err)
		}
		for seq, w := range bodies {
			if got := string(tg.Body(seq + 4)); got != w {
				t.Errorf("%s line %d:\n got %s\nwant %s", api, seq+1, got, w)
			}
		}
	}
	// The counts: OpenAI's rule for the chat formats, the texts alone
	// for the others.
	tg, _ := New(Config{API: APIAzure, Endpoint: "http://127.0.0.1:1", Deployment: "d", PromptTokens: 10, MaxTokens: 100, Prompts: p, Tokenizer: o200k})
	c := o200k.CountString
	if got, want := tg.PromptTokensSent(0), c("be brief "+marker)+c("say hi "+marker)+2*3+c("system")+c("user")+3; got != want {
		t.Errorf("line 1 counts %d, want %d", got, want)
	}
	if got, want := tg.PromptTokensSent(1), c("tell me a story "+marker)+7; got != want {
		t.Errorf("line 2 counts %d, want %d", got, want)
	}
	tg, _ = New(Config{API: APIGemini, URL: "http://127.0.0.1:1", Model: "m", PromptTokens: 10, MaxTokens: 100, Prompts: p, Tokenizer: o200k})
	if got, want := tg.PromptTokensSent(0), c("be brief "+marker)+c("say hi "+marker); got != want {
		t.Errorf("gemini line 1 counts %d, want %d", got, want)
	}
	// Order: a pick of the line, else in order, cycled.
	tg, _ = New(Config{API: APIAzure, Endpoint: "http://127.0.0.1:1", Deployment: "d", PromptTokens: 10, MaxTokens: 100, Prompts: p, Tokenizer: o200k,
		PromptLine: func(seq, n int) int { return n - 1 - seq%n }})
	if !bytes.Contains(tg.Body(0), []byte("parts")) || !bytes.Contains(tg.Body(3), []byte("be brief")) {
		t.Error("PromptLine does not pick the lines")
	}
}

// A line that cannot go to an API in one request is refused, naming the
// line, never quoting it; raw takes no prompts file.
func TestPromptsFileRefusals(t *testing.T) {
	t.Parallel()
	o200k, _ := tokenize.Get(tokenize.O200kBase)
	cases := []struct{ api, line string }{
		{APIAzure, `{"input":[{"type":"function_call_output","call_id":"x","output":"` + marker + `"}]}`},
		{APIResponses, `{"messages":[{"role":"user","content":[{"type":"text","text":"` + marker + `"}]}]}`},
		{APIAnthropic, `{"messages":[{"role":"tool","content":"` + marker + `"}]}`},
		{APIAnthropic, `{"messages":[{"role":"system","content":"` + marker + `"}]}`},
		{APIGemini, `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"` + marker + `"}}]}]}`},
	}
	for _, c := range cases {
		cfg := Config{API: c.api, Endpoint: "http://127.0.0.1:1", Deployment: "d", URL: "http://127.0.0.1:1/v1/x", Model: "m",
			PromptTokens: 10, MaxTokens: 100, Prompts: readPrompts(t, c.line+"\n"), Tokenizer: o200k}
		if c.api != APIAzure {
			cfg.Endpoint = ""
		}
		_, err := New(cfg)
		var ve *valid.Error
		if !errors.As(err, &ve) || ve.Name != "Prompts" || !strings.Contains(err.Error(), "line 1") || strings.Contains(err.Error(), marker) {
			t.Errorf("%s %s: %v", c.api, c.line, err)
		}
	}
	_, err := New(Config{API: APIRaw, URL: "http://127.0.0.1:1", Body: []byte("{}"), Prompts: readPrompts(t, promptsFile)})
	if err == nil {
		t.Error("raw took a prompts file")
	}
	_, err = New(Config{API: APIAzure, Endpoint: "http://127.0.0.1:1", Deployment: "d", PromptTokens: 10, MaxTokens: 10, Prompts: readPrompts(t, promptsFile)})
	if err == nil {
		t.Error("a prompts file taken without a tokenizer to count it")
	}
}

func TestReadPromptsRefusals(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"", "\n\n",
		`{"prompt":"` + marker + `"` + "\n",
		`["` + marker + `"]`,
		`{"prompt":"a","messages":[{"role":"user","content":"` + marker + `"}]}`,
		`{"prompt":7}`,
		`{"messages":[{"content":"` + marker + `"}]}`,
		`{"messages":[{"role":"user","content":7}]}`,
		`{"messages":[]}`,
		`{"input":7}`,
		`{"prompt":"` + marker + `","max_tokens":0}`,
		`{"prompt":"` + marker + `","max_tokens":"12"}`,
		`{"other":"` + marker + `"}`,
		"{\"prompt\":\"a\"}\n" + strings.Repeat("x", MaxPromptLineBytes+10) + "\n",
	} {
		_, err := ReadPrompts(strings.NewReader(in))
		if err == nil {
			t.Errorf("%.60q accepted", in)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, marker) || strings.Contains(msg, "\n") || strings.Contains(msg, "xxx") {
			t.Errorf("%.60q: error %q quotes the file", in, msg)
		}
	}
}

// FuzzReadPrompts: any file reads or is refused without a panic and
// without quoting it; what reads frames for every API or is refused
// with its line, and each body framed is valid JSON.
func FuzzReadPrompts(f *testing.F) {
	f.Add(promptsFile)
	f.Add(`{"input":[{"role":"user","content":"x"}],"max_output_tokens":5}`)
	f.Add(`{"messages":[{"role":"assistant","content":"a","name":"n"},{"role":"user","content":[{"type":"text","text":"b"}]}]}`)
	o200k, _ := tokenize.Get(tokenize.O200kBase)
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ReadPrompts(strings.NewReader(in))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error over one line: %q", err)
			}
			return
		}
		for _, api := range []string{APIAzure, APIOpenAI, APIAnthropic, APIGemini, APIResponses} {
			cfg := Config{API: api, URL: "http://127.0.0.1:1/v1/x", Model: "m", PromptTokens: 10, MaxTokens: 9, Prompts: p, Tokenizer: o200k, Stream: true}
			if api == APIAzure {
				cfg.Endpoint, cfg.Deployment, cfg.URL = "http://127.0.0.1:1", "d", ""
			}
			tg, err := New(cfg)
			if err != nil {
				continue
			}
			for seq := range p.Len() {
				if b := tg.Body(seq); !json.Valid(b) {
					t.Fatalf("%s line %d: body is not JSON: %s", api, seq+1, b)
				}
				if n := tg.PromptTokensSent(seq); n < 0 {
					t.Fatalf("%s line %d: count %d", api, seq+1, n)
				}
			}
		}
	})
}

// TestPromptsCountAsTheAPI: OpenAI's cookbook ("How to count tokens with
// tiktoken", section 6) sends these messages and prints the API's
// usage.prompt_tokens: 124 for gpt-4o and gpt-4o-mini (o200k_base), 129
// for gpt-3.5-turbo and gpt-4 (cl100k_base). prompt_tokens_sent is the
// same count.
func TestPromptsCountAsTheAPI(t *testing.T) {
	t.Parallel()
	line := `{"messages":[` +
		`{"role":"system","content":"You are a helpful, pattern-following assistant that translates corporate jargon into plain English."},` +
		`{"role":"system","name":"example_user","content":"New synergies will help drive top-line growth."},` +
		`{"role":"system","name":"example_assistant","content":"Things working well together will increase revenue."},` +
		`{"role":"system","name":"example_user","content":"Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."},` +
		`{"role":"system","name":"example_assistant","content":"Let's talk later when we're less busy about how to do better."},` +
		`{"role":"user","content":"This late pivot means we don't have time to boil the ocean for the client deliverable."}]}`
	p := readPrompts(t, line+"\n")
	for vocab, want := range map[string]int{tokenize.O200kBase: 124, tokenize.Cl100kBase: 129} {
		tok, _ := tokenize.Get(vocab)
		tg, err := New(Config{API: APIOpenAI, URL: "http://127.0.0.1:1/v1/chat/completions", Model: "m", PromptTokens: 10, MaxTokens: 1, Prompts: p, Tokenizer: tok})
		if err != nil {
			t.Fatal(err)
		}
		if got := tg.PromptTokensSent(0); got != want {
			t.Errorf("%s: %d tokens, the API counted %d", vocab, got, want)
		}
	}
}
