package sim

import (
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/ptuprobe/ptuprobe/internal/jsonscan"
)

// charsPerToken is the simulator's tokenizer when Config.Tokens is nil:
// a token is about four characters of English text. Good enough for
// admission arithmetic, and what clients can reproduce without a
// tokenizer (ptuprobe's synthetic prompts are words of four characters,
// one token each under o200k_base and cl100k_base).
const charsPerToken = 4

// request is what the model needs from a request body. Prompt text is
// never kept: only its token count and, for long system messages, a
// digest for the prompt cache.
type request struct {
	Model        string
	PromptTokens int
	Completion   int      // the completion's length an in-process caller gave (WithCompletionTokens); 0: drawn
	SystemTokens int      // tokens of the leading system message / system field
	SystemDigest [32]byte // set only when SystemTokens >= cacheMinTokens
	Messages     int      // the messages of the prompt (the chat format's overhead is per message)
	MaxTokens    int      // resolved output budget
	MaxTokensSet bool     // the body named the budget
	Stream       bool
	IncludeUsage bool
	Images       int // images requested (image route)
}

// errBadRequest marks errors whose message may be shown to the client.
var errBadRequest = errors.New("bad request")

func badRequest(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errBadRequest}, a...)...)
}

// bodyKind tells the parser which operation the body is for.
type bodyKind int

const (
	kindChat      bodyKind = iota // chat completions and messages
	kindCount                     // token counting: messages required, no budget
	kindImage                     // image generation: prompt, n
	kindGemini                    // generateContent: contents, systemInstruction, generationConfig
	kindResponses                 // the Responses API: input, instructions, max_output_tokens
)

// parseRequest decodes a request body: the chat-completions body
// (OpenAI/Azure), the messages body (with a "system" field), a
// token-counting body, an image-generation body or a generateContent body
// (Gemini). Every kind scans every
// field it knows, so a malformed field is refused on any route; the kind
// then decides which fields make the request. It never panics on any
// input and its errors are one line a client can read; they never quote
// the body.
func parseRequest(body []byte, kind bodyKind, defaultMax int) (request, error) {
	return parseCounted(body, kind, defaultMax, nil)
}

// parseCounted is parseRequest counting the prompt's text with tc (nil:
// characters / 4).
func parseCounted(body []byte, kind bodyKind, defaultMax int, tc *tokenMemo) (request, error) {
	f, err := scanBody(body, tc)
	if err != nil {
		return request{}, err
	}
	switch kind {
	case kindImage:
		return f.imageRequest()
	case kindCount:
		return f.countRequest()
	case kindGemini:
		return f.geminiRequest(defaultMax)
	case kindResponses:
		return f.responsesRequest(defaultMax)
	}
	return f.chatRequest(defaultMax)
}

// chatRequest is a chat-completions or messages body: the prompt as for
// token counting, an output budget (max_completion_tokens wins over
// max_tokens; neither means defaultMax) and whether to stream.
func (f *fields) chatRequest(defaultMax int) (request, error) {
	r, err := f.countRequest()
	if err != nil {
		return r, err
	}
	budget := f.maxTokens
	if f.maxCompletionTokens.set {
		budget = f.maxCompletionTokens
	}
	if err := r.setBudget(budget, defaultMax, "max_tokens"); err != nil {
		return r, err
	}
	r.Stream = f.stream
	r.IncludeUsage = f.stream && f.includeUsage
	return r, nil
}

// setBudget resolves the output budget: budget when set (1..MaxOutputTokens,
// else an error naming field), defaultMax when not.
func (r *request) setBudget(budget optInt, defaultMax int, field string) error {
	r.MaxTokens = defaultMax
	if !budget.set {
		return nil
	}
	if budget.v < 1 || budget.v > MaxOutputTokens {
		return badRequest("%s must be 1..%d", field, MaxOutputTokens)
	}
	r.MaxTokens, r.MaxTokensSet = int(budget.v), true
	return nil
}

