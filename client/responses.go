package client

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
)

// responsesURL checks the responses settings and returns the request URL:
// with Endpoint, Azure OpenAI's v1 route {Endpoint}/openai/v1/responses,
// whose model member names the deployment (Deployment, else Model) and
// which takes no api-version; else URL as given, the full Responses URL
// (…/v1/responses), whose model is Model or DefaultModel. A URL without a
// path is a base URL, which would fail every request with a 404.
func (cfg *Config) responsesURL() (string, error) {
	if cfg.Endpoint != "" {
		if cfg.URL != "" {
			return "", valid.Errorf("URL", "goes not with {Endpoint}: {API} %s takes one or the other", APIResponses)
		}
		base, err := checkURL("Endpoint", cfg.Endpoint)
		if err != nil {
			return "", err
		}
		if cfg.Deployment != "" {
			cfg.Model = cfg.Deployment
		}
		if cfg.Model == "" {
			return "", valid.Errorf("Deployment", "is required for {API} %s with {Endpoint}: the Responses API names it in its model member", APIResponses)
		}
		base.Path = strings.TrimRight(base.Path, "/") + "/openai/v1/responses"
		return base.String(), nil
	}
	if cfg.URL == "" {
		return "", valid.Errorf("URL", "is required for {API} %s (the full URL, such as https://api.openai.com/v1/responses), or {Endpoint} for Azure OpenAI", APIResponses)
	}
	u, err := checkURL("URL", cfg.URL)
	if err != nil {
		return "", err
	}
	if u.Path == "" || u.Path == "/" {
		return "", valid.Errorf("URL", "must be the full Responses URL, such as https://api.openai.com/v1/responses, not a base URL")
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	return u.String(), nil
}

// responsesFrame frames a Responses API request:
//
//	{"model":M,"instructions":PREFIX,"input":TEXT,"max_output_tokens":N,"stream":true}
//
// instructions only with a shared prefix (the system text the prompt
// cache holds), stream only with Stream. The input is one user message
// given as a string, which the API takes as such.
func responsesFrame(cfg *Config, system string) (before, after string) {
	before = `{"model":` + jsonString(cfg.Model) + `,`
	if system != "" {
		before += `"instructions":"` + system + `",`
	}
	before += `"input":"`
	after = `","max_output_tokens":` + strconv.Itoa(cfg.MaxTokens)
	if cfg.Stream {
		after += `,"stream":true`
	}
	return before, after + `}`
}

// responsesUsage is the usage block of a Responses API response object.
type responsesUsage struct {
	InputTokens        *int `json:"input_tokens"`
	OutputTokens       *int `json:"output_tokens"`
	InputTokensDetails *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
}

// record fills rec: input_tokens is every prompt token, the cached ones
// (input_tokens_details.cached_tokens) among them, as with chat
// completions; output_tokens holds the reasoning tokens, as
// completion_tokens does.
func (u *responsesUsage) record(k *tokens) {
	if u == nil {
		return
	}
	if n, ok := count(u.InputTokens); ok {
		k.prompt = n
	}
	if n, ok := count(u.OutputTokens); ok {
		k.completion = n
	}
	if d := u.InputTokensDetails; d != nil {
		if n, ok := count(d.CachedTokens); ok {
			k.cached = n
		}
	}
}

// parseResponsesUsage reads a Responses API answer's usage: the response
// object's usage member, or in a stream the response of its last
// response.completed (or response.incomplete, when max_output_tokens cut
// the text) event. The stream's response.created event carries
// "usage":null and is passed over. An answer longer than what is kept
// whole (a long output repeated in the final event) is read from the
// last usage member of its tail, which the response object ends with.
func parseResponsesUsage(b *bodyTail, rec *results.Record) {
	whole := b.n <= keptBodyBytes
	tail := bytes.TrimSpace(b.buf)
	if !isEventStream(tail, whole) {
		var u *responsesUsage
		if whole {
			var m struct{ Usage *responsesUsage }
			if len(tail) > 0 && tail[0] == '{' && json.Unmarshal(tail, &m) == nil {
				u = m.Usage
			}
		} else if !lastMember(tail, "usage", &u) {
			u = nil
		}
		k := noTokens()
		u.record(&k)
		k.fill(rec)
		return
	}
	s := &responsesStream{}
	readEvents(tail, s)
	last := s.last
	if last == nil && !whole {
		// The final event began before the kept tail: its usage member,
		// the response object's last, is still in it.
		if !lastMember(tail, "usage", &last) {
			last = nil
		}
	}
	k := noTokens()
	last.record(&k)
	k.fill(rec)
}

// responsesStream is a Responses API stream's usage: its last
// response.completed (or response.incomplete) event's response's usage.
// That event carries the whole response, output and all: past
// maxEventBytes only its usage, the response's last member but for a few,
// is read, from the event's end.
type responsesStream struct{ last *responsesUsage }

func (s *responsesStream) event(data []byte) bool {
	if !bytes.Contains(data, []byte(`"response.completed"`)) && !bytes.Contains(data, []byte(`"response.incomplete"`)) {
		return responsesContent(data)
	}
	var ev struct {
		Type     string
		Response struct{ Usage *responsesUsage }
	}
	if json.Unmarshal(data, &ev) != nil || ev.Response.Usage == nil {
		return responsesContent(data)
	}
	if ev.Type == "response.completed" || ev.Type == "response.incomplete" {
		s.last = ev.Response.Usage
		return false
	}
	return responsesContent(data)
}

func (s *responsesStream) cut(head, tail []byte) bool {
	if !bytes.Contains(head, []byte(`"response.completed"`)) && !bytes.Contains(head, []byte(`"response.incomplete"`)) {
		return responsesContent(head)
	}
	var u *responsesUsage
	if lastMember(tail, "usage", &u) && u != nil {
		s.last = u
	}
	return false
}

func (s *responsesStream) counted() tokens {
	k := noTokens()
	s.last.record(&k)
	return k
}

// responsesDialect is OpenAI's Responses API, and Azure OpenAI's v1
// route to it (with Config.Endpoint).
type responsesDialect struct{}

func (responsesDialect) url(cfg *Config) (string, error) { return cfg.responsesURL() }
func (responsesDialect) frame(cfg *Config, system string) (before, after string) {
	return responsesFrame(cfg, system)
}
func (responsesDialect) line(cfg *Config, pl *promptLine) (pre, post []byte, err error) {
	return responsesLine(cfg, pl)
}

// overhead: the string input is one user message, the instructions a
// system one, counted as chat messages are.
func (responsesDialect) overhead(messages int) int   { return chatDialect{}.overhead(messages) }
func (responsesDialect) ownCap() bool                { return true }
func (responsesDialect) header(*Config, http.Header) {}

// keys are azure's (api-key, or the Entra token as Bearer) with an
// Endpoint, else openai's (OPENAI_API_KEY as Bearer).
func (responsesDialect) keys(endpoint string) []keyVar {
	if endpoint != "" {
		return azureDialect{}.keys(endpoint)
	}
	return openAIDialect{}.keys(endpoint)
}
func (responsesDialect) stream() streamUsage                    { return &responsesStream{} }
func (responsesDialect) usage(b *bodyTail, rec *results.Record) { parseResponsesUsage(b, rec) }
func (responsesDialect) headBytes(bool) int                     { return 0 }
