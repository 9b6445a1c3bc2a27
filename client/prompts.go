package client

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// Bounds of a prompts file (ReadPrompts).
const (
	// MaxPromptsBytes bounds the whole file: 256 MiB.
	MaxPromptsBytes = 256 << 20
	// MaxPromptLineBytes bounds one line: 8 MiB, twice the largest
	// synthetic prompt (a million tokens).
	MaxPromptLineBytes = 8 << 20
	// MaxPromptLines bounds the lines: a million.
	MaxPromptLines = 1_000_000
)

// Prompts are a user's own requests, one a line of a JSON-lines file:
// {"messages":[…]} (chat), {"prompt":"…"} or {"input":…} (the Responses
// API's), each optionally with "max_tokens". Their text is never
// printed: Prompts formats as its count of lines, and no error of this
// package quotes a line.
type Prompts struct {
	lines []promptLine
}

// Len is the number of requests in the file.
func (p *Prompts) Len() int { return len(p.lines) }

// String is what a print of Prompts shows: the count, never the text.
func (p Prompts) String() string { return fmt.Sprintf("%d prompts", len(p.lines)) }

// GoString is String, so %#v shows no text either.
func (p Prompts) GoString() string { return p.String() }

// The forms of a line.
const (
	formMessages = iota + 1
	formPrompt
	formInput
)

// promptLine is one line read: its form, its messages (the chat form,
// and an input that is a list of role/content messages), its text (a
// prompt, or an input that is a string) and its input as given.
type promptLine struct {
	form      int
	messages  []message
	raw       json.RawMessage // the messages or the input as given
	text      string
	list      bool // an input that is a list of items
	maxTokens int  // 0: the request's own
}

// message is one chat message: its role, its content as given, and the
// texts in it (the content when a string, else its parts' text).
type message struct {
	role    string
	content json.RawMessage
	texts   []string
	str     bool   // content is a string
	parts   bool   // content is a list of {"type":"text","text":…} parts only
	name    string // its name, if any
	named   bool   // it has a name: counted with one token more
}

// ReadPrompts reads a prompts file. An error names the line and what is
// wrong with it, never its text.
func ReadPrompts(r io.Reader) (*Prompts, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, MaxPromptsBytes+1), 64<<10)
	p := &Prompts{}
	total := 0
	for n := 1; ; n++ {
		line, err := readLine(br)
		total += len(line) + 1
		if total > MaxPromptsBytes+1 {
			return nil, fmt.Errorf("over %d MiB: split it", MaxPromptsBytes>>20)
		}
		if errors.Is(err, errLongLine) {
			return nil, fmt.Errorf("line %d: over %d MiB", n, MaxPromptLineBytes>>20)
		}
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\uFEFF")) // a byte order mark
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if len(p.lines) == MaxPromptLines {
				return nil, fmt.Errorf("over %d requests", MaxPromptLines)
			}
			pl, perr := parsePromptLine(t)
			if perr != nil {
				return nil, fmt.Errorf("line %d: %w", n, perr)
			}
			p.lines = append(p.lines, pl)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(p.lines) == 0 {
		return nil, errors.New("holds no request: one JSON object a line")
	}
	return p, nil
}

var errLongLine = errors.New("line too long")

// readLine reads a line without its newline, at most MaxPromptLineBytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxPromptLineBytes+1 {
			return nil, errLongLine
		}
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSuffix(line, []byte{'\n'}), err
	}
}

