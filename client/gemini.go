package client

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
)

// geminiKeyHeader carries the key to the Gemini API. The API also takes
// the key as a "key" query parameter; a URL is logged by proxies, load
// balancers and servers that never log a header, so ptuprobe never puts
// it there, and refuses a URL that already carries it.
const geminiKeyHeader = "x-goog-api-key"

// geminiCredentialParams are the query parameters by which Google APIs
// take a credential: an API key, an OAuth 2.0 access token.
var geminiCredentialParams = []string{"key", "access_token"}

// geminiURL checks the gemini settings and returns the request URL: the
// base URL, its path followed by /v1beta/models/{model}:generateContent,
// or :streamGenerateContent?alt=sse with Stream (server-sent events; the
// method's default is one JSON array, whose usage is at its end too, but
// which is no event stream).
func (cfg *Config) geminiURL() (string, error) {
	if cfg.URL == "" {
		return "", valid.Errorf("URL", "is required for {API} %s: the base URL, such as https://generativelanguage.googleapis.com", APIGemini)
	}
	u, err := checkURL("URL", cfg.URL)
	if err != nil {
		return "", err
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", valid.Errorf("URL", "must have a well-formed query")
	}
	for name := range q {
		for _, c := range geminiCredentialParams {
			if strings.EqualFold(name, c) {
				// The value is not repeated, nor the parameter's place.
				return "", valid.Errorf("URL", "must not carry a key in its query (%s=): the key is read from the environment and sent in the %s header, never in a URL", c, geminiKeyHeader)
			}
		}
	}
	if strings.Contains(u.Path, "/models/") || strings.Contains(u.Path, ":generateContent") || strings.Contains(u.Path, ":streamGenerateContent") {
		return "", valid.Errorf("URL", "must be the base URL, such as https://generativelanguage.googleapis.com, for {API} %s: the model's path is added to it", APIGemini)
	}
	model, err := geminiModel(cfg.Model)
	if err != nil {
		return "", err
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/v1beta/models/" + model
	u.RawPath = ""
	if cfg.Stream {
		u.Path += ":streamGenerateContent"
		q.Set("alt", "sse")
	} else {
		u.Path += ":generateContent"
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// geminiModel is the model's id as the request path takes it: without
// the "models/" of its resource name, which a user may copy from the
// API's model list. Ids are letters, digits, dots, dashes and
// underscores (gemini-2.5-flash, gemini-2.0-flash-001); anything else
// would change the path.
func geminiModel(m string) (string, error) {
	m = strings.TrimPrefix(m, "models/")
	if m == "" {
		return "", valid.Errorf("Model", "is required for {API} %s", APIGemini)
	}
	for i := 0; i < len(m); i++ {
		switch c := m[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '_':
		default:
			return "", valid.Errorf("Model", "must be a model id such as gemini-2.5-flash: letters, digits, dots, dashes and underscores")
		}
	}
	return m, nil
}

// geminiFrame frames a generateContent request:
//
//	{"systemInstruction":{"parts":[{"text":PREFIX}]},
//	 "contents":[{"role":"user","parts":[{"text":TEXT}]}],
//	 "generationConfig":{"maxOutputTokens":N}}
//
// systemInstruction only with a shared prefix; the model is in the URL,
// and so is streaming. The Gemini API caches a repeated prefix by itself
// (implicit caching), so the prefix needs no mark.
func geminiFrame(cfg *Config, system string) (before, after string) {
	before = `{`
	if system != "" {
		before += `"systemInstruction":{"parts":[{"text":"` + system + `"}]},`
	}
	before += `"contents":[{"role":"user","parts":[{"text":"`
	return before, `"}]}],"generationConfig":{"maxOutputTokens":` + strconv.Itoa(cfg.MaxTokens) + `}}`
}

// geminiUsage is a response's usageMetadata. The API writes its JSON
// from protocol buffers, which leave out a count of 0: in a usage block
// that has a prompt count, an absent count is 0.
type geminiUsage struct {
	PromptTokenCount        *int `json:"promptTokenCount"`
	CachedContentTokenCount *int `json:"cachedContentTokenCount"`
	CandidatesTokenCount    *int `json:"candidatesTokenCount"`
	ThoughtsTokenCount      *int `json:"thoughtsTokenCount"`
}

// record fills rec in the results' terms, those of OpenAI's usage:
// promptTokenCount already holds the cached part (cachedContentTokenCount),
// as prompt_tokens holds cached_tokens; the completion is every token
// generated, the thinking tokens (thoughtsTokenCount) with the answer's
// (candidatesTokenCount), as an OpenAI completion_tokens holds its
// reasoning tokens and as maxOutputTokens bounds both.
func (g *geminiUsage) record(k *tokens) {
	prompt, ok := count(g.PromptTokenCount)
	if !ok {
		return
	}
	k.prompt = prompt
	k.cached = countOrZero(g.CachedContentTokenCount)
	k.completion = countOrZero(g.CandidatesTokenCount) + countOrZero(g.ThoughtsTokenCount)
}

func countOrZero(p *int) int {
	n, _ := count(p)
	return n
}

// parseGeminiUsage reads a generateContent response's usageMetadata, or a
// stream's last: every chunk of a stream carries one, the last the
// totals.
func parseGeminiUsage(b *bodyTail, rec *results.Record) {
	whole := b.n <= keptBodyBytes
	body := bytes.TrimSpace(b.buf)
	var u *geminiUsage
	switch {
	case isEventStream(body, whole):
		s := &geminiStream{}
		readEvents(body, s)
		u = s.u
	case whole:
		var r struct {
			UsageMetadata *geminiUsage `json:"usageMetadata"`
		}
		if len(body) > 0 && body[0] == '{' && json.Unmarshal(body, &r) == nil {
			u = r.UsageMetadata
		}
	default:
		if !lastMember(body, "usageMetadata", &u) {
			u = nil
		}
	}
	k := noTokens()
	if u != nil {
		u.record(&k)
	}
	k.fill(rec)
}

// geminiStream is a streamed generateContent answer's usage: its last
// chunk's usageMetadata (every chunk carries one, the last the totals).
type geminiStream struct{ u *geminiUsage }

func (s *geminiStream) event(data []byte) bool {
	if bytes.Contains(data, []byte(`"usageMetadata"`)) {
		var c struct {
			UsageMetadata *geminiUsage `json:"usageMetadata"`
		}
		if json.Unmarshal(data, &c) == nil && c.UsageMetadata != nil {
			s.u = c.UsageMetadata
		}
	}
	return geminiContent(data)
}

func (s *geminiStream) cut(head, tail []byte) bool {
	var u *geminiUsage
	if bytes.Contains(tail, []byte(`"usageMetadata"`)) && lastMember(tail, "usageMetadata", &u) && u != nil {
		s.u = u
	}
	return geminiCutContent(head)
}

func (s *geminiStream) counted() tokens {
	k := noTokens()
	if s.u != nil {
		s.u.record(&k)
	}
	return k
}

// geminiDialect is the Gemini API's generateContent.
type geminiDialect struct{}

func (geminiDialect) url(cfg *Config) (string, error) { return cfg.geminiURL() }
func (geminiDialect) frame(cfg *Config, system string) (before, after string) {
	return geminiFrame(cfg, system)
}
func (geminiDialect) line(_ *Config, pl *promptLine) (pre, post []byte, err error) {
	return geminiLine(pl)
}

// overhead: Gemini counts with a tokenizer of its own, whose framing is
// not known.
func (geminiDialect) overhead(int) int            { return 0 }
func (geminiDialect) ownCap() bool                { return true }
func (geminiDialect) header(*Config, http.Header) {}
func (geminiDialect) keys(string) []keyVar {
	return []keyVar{{envGeminiKey, geminiKeyHeader}}
}
func (geminiDialect) stream() streamUsage                    { return &geminiStream{} }
func (geminiDialect) usage(b *bodyTail, rec *results.Record) { parseGeminiUsage(b, rec) }
func (geminiDialect) headBytes(bool) int                     { return 0 }