// countRequest is a token-counting body: messages are required, and the
// prompt is every message's content plus the system field. The leading
// system text — the system field, else a first message whose role is
// system or developer — is what the prompt cache may hold.
func (f *fields) countRequest() (request, error) {
	r := request{Model: f.model}
	if !f.messages.seen {
		return r, badRequest("'messages' must be a non-empty array")
	}
	size := f.messages.size
	system, hasSystem := f.messages.first, f.messages.firstSystem
	if f.system.set() {
		size = size.plus(f.system.size)
		system, hasSystem = f.system, true
	}
	r.countPrompt(f.tc, size, system, hasSystem)
	r.Messages = f.messages.count
	return r, nil
}

// countPrompt sets the prompt's tokens from its size (its tokens under
// tc, else its characters / 4), and, when it has a leading system text,
// that text's tokens and (when long enough to be cached) its digest.
func (r *request) countPrompt(tc *tokenMemo, size textSize, system content, hasSystem bool) {
	r.PromptTokens = size.tokens(tc)
	if hasSystem {
		r.SystemTokens = system.size.tokens(tc)
		if r.SystemTokens >= cacheMinTokens {
			r.SystemDigest = sha256.Sum256(system.raw)
		}
	}
}

// imageRequest is an image-generation body: a non-empty prompt and n
// images, 1..10 (default 1).
func (f *fields) imageRequest() (request, error) {
	r := request{Model: f.model, Images: 1}
	if !f.prompt.set() || f.prompt.size.chars == 0 {
		return r, badRequest("'prompt' must be a non-empty string")
	}
	r.PromptTokens = f.prompt.size.tokens(f.tc)
	if f.n.set {
		if f.n.v < 1 || f.n.v > 10 {
			return r, badRequest("'n' must be 1..10")
		}
		r.Images = int(f.n.v)
	}
	return r, nil
}

// fields is what a body says, field by field, before its kind decides
// which fields matter. A field given twice takes its last value.
type fields struct {
	model                          string
	messages                       messages
	system, prompt                 content
	maxTokens, maxCompletionTokens optInt
	stream, includeUsage           bool
	n                              optInt

	// Gemini: contents, systemInstruction, generationConfig.maxOutputTokens.
	contents          messages
	systemInstruction content
	maxOutputTokens   optInt

	// The Responses API: input (a string, or an array of messages),
	// instructions, max_output_tokens.
	input            messages
	inputText        content
	instructions     content
	maxOutputTokensR optInt

	tc *tokenMemo // counts the text in tokens; nil: characters / 4
}

// messages is what the messages array holds for the model.
type messages struct {
	seen        bool     // at least one element
	count       int      // elements that are messages (not null)
	size        textSize // of every content
	first       content  // the first message's content
	firstSystem bool     // the first message's role is system or developer
}

// content is a scanned message content, system field or prompt: its
// size, and its raw bytes for the prompt cache's digest.
type content struct {
	size textSize
	raw  []byte // nil when absent or null
}

func (c content) set() bool { return c.raw != nil }

// optInt is an integer field; set is false when absent or null.
type optInt struct {
	v   int64
	set bool
}

// scanBody reads every field the simulator knows from a JSON object and
// skips the rest, with the hand-written scanner: a refusal needs only
// character counts, and encoding/json would cost most of its budget.
func scanBody(body []byte, tc *tokenMemo) (fields, error) {
	f := fields{tc: tc}
	sc := jsonscan.New(body)
	if sc.Peek() != '{' {
		return f, badRequest("body must be a JSON object")
	}
	err := sc.Object(func(key []byte) error { return f.scanField(&sc, key) })
	if err == nil && !sc.End() {
		err = jsonscan.ErrSyntax
	}
	switch {
	case err == nil:
		return f, nil
	case errors.Is(err, jsonscan.ErrSyntax):
		return f, badRequest("body is not valid JSON")
	case errors.Is(err, jsonscan.ErrTooDeep):
		return f, badRequest("body is nested too deeply")
	}
	return f, badRequest("%v", err)
}