// parsePromptLine reads one line; its errors say what is wrong in the
// file's terms, never quoting it (encoding/json's would quote a byte).
func parsePromptLine(b []byte) (promptLine, error) {
	var obj map[string]json.RawMessage
	if !json.Valid(b) || json.Unmarshal(b, &obj) != nil || obj == nil {
		return promptLine{}, errors.New("not a JSON object")
	}
	var pl promptLine
	found := 0
	if raw, ok := obj["messages"]; ok {
		found++
		ms, err := parseMessages(raw)
		if err != nil {
			return promptLine{}, fmt.Errorf("messages: %w", err)
		}
		pl.form, pl.messages, pl.raw = formMessages, ms, raw
	}
	if raw, ok := obj["prompt"]; ok {
		found++
		if json.Unmarshal(raw, &pl.text) != nil {
			return promptLine{}, errors.New("prompt is not a string")
		}
		pl.form = formPrompt
	}
	if raw, ok := obj["input"]; ok {
		found++
		if err := pl.readInput(raw); err != nil {
			return promptLine{}, err
		}
	}
	if found != 1 {
		return promptLine{}, errors.New(`want one of "messages", "prompt" or "input"`)
	}
	for _, k := range []string{"max_tokens", "max_completion_tokens", "max_output_tokens"} {
		if raw, ok := obj[k]; ok {
			n, err := strconv.Atoi(string(raw))
			if err != nil || n < 1 || n > MaxCompletionTokens {
				return promptLine{}, fmt.Errorf("%s must be a whole number from 1 to %d", k, MaxCompletionTokens)
			}
			pl.maxTokens = n
		}
	}
	return pl, nil
}

// readInput reads a Responses input: a string, or a list of items, kept
// as given; a list of role/content messages is also read as messages.
func (pl *promptLine) readInput(raw json.RawMessage) error {
	pl.form, pl.raw = formInput, raw
	if json.Unmarshal(raw, &pl.text) == nil {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil || len(items) == 0 {
		return errors.New("input is neither a string nor a list of items")
	}
	pl.list = true
	if ms, err := parseMessages(raw); err == nil {
		pl.messages = ms
	}
	return nil
}

// parseMessages reads a list of chat messages: each an object with a
// role and a content, a string or a list of parts.
func parseMessages(raw json.RawMessage) ([]message, error) {
	var list []map[string]json.RawMessage
	if json.Unmarshal(raw, &list) != nil || len(list) == 0 {
		return nil, errors.New("not a list of message objects")
	}
	ms := make([]message, len(list))
	for i, obj := range list {
		m := &ms[i]
		if json.Unmarshal(obj["role"], &m.role) != nil || m.role == "" {
			return nil, fmt.Errorf("message %d has no role", i+1)
		}
		m.content = obj["content"]
		if raw, ok := obj["name"]; ok {
			m.named = true
			_ = json.Unmarshal(raw, &m.name)
		}
		var s string
		if json.Unmarshal(m.content, &s) == nil {
			m.texts, m.str = []string{s}, true
			continue
		}
		var parts []map[string]json.RawMessage
		if json.Unmarshal(m.content, &parts) != nil {
			return nil, fmt.Errorf("message %d: content is neither a string nor a list of parts", i+1)
		}
		m.parts = true
		for _, part := range parts {
			var typ, text string
			_ = json.Unmarshal(part["type"], &typ)
			if json.Unmarshal(part["text"], &text) == nil {
				m.texts = append(m.texts, text)
			}
			if typ != "text" && typ != "input_text" {
				m.parts = false
			}
		}
	}
	return ms, nil
}

// promptFile is a Prompts source: each line's body for the API, built
// once before the run (pre MAX post), and its count.
type promptFile struct {
	bodies []fileBody
	pick   func(seq, n int) int
	shapes Shaper
	max    int // the output cap without a line's or a shape's
}

type fileBody struct {
	pre, post []byte
	tokens    int // prompt_tokens_sent
	maxTokens int // 0: the request's
}

// newBodySource is the synthetic prompts, or cfg.Prompts' bodies.
func newBodySource(cfg *Config) (bodySource, error) {
	if cfg.Prompts == nil {
		return newPromptBuilder(cfg)
	}
	if cfg.Tokenizer == nil {
		return nil, valid.Errorf("Tokenizer", "is needed to count {Prompts}")
	}
	f := &promptFile{pick: cfg.PromptLine, shapes: cfg.Shapes, max: cfg.MaxTokens, bodies: make([]fileBody, cfg.Prompts.Len())}
	for i := range cfg.Prompts.lines {
		pre, post, err := frameLine(cfg, &cfg.Prompts.lines[i])
		if err != nil {
			return nil, valid.Errorf("Prompts", "line %d: %v", i+1, err)
		}
		f.bodies[i] = fileBody{pre: pre, post: post, maxTokens: cfg.Prompts.lines[i].maxTokens}
	}
	countLines(cfg, f.bodies)
	return f, nil
}

// countLines counts every line once, on every core.
func countLines(cfg *Config, bodies []fileBody) {
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), len(bodies))
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(bodies); i += workers {
				bodies[i].tokens = lineTokens(cfg, &cfg.Prompts.lines[i])
			}
		}()
	}
	wg.Wait()
}

