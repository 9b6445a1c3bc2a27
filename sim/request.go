package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// charsPerToken is the simulator's tokenizer: a token is about four
// characters of English text. Good enough for admission arithmetic, and
// what clients can reproduce without a tokenizer.
const charsPerToken = 4

// request is what the model needs from a request body. Prompt text is
// never kept: only its token count and, for long system messages, a
// digest for the prompt cache.
type request struct {
	Model        string
	PromptTokens int
	SystemTokens int      // tokens of the leading system message / system field
	SystemDigest [32]byte // set only when SystemTokens >= cacheMinTokens
	MaxTokens    int      // resolved output budget
	MaxTokensSet bool
	Stream       bool
	IncludeUsage bool
	Images       int // images requested (image route)
}

// wireRequest covers the chat-completions body (OpenAI/Azure) and the
// messages body (gateway profile, Anthropic-style "system" field).
type wireRequest struct {
	Model               string          `json:"model"`
	Messages            []wireMessage   `json:"messages"`
	System              json.RawMessage `json:"system"`
	MaxTokens           *int64          `json:"max_tokens"`
	MaxCompletionTokens *int64          `json:"max_completion_tokens"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Prompt json.RawMessage `json:"prompt"`
	N      *int64          `json:"n"`
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type wirePart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// errBadRequest marks errors whose message may be shown to the client.
var errBadRequest = errors.New("bad request")

func badRequest(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errBadRequest}, a...)...)
}

// bodyKind tells the parser which operation the body is for.
type bodyKind int

const (
	kindChat  bodyKind = iota // chat completions and messages
	kindCount                 // token counting: messages required, no budget
	kindImage                 // image generation: prompt, n
)

// parseRequest decodes a request body. It never panics on any input and
// its errors are one line a client can read; they never quote the body.
func parseRequest(body []byte, kind bodyKind, defaultMax int) (request, error) {
	var r request
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return r, badRequest("body must be a JSON object")
	}
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return r, badRequest("body is not valid JSON for this operation")
	}
	if len(w.Model) > 256 {
		return r, badRequest("'model' is too long")
	}
	r.Model = w.Model
	if kind == kindImage {
		text, err := contentText(w.Prompt)
		if err != nil || text == 0 {
			return r, badRequest("'prompt' must be a non-empty string")
		}
		r.PromptTokens = ceilDiv(text, charsPerToken)
		r.Images = 1
		if w.N != nil {
			if *w.N < 1 || *w.N > 10 {
				return r, badRequest("'n' must be 1..10")
			}
			r.Images = int(*w.N)
		}
		return r, nil
	}
	if len(w.Messages) == 0 {
		return r, badRequest("'messages' must be a non-empty array")
	}
	chars := 0
	if len(w.System) > 0 && !isJSONNull(w.System) {
		n, err := contentText(w.System)
		if err != nil {
			return r, badRequest("'system': %v", err)
		}
		chars += n
		r.SystemTokens = ceilDiv(n, charsPerToken)
		if r.SystemTokens >= cacheMinTokens {
			r.SystemDigest = digestContent(w.System)
		}
	}
	for i, m := range w.Messages {
		n, err := contentText(m.Content)
		if err != nil {
			return r, badRequest("'messages[%d].content': %v", i, err)
		}
		chars += n
		if i == 0 && len(w.System) == 0 && (m.Role == "system" || m.Role == "developer") {
			r.SystemTokens = ceilDiv(n, charsPerToken)
			if r.SystemTokens >= cacheMinTokens {
				r.SystemDigest = digestContent(m.Content)
			}
		}
	}
	r.PromptTokens = ceilDiv(chars, charsPerToken)
	if kind == kindCount {
		return r, nil
	}
	budget := w.MaxCompletionTokens
	if budget == nil {
		budget = w.MaxTokens
	}
	r.MaxTokens = defaultMax
	if budget != nil {
		if *budget < 1 || *budget > MaxOutputTokens {
			return r, badRequest("max_tokens must be 1..%d", MaxOutputTokens)
		}
		r.MaxTokens = int(*budget)
		r.MaxTokensSet = true
	}
	r.Stream = w.Stream
	r.IncludeUsage = w.StreamOptions != nil && w.StreamOptions.IncludeUsage
	return r, nil
}

// contentText counts the characters of a message content: a string, an
// array of parts (only text parts count) or null.
func contentText(raw json.RawMessage) (int, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isJSONNull(raw) {
		return 0, nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, errors.New("not a valid string")
		}
		return utf8.RuneCountInString(s), nil
	case '[':
		var parts []wirePart
		if err := json.Unmarshal(raw, &parts); err != nil {
			return 0, errors.New("not a valid array of content parts")
		}
		n := 0
		for _, p := range parts {
			n += utf8.RuneCountInString(p.Text)
		}
		return n, nil
	}
	return 0, errors.New("must be a string or an array of parts")
}

func isJSONNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// digestContent identifies a system message for the prompt cache without
// keeping its text.
func digestContent(raw json.RawMessage) [32]byte { return sha256.Sum256(bytes.TrimSpace(raw)) }

func ceilDiv(a, b int) int { return (a + b - 1) / b }