// scanField reads the value of one top-level key into f.
func (f *fields) scanField(sc *jsonscan.Scanner, key []byte) error {
	var err error
	switch string(key) {
	case "model":
		err = f.scanModel(sc)
	case "messages":
		f.messages, err = scanMessages(sc, f.tc)
		return err // names the element at fault itself
	case "system":
		f.system, err = scanContent(sc, f.tc)
	case "prompt":
		f.prompt, err = scanContent(sc, f.tc)
	case "max_tokens":
		f.maxTokens, err = scanOptInt(sc)
	case "max_completion_tokens":
		f.maxCompletionTokens, err = scanOptInt(sc)
	case "n":
		f.n, err = scanOptInt(sc)
	case "stream":
		f.stream, err = sc.OptBool()
	case "stream_options":
		return f.scanStreamOptions(sc)
	case "contents":
		f.contents, err = scanContents(sc, f.tc)
		return err // names the element at fault itself
	case "systemInstruction", "system_instruction":
		f.systemInstruction, err = scanGeminiContent(sc, f.tc)
	case "generationConfig", "generation_config":
		return f.scanGenerationConfig(sc)
	case "input":
		return f.scanInput(sc)
	case "instructions":
		f.instructions, err = scanContent(sc, f.tc)
	case "max_output_tokens":
		f.maxOutputTokensR, err = scanOptInt(sc)
	default:
		return sc.Skip()
	}
	if err != nil { // only then: naming the field costs an allocation
		return named(err, "%s", key)
	}
	return nil
}

// scanModel reads "model", at most 256 bytes; null leaves it as it was.
func (f *fields) scanModel(sc *jsonscan.Scanner) error {
	if sc.Null() {
		return nil
	}
	m, err := sc.Text()
	if err == nil && len(m) > 256 {
		err = errors.New("is too long")
	}
	f.model = m
	return err
}

// scanStreamOptions reads "stream_options": null clears include_usage,
// an object sets it when it names it.
func (f *fields) scanStreamOptions(sc *jsonscan.Scanner) error {
	if sc.Null() {
		f.includeUsage = false
		return nil
	}
	if sc.Peek() != '{' {
		return named(errNotObject, "stream_options")
	}
	return sc.Object(func(key []byte) error {
		if string(key) != "include_usage" {
			return sc.Skip()
		}
		var err error
		f.includeUsage, err = sc.OptBool()
		return named(err, "stream_options.include_usage")
	})
}

// scanMessages reads the messages array; an element may be null.
func scanMessages(sc *jsonscan.Scanner, tc *tokenMemo) (messages, error) {
	var m messages
	if sc.Null() {
		return m, nil
	}
	if sc.Peek() != '[' {
		return m, named(errors.New("must be an array"), "messages")
	}
	err := sc.Array(func(i int) error {
		m.seen = true
		return m.scanMessage(sc, i, tc)
	})
	return m, err
}

// scanMessage reads message i: its content's characters count, and the
// first message's role and content are kept for the prompt cache.
func (m *messages) scanMessage(sc *jsonscan.Scanner, i int, tc *tokenMemo) error {
	if sc.Null() {
		return nil
	}
	if sc.Peek() != '{' {
		return named(errNotObject, "messages[%d]", i)
	}
	m.count++
	return sc.Object(func(key []byte) error {
		switch string(key) {
		case "role":
			if sc.Null() {
				return nil
			}
			role, err := sc.Text()
			if err != nil {
				return named(err, "messages[%d].role", i)
			}
			if i == 0 {
				m.firstSystem = role == "system" || role == "developer"
			}
			return nil
		case "content":
			c, err := scanContent(sc, tc)
			if err != nil {
				return named(err, "messages[%d].content", i)
			}
			m.size = m.size.plus(c.size)
			if i == 0 {
				m.first = c
			}
			return nil
		}
		return sc.Skip()
	})
}