// lineTokens is a line's prompt as prompt_tokens_sent counts it: its
// texts under the tokenizer and the chat format's overhead (OpenAI's
// rule, chatOverhead: 3 a message, its role, its name and 1 more for
// having one, 3 for the reply) for the APIs that use it. The cookbook's
// example, whose count the OpenAI API confirmed, is
// TestPromptsCountAsTheAPI's.
func lineTokens(cfg *Config, pl *promptLine) int {
	c := cfg.Tokenizer
	if pl.messages == nil {
		return c.Count([]byte(pl.text)) + chatOverhead(cfg.API, 1)
	}
	n := 0
	for _, m := range pl.messages {
		for _, t := range m.texts {
			n += c.Count([]byte(t))
		}
		if chatOverhead(cfg.API, 1) > 0 {
			n += 3 + c.Count([]byte(m.role))
			if m.named {
				n += 1 + c.Count([]byte(m.name))
			}
		}
	}
	if chatOverhead(cfg.API, 1) > 0 {
		n += 3
	}
	return n
}

func (f *promptFile) line(seq int) *fileBody {
	n := len(f.bodies)
	i := seq % n
	if f.pick != nil {
		i = f.pick(seq, n)
	}
	if i < 0 || i >= n {
		i = ((i % n) + n) % n
	}
	return &f.bodies[i]
}

func (f *promptFile) sizes(seq int) (prompt, maxTokens int) {
	b := f.line(seq)
	switch {
	case b.maxTokens > 0:
		return b.tokens, b.maxTokens
	case f.shapes != nil:
		return b.tokens, f.shapes.Shape(seq).MaxTokens
	}
	return b.tokens, f.max
}

func (f *promptFile) parts(seq int) partsBody {
	b := f.line(seq)
	_, m := f.sizes(seq)
	return partsBody{parts: [6][]byte{b.pre, strconv.AppendInt(nil, int64(m), 10), b.post}}
}

func (f *promptFile) body(seq int) []byte {
	b := f.parts(seq)
	var out bytes.Buffer
	b.WriteTo(&out)
	return out.Bytes()
}

func (f *promptFile) reader(seq int) (func() (io.ReadCloser, error), int64) {
	b := f.parts(seq)
	n := int64(len(b.parts[0]) + len(b.parts[1]) + len(b.parts[2]))
	return func() (io.ReadCloser, error) {
		c := b
		return &c, nil
	}, n
}

// bodySource makes the bodies of a chat API's requests.
type bodySource interface {
	reader(seq int) (func() (io.ReadCloser, error), int64)
	body(seq int) []byte
	sizes(seq int) (prompt, maxTokens int)
}

// frameLine is a line's body for cfg.API around its output cap: pre MAX
// post, or a reason it cannot be sent to that API in one request.
func frameLine(cfg *Config, pl *promptLine) (pre, post []byte, err error) {
	return dialectOf(cfg.API).line(cfg, pl)
}

// userMessage is text as the one user message of a chat.
func userMessage(text string) string { return `[{"role":"user","content":` + jsonString(text) + `}]` }

// errItems refuses an input list of other items than role/content
// messages (function calls, their outputs…) to any API but responses.
var errItems = errors.New("an input list other than role/content messages goes only to the Responses API")

