package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/maphash"
	"sync"
	"unicode/utf8"

	"github.com/ptuprobe/ptuprobe/internal/jsonscan"
)

// TokenCounter counts text in tokens as the deployment's tokenizer does
// (internal/tokenize's *Tokenizer is one, wired in by the commands that
// start a simulator: the package does not import a vocabulary). It must
// be safe for concurrent use.
type TokenCounter interface {
	Count(text []byte) int
}

// Chars is the rule of 4 characters a token as a TokenCounter: a Config
// whose Tokens is Chars counts as one whose Tokens is nil (today's rule,
// no chat overhead). It lets a caller say "characters" where nil means
// "not chosen yet" (the commands choose the client's vocabulary then).
var Chars TokenCounter = charsRule{}

type charsRule struct{}

func (charsRule) Count(text []byte) int { return ceilDiv(utf8.RuneCount(text), charsPerToken) }

// The chat format's overhead, counted with a TokenCounter: OpenAI's usage
// counts 3 tokens a message and 1 for its role ("user", "system"), and 3
// priming the reply (OpenAI's cookbook, "How to count tokens with
// tiktoken", for the gpt-3.5-turbo, gpt-4 and gpt-4o families), on the
// chat completions and Responses routes. The messages of the Anthropic
// and Gemini wires are counted without one: their services count with
// tokenizers of their own, whose overhead is not published.
const (
	tokensPerMessage = 4
	tokensPerReply   = 3
)

// chatOverhead is the chat format's tokens around n messages' text.
func chatOverhead(n int) int { return tokensPerMessage*n + tokensPerReply }

// ChatOverhead is the chat format's tokens around n messages' text as the
// simulator counts them with a tokenizer (4 a message and 3 for the
// reply): what an in-process caller adds to a chat prompt's text to say
// its count with WithPromptTokens as the wire would.
func ChatOverhead(n int) int { return chatOverhead(n) }

// promptTokensKey is the context key of WithPromptTokens.
type promptTokensKey struct{}

// WithPromptTokens returns ctx carrying a request's prompt tokens as the
// deployment counts them (usage.prompt_tokens, the chat format's overhead
// and any cached tokens included), for a caller that sends to the
// simulator in process (the policy lab, `ptuprobe fit`): the handler then
// takes n instead of counting the body, so a request costs the lab what
// it costs without a tokenizer. A context value cannot cross the wire,
// so only an in-process caller can set it. n below 1 is ignored.
func WithPromptTokens(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, promptTokensKey{}, n)
}

// completionTokensKey is the context key of WithCompletionTokens.
type completionTokensKey struct{}

// WithCompletionTokens returns ctx carrying the length of the completion
// an admitted request is answered with (at most its max_tokens), for an
// in-process caller that replays a recorded run (`ptuprobe fit`): the
// handler answers n tokens instead of drawing the length, so a send the
// recorded target admitted is corrected, on completion, as it was. Like
// WithPromptTokens it cannot cross the wire. n below 1 is ignored.
func WithCompletionTokens(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, completionTokensKey{}, n)
}

// completionTokensOf is the length WithCompletionTokens put in ctx, 0
// when none.
func completionTokensOf(ctx context.Context) int {
	n, _ := ctx.Value(completionTokensKey{}).(int)
	return max(n, 0)
}

// promptTokensOf is the count WithPromptTokens put in ctx.
func promptTokensOf(ctx context.Context) (int, bool) {
	n, ok := ctx.Value(promptTokensKey{}).(int)
	return n, ok && n >= 1
}

// textSize is a prompt text's size: its characters and, counted with a
// TokenCounter, its tokens.
type textSize struct {
	chars, toks int
}

func (a textSize) plus(b textSize) textSize { return textSize{a.chars + b.chars, a.toks + b.toks} }

// tokens is the size in tokens: counted under tc, else characters / 4,
// rounded up.
func (a textSize) tokens(tc *tokenMemo) int {
	if tc != nil {
		return a.toks
	}
	return ceilDiv(a.chars, charsPerToken)
}

// scanText reads a string: its size (its decoded text counted under tc)
// and its raw bytes, quotes included.
func scanText(sc *jsonscan.Scanner, tc *tokenMemo) (size textSize, raw []byte, err error) {
	raw, err = sc.Capture(func() (err error) { size.chars, err = sc.Chars(); return err })
	if err != nil || tc == nil || len(raw) < 2 {
		return size, raw, err
	}
	text := raw[1 : len(raw)-1]
	if bytes.IndexByte(text, '\\') >= 0 {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return size, raw, jsonscan.ErrSyntax
		}
		text = []byte(s)
	}
	size.toks = tc.count(text)
	return size, raw, nil
}

// tokenMemo counts text with a TokenCounter, a chunk at a time, and
// remembers each chunk's count by its digest: a prompt's fixed part (a
// shared system message, the synthetic filler every request takes a
// prefix of, a document sent again) is counted once, and a request's own
// lead alone. Chunks end where the tokenizers cannot join two tokens
// into one: before a space between two ASCII letters, where o200k_base's
// and cl100k_base's pre-tokenizers split (a word does not take the space
// after it; the space starts the next word's token), so the sum of the
// chunks' counts is the text's count. Which such spaces end a chunk is
// decided by the bytes before them (content-defined, about every
// chunkBytes past the least), so the same text chunks the same way
// wherever it stands in a prompt; a text that repeats too few words to
// offer such a space is cut at the first space past 4 × chunkBytes.
// Bounded: at memoSize chunks it starts afresh.
type tokenMemo struct {
	tc   TokenCounter
	seed maphash.Seed

	mu sync.Mutex
	m  map[uint64]int32
}

const (
	chunkBytes = 64      // a chunk's least length, and its mean distance past it
	memoSize   = 1 << 16 // chunks remembered: 64 Ki × ~256 bytes of text
)

func newTokenMemo(tc TokenCounter) *tokenMemo {
	if tc == nil || tc == Chars {
		return nil
	}
	return &tokenMemo{tc: tc, seed: maphash.MakeSeed(), m: make(map[uint64]int32)}
}

// count is text's tokens under the counter.
func (t *tokenMemo) count(text []byte) int {
	n, start := 0, 0
	for i := start + chunkBytes; i+1 < len(text); i++ {
		if text[i] != ' ' || !asciiLetter(text[i-1]) || !asciiLetter(text[i+1]) || i-start < 4*chunkBytes && !cut(text[i-8:i]) {
			continue
		}
		n += t.chunk(text[start:i])
		start = i
		i += chunkBytes - 1
	}
	return n + t.chunk(text[start:])
}

// chunk is one chunk's count, remembered.
func (t *tokenMemo) chunk(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	k := maphash.Bytes(t.seed, b) ^ uint64(len(b))<<48
	t.mu.Lock()
	n, ok := t.m[k]
	t.mu.Unlock()
	if ok {
		return int(n)
	}
	c := t.tc.Count(b)
	t.mu.Lock()
	if len(t.m) >= memoSize {
		clear(t.m)
	}
	t.m[k] = int32(c)
	t.mu.Unlock()
	return c
}

// cut reports whether a candidate whose eight bytes before are b ends a
// chunk: about one in 64 (a candidate is a word's end, every few bytes).
// It reads those bytes only, so a text chunks alike wherever it stands.
func cut(b []byte) bool {
	h := uint32(2166136261)
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	return h>>26 == 0
}

func asciiLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