var (
	errNotObject = errors.New("must be an object")
	// errNotParts refuses a content that is neither a string, an array
	// of parts nor null.
	errNotParts = errors.New("must be a string or an array of parts")
)

// scanContent reads a content — a string, an array of parts whose "text"
// fields count, or null — as its size and raw bytes.
func scanContent(sc *jsonscan.Scanner, tc *tokenMemo) (c content, err error) {
	switch sc.Peek() {
	case 'n':
		if sc.Null() {
			return content{}, nil
		}
	case '"':
		c.size, c.raw, err = scanText(sc, tc)
		return c, err
	case '[':
		c.raw, err = sc.Capture(func() error {
			return sc.Array(func(int) error {
				n, err := scanTextPart(sc, tc)
				c.size = c.size.plus(n)
				return err
			})
		})
		return c, err
	}
	if err := sc.Skip(); err != nil {
		return content{}, err
	}
	return content{}, errNotParts
}

// scanTextPart counts the "text" of one part of a content array; a part
// that is not an object (or null) is refused.
func scanTextPart(sc *jsonscan.Scanner, tc *tokenMemo) (size textSize, err error) {
	if sc.Null() {
		return size, nil
	}
	if sc.Peek() != '{' {
		if err := sc.Skip(); err != nil {
			return size, err
		}
		return size, errNotParts
	}
	err = sc.Object(func(key []byte) error {
		if string(key) != "text" {
			return sc.Skip()
		}
		if sc.Null() {
			return nil
		}
		n, _, err := scanText(sc, tc)
		size = size.plus(n)
		return err
	})
	return size, err
}

// scanInput reads the Responses API's "input": a string (one user
// message), an array of messages (role and content, as chat's), or null.
func (f *fields) scanInput(sc *jsonscan.Scanner) error {
	if sc.Peek() == '[' {
		var err error
		f.input, err = scanMessages(sc, f.tc)
		return err
	}
	c, err := scanContent(sc, f.tc)
	if errors.Is(err, errNotParts) {
		err = errors.New("must be a string or an array of messages")
	}
	f.inputText = c
	return named(err, "input")
}

// responsesRequest is a Responses API body: the prompt is the input plus
// the instructions (the leading system text the prompt cache may hold,
// else a first input message whose role is system or developer), the
// budget max_output_tokens.
func (f *fields) responsesRequest(defaultMax int) (request, error) {
	r := request{Model: f.model}
	if !f.input.seen && !f.inputText.set() {
		return r, badRequest("'input' must be a string or a non-empty array")
	}
	size := f.input.size.plus(f.inputText.size)
	r.Messages = f.input.count
	if f.inputText.set() {
		r.Messages++ // a string input is one user message
	}
	system, hasSystem := f.input.first, f.input.firstSystem
	if f.instructions.set() {
		size = size.plus(f.instructions.size)
		system, hasSystem = f.instructions, true
		r.Messages++ // instructions are a system message
	}
	r.countPrompt(f.tc, size, system, hasSystem)
	if err := r.setBudget(f.maxOutputTokensR, defaultMax, "max_output_tokens"); err != nil {
		return r, err
	}
	r.Stream = f.stream
	return r, nil
}

func scanOptInt(sc *jsonscan.Scanner) (optInt, error) {
	v, set, err := sc.OptInt()
	return optInt{v, set}, err
}

// named puts the field at fault in front of a value's error, as
// "'messages[0].content': must be …". A text that is not JSON, or is
// nested too deeply, is the body's fault and is left for scanBody to say.
func named(err error, format string, a ...any) error {
	if err == nil || errors.Is(err, jsonscan.ErrSyntax) || errors.Is(err, jsonscan.ErrTooDeep) {
		return err
	}
	return fmt.Errorf("'%s': %w", fmt.Sprintf(format, a...), err)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