func chatLine(cfg *Config, pl *promptLine) (pre, post []byte, err error) {
	if pl.list && pl.messages == nil {
		return nil, nil, errItems
	}
	var msgs string
	switch {
	case pl.form == formMessages:
		msgs = string(pl.raw)
	case pl.messages == nil:
		msgs = userMessage(pl.text)
	default:
		// An input list of role/content messages: as chat messages, when
		// every content is a string (a chat has no input_text parts).
		for _, m := range pl.messages {
			if !m.str {
				return nil, nil, errors.New("an input item's content is not a string: it cannot be sent as a chat message")
			}
		}
		msgs = string(pl.raw)
	}
	head := `{`
	if cfg.API == APIOpenAI {
		head += `"model":` + jsonString(cfg.Model) + `,`
	}
	tail := chatTail(cfg)
	at := strings.Index(tail, ":") + 1
	mx := len(strconv.Itoa(cfg.MaxTokens))
	return []byte(head + `"messages":` + msgs + `,` + tail[:at]), []byte(tail[at+mx:]), nil
}

func responsesLine(cfg *Config, pl *promptLine) (pre, post []byte, err error) {
	var input string
	switch {
	case pl.form == formInput:
		input = string(pl.raw)
	case pl.form == formPrompt:
		input = jsonString(pl.text)
	default:
		for _, m := range pl.messages {
			if !m.str {
				return nil, nil, errors.New("a message's content is a list of parts: send it with a chat API, or write it as an input")
			}
		}
		input = string(pl.raw)
	}
	after := ""
	if cfg.Stream {
		after = `,"stream":true`
	}
	return []byte(`{"model":` + jsonString(cfg.Model) + `,"input":` + input + `,"max_output_tokens":`), []byte(after + `}`), nil
}

func anthropicLine(cfg *Config, pl *promptLine) (pre, post []byte, err error) {
	msgs, system := "", ""
	if pl.list && pl.messages == nil {
		return nil, nil, errItems
	}
	if pl.messages == nil {
		msgs = userMessage(pl.text)
	} else {
		var kept []string
		var sys []string
		for _, m := range pl.messages {
			switch m.role {
			case "system", "developer":
				if !m.str {
					return nil, nil, errors.New("a system message's content is not a string")
				}
				sys = append(sys, m.texts[0])
			case "user", "assistant":
				kept = append(kept, `{"role":`+jsonString(m.role)+`,"content":`+string(m.content)+`}`)
			default:
				return nil, nil, fmt.Errorf("a message's role is neither user, assistant nor system")
			}
		}
		if len(kept) == 0 {
			return nil, nil, errors.New("no user or assistant message")
		}
		msgs = "[" + strings.Join(kept, ",") + "]"
		if len(sys) > 0 {
			system = `"system":` + jsonString(strings.Join(sys, "\n\n")) + `,`
		}
	}
	after := ""
	if cfg.Stream {
		after = `,"stream":true`
	}
	return []byte(`{"model":` + jsonString(cfg.Model) + `,"max_tokens":`), []byte(`,` + system + `"messages":` + msgs + after + `}`), nil
}

func geminiLine(pl *promptLine) (pre, post []byte, err error) {
	var contents, sys []string
	if pl.list && pl.messages == nil {
		return nil, nil, errItems
	}
	if pl.messages == nil {
		contents = append(contents, `{"role":"user","parts":[{"text":`+jsonString(pl.text)+`}]}`)
	}
	for _, m := range pl.messages {
		if !m.str && !m.parts {
			return nil, nil, errors.New("a message holds a part other than text")
		}
		parts := make([]string, len(m.texts))
		for i, t := range m.texts {
			parts[i] = `{"text":` + jsonString(t) + `}`
		}
		switch m.role {
		case "system", "developer":
			sys = append(sys, parts...)
		case "user":
			contents = append(contents, `{"role":"user","parts":[`+strings.Join(parts, ",")+`]}`)
		case "assistant", "model":
			contents = append(contents, `{"role":"model","parts":[`+strings.Join(parts, ",")+`]}`)
		default:
			return nil, nil, fmt.Errorf("a message's role is neither user, assistant nor system")
		}
	}
	if len(contents) == 0 {
		return nil, nil, errors.New("no user or assistant message")
	}
	head := `{`
	if len(sys) > 0 {
		head += `"systemInstruction":{"parts":[` + strings.Join(sys, ",") + `]},`
	}
	return []byte(head + `"contents":[` + strings.Join(contents, ",") + `],"generationConfig":{"maxOutputTokens":`), []byte(`}}`), nil
}
