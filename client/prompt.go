package client

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"strconv"
	"strings"
)

// CharsPerToken is the conversion used for synthetic prompts: a token is
// taken as about four characters of English text, the usual rule of thumb
// for OpenAI tokenizers. The embedded simulator counts the same way.
const CharsPerToken = 4

// promptBuilder makes chat bodies of about PromptTokens tokens. Each body is
// unique (a nonce and the sequence number lead the user message) so no two
// requests share a cacheable prefix, unless SharedPrefixTokens asks for a
// common leading system message, which exercises prompt caching.
//
// The JSON is assembled from pre-built pieces: the filler never needs
// escaping, and the hot path only appends the sequence number.
type promptBuilder struct {
	head, tail []byte
	nonce      string
	fillChars  int
}

var fillerWords = strings.Fields(`the quick brown fox jumps over a lazy dog while
operators measure advised waits from provisioned deployments under steady and
bursty load and record every answer for later analysis`)

// filler returns exactly n characters of space-separated words.
func filler(n int, salt int) string {
	var b strings.Builder
	b.Grow(n + 16)
	for i := salt; b.Len() < n; i++ {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(fillerWords[i%len(fillerWords)])
	}
	return b.String()[:n]
}

func newPromptBuilder(cfg Config) *promptBuilder {
	var nb [6]byte
	_, _ = rand.Read(nb[:])
	p := &promptBuilder{nonce: hex.EncodeToString(nb[:])}
	userTokens, system := cfg.PromptTokens, ""
	if cfg.SharedPrefixTokens > 0 {
		system = filler(cfg.SharedPrefixTokens*CharsPerToken, 0)
		userTokens -= cfg.SharedPrefixTokens
	}
	var before, after string
	switch cfg.API {
	case APIAnthropic:
		before, after = anthropicFrame(&cfg, system)
	case APIGemini:
		before, after = geminiFrame(&cfg, system)
	case APIResponses:
		before, after = responsesFrame(&cfg, system)
	default:
		before, after = chatCompletionFrame(&cfg, system)
	}
	p.head = []byte(before + "Request ")
	// The unique lead ("Request <nonce>-<seq>. ") takes about 24 chars of
	// the user message's budget.
	p.fillChars = max(userTokens*CharsPerToken-24, 1)
	p.tail = []byte(". " + filler(p.fillChars, 3) + after)
	return p
}

// An API's frame is the JSON of a chat body around the text of its one
// user message: before ends inside the string that holds the text, after
// starts there. system is the shared prefix, "" when there is none. Both
// texts are filler, which never needs escaping.

// chatCompletionFrame frames a chat completion (azure and openai): the
// shared prefix as a leading system message, the output cap under
// MaxTokensField, and with Stream a final usage chunk.
func chatCompletionFrame(cfg *Config, system string) (before, after string) {
	var b strings.Builder
	b.WriteString(`{`)
	if cfg.API == APIOpenAI {
		b.WriteString(`"model":` + jsonString(cfg.Model) + `,`)
	}
	b.WriteString(`"messages":[`)
	if system != "" {
		b.WriteString(`{"role":"system","content":"` + system + `"},`)
	}
	b.WriteString(`{"role":"user","content":"`)
	stream := ""
	if cfg.Stream {
		stream = `,"stream":true,"stream_options":{"include_usage":true}`
	}
	return b.String(), `"}],"` + cfg.MaxTokensField + `":` + strconv.Itoa(cfg.MaxTokens) + stream + `}`
}

// jsonString is s as a JSON string: quoted, escaped, invalid UTF-8
// replaced.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

func (p *promptBuilder) body(seq int) []byte {
	b := make([]byte, 0, len(p.head)+len(p.tail)+24)
	b = append(b, p.head...)
	b = append(b, p.lead(seq)...)
	return append(b, p.tail...)
}

// lead is the unique part of body seq, between the shared head and tail.
func (p *promptBuilder) lead(seq int) []byte {
	b := make([]byte, 0, len(p.nonce)+24)
	b = append(b, p.nonce...)
	b = append(b, '-')
	return strconv.AppendInt(b, int64(seq), 10)
}

// reader returns body seq as a reader over the shared head and tail and
// its own lead, and its length. A request in flight thus holds a few
// bytes of its own rather than a copy of the prompt: with the largest
// prompt (4 MB), 200 requests in flight held 800 MB.
func (p *promptBuilder) reader(seq int) (func() (io.ReadCloser, error), int64) {
	lead := p.lead(seq)
	open := func() (io.ReadCloser, error) {
		return &partsBody{parts: [3][]byte{p.head, lead, p.tail}}, nil
	}
	return open, int64(len(p.head) + len(lead) + len(p.tail))
}

// partsBody reads its parts one after another, like io.MultiReader over
// bytes.Readers, and writes them out directly to a copy that asks
// (io.Copy). net/http reads a body of known length through an
// io.LimitReader, so it does not reach WriteTo: it flushes the header
// first and copies the body through a buffer of the body's size
// (bench/README.md, issue 31).
type partsBody struct {
	parts [3][]byte
	i     int // the part being read
	off   int // into it
}

func (b *partsBody) Read(p []byte) (int, error) {
	for ; b.i < len(b.parts); b.i, b.off = b.i+1, 0 {
		if rest := b.parts[b.i][b.off:]; len(rest) > 0 {
			if len(p) == 0 {
				return 0, nil
			}
			n := copy(p, rest)
			b.off += n
			return n, nil
		}
	}
	return 0, io.EOF
}

func (b *partsBody) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for ; b.i < len(b.parts); b.i, b.off = b.i+1, 0 {
		n, err := w.Write(b.parts[b.i][b.off:])
		total += int64(n)
		b.off += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func (b *partsBody) Close() error { return nil }
