package sim

import (
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/ptuprobe/ptuprobe/internal/jsonscan"
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

// parseRequest decodes a request body: the chat-completions body
// (OpenAI/Azure), the messages body (gateway, with a "system" field) or
// an image-generation body. It never panics on any input and its errors
// are one line a client can read; they never quote the body.
func parseRequest(body []byte, kind bodyKind, defaultMax int) (request, error) {
	var (
		r                        request
		sc                       = jsonscan.New(body)
		msgChars, firstChars     int
		firstSystem, sawMessages bool
		firstRaw, sysRaw         []byte
		sysChars                 int
		sysSet                   bool
		budget, completionBudget int64
		budgetSet, complSet      bool
		promptChars              int
		promptSet                bool
		n                        int64
		nSet                     bool
	)
	if sc.Peek() != '{' {
		return r, badRequest("body must be a JSON object")
	}
	field := func(name string, err error) error {
		if err == nil || errors.Is(err, jsonscan.ErrSyntax) || errors.Is(err, jsonscan.ErrTooDeep) {
			return err
		}
		return fmt.Errorf("'%s': %w", name, err)
	}
	err := sc.Object(func(key []byte) error {
		switch string(key) {
		case "model":
			if sc.Null() {
				return nil
			}
			m, err := sc.Text()
			if err == nil && len(m) > 256 {
				err = errors.New("is too long")
			}
			r.Model = m
			return field("model", err)
		case "messages":
			msgChars, firstChars, firstSystem, firstRaw, sawMessages = 0, 0, false, nil, false
			if sc.Null() {
				return nil
			}
			if sc.Peek() != '[' {
				return field("messages", errors.New("must be an array"))
			}
			return sc.Array(func(i int) error {
				sawMessages = true
				if sc.Null() {
					return nil
				}
				if sc.Peek() != '{' {
					return field(fmt.Sprintf("messages[%d]", i), errors.New("must be an object"))
				}
				return sc.Object(func(key []byte) error {
					switch string(key) {
					case "role":
						if sc.Null() {
							return nil
						}
						role, err := sc.Text()
						if i == 0 {
							firstSystem = role == "system" || role == "developer"
						}
						return field(fmt.Sprintf("messages[%d].role", i), err)
					case "content":
						c, raw, err := content(&sc)
						msgChars += c
						if i == 0 {
							firstChars, firstRaw = c, raw
						}
						return field(fmt.Sprintf("messages[%d].content", i), err)
					}
					return sc.Skip()
				})
			})
		case "system":
			c, raw, err := content(&sc)
			sysChars, sysRaw, sysSet = c, raw, raw != nil
			return field("system", err)
		case "max_tokens":
			v, set, err := sc.OptInt()
			budget, budgetSet = v, set
			return field("max_tokens", err)
		case "max_completion_tokens":
			v, set, err := sc.OptInt()
			completionBudget, complSet = v, set
			return field("max_completion_tokens", err)
		case "stream":
			v, err := sc.OptBool()
			r.Stream = v
			return field("stream", err)
		case "stream_options":
			if sc.Null() {
				r.IncludeUsage = false
				return nil
			}
			if sc.Peek() != '{' {
				return field("stream_options", errors.New("must be an object"))
			}
			return sc.Object(func(key []byte) error {
				if string(key) != "include_usage" {
					return sc.Skip()
				}
				v, err := sc.OptBool()
				r.IncludeUsage = v
				return field("stream_options.include_usage", err)
			})
		case "prompt":
			c, raw, err := content(&sc)
			promptChars, promptSet = c, raw != nil
			return field("prompt", err)
		case "n":
			v, set, err := sc.OptInt()
			n, nSet = v, set
			return field("n", err)
		}
		return sc.Skip()
	})
	if err == nil && !sc.End() {
		err = jsonscan.ErrSyntax
	}
	switch {
	case err == nil:
	case errors.Is(err, jsonscan.ErrSyntax):
		return r, badRequest("body is not valid JSON")
	case errors.Is(err, jsonscan.ErrTooDeep):
		return r, badRequest("body is nested too deeply")
	default:
		return r, badRequest("%v", err)
	}

	if kind == kindImage {
		if !promptSet || promptChars == 0 {
			return r, badRequest("'prompt' must be a non-empty string")
		}
		r.PromptTokens = ceilDiv(promptChars, charsPerToken)
		r.Images = 1
		if nSet {
			if n < 1 || n > 10 {
				return r, badRequest("'n' must be 1..10")
			}
			r.Images = int(n)
		}
		return r, nil
	}
	if !sawMessages {
		return r, badRequest("'messages' must be a non-empty array")
	}
	chars := msgChars
	switch {
	case sysSet:
		chars += sysChars
		r.SystemTokens = ceilDiv(sysChars, charsPerToken)
		if r.SystemTokens >= cacheMinTokens {
			r.SystemDigest = sha256.Sum256(sysRaw)
		}
	case firstSystem:
		r.SystemTokens = ceilDiv(firstChars, charsPerToken)
		if r.SystemTokens >= cacheMinTokens {
			r.SystemDigest = sha256.Sum256(firstRaw)
		}
	}
	r.PromptTokens = ceilDiv(chars, charsPerToken)
	if kind == kindCount {
		return r, nil
	}
	r.MaxTokens = defaultMax
	if complSet {
		budget, budgetSet = completionBudget, true
	}
	if budgetSet {
		if budget < 1 || budget > MaxOutputTokens {
			return r, badRequest("max_tokens must be 1..%d", MaxOutputTokens)
		}
		r.MaxTokens = int(budget)
		r.MaxTokensSet = true
	}
	if !r.Stream {
		r.IncludeUsage = false
	}
	return r, nil
}

// errNotParts refuses a message content that is neither a string, an
// array of parts nor null.
var errNotParts = errors.New("must be a string or an array of parts")

// content counts the characters of a message content — a string, an
// array of parts whose "text" fields count, or null — and returns the
// value's raw bytes for the prompt cache's digest (nil for null).
func content(sc *jsonscan.Scanner) (chars int, raw []byte, err error) {
	switch sc.Peek() {
	case 'n':
		if sc.Null() {
			return 0, nil, nil
		}
	case '"':
		raw, err = sc.Capture(func() (err error) { chars, err = sc.Chars(); return err })
		return chars, raw, err
	case '[':
		raw, err = sc.Capture(func() error {
			return sc.Array(func(int) error {
				n, err := textPart(sc)
				chars += n
				return err
			})
		})
		return chars, raw, err
	}
	if err := sc.Skip(); err != nil {
		return 0, nil, err
	}
	return 0, nil, errNotParts
}

// textPart counts the "text" of one part of a content array; a part that
// is not an object (or null) is refused.
func textPart(sc *jsonscan.Scanner) (chars int, err error) {
	if sc.Null() {
		return 0, nil
	}
	if sc.Peek() != '{' {
		if err := sc.Skip(); err != nil {
			return 0, err
		}
		return 0, errNotParts
	}
	err = sc.Object(func(key []byte) error {
		if string(key) != "text" {
			return sc.Skip()
		}
		if sc.Null() {
			return nil
		}
		n, err := sc.Chars()
		chars += n
		return err
	})
	return chars, err
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
