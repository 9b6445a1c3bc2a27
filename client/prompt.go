package client

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// CharsPerToken is the length of a synthetic prompt's token: its text is
// words of three letters, each with its leading space, and each such
// word is one token under o200k_base and cl100k_base (wordsTest checks
// every one), so a prompt of N tokens is exactly 4N characters. The
// embedded simulator's own rule of four characters a token thus counts
// it as a real tokenizer does.
const CharsPerToken = 4

// BlockTokens is the length of a shared block of a trace's prompt (a
// Mooncake hash id): 512 tokens, the last block of a prompt cut to fit.
const BlockTokens = 512

// Counter counts text in tokens as the target does
// (internal/tokenize's *Tokenizer is one). The client counts through it
// only text it did not build itself, a prompts file's lines, once each
// before the run; a synthetic prompt's count is known by construction.
type Counter interface {
	Count(text []byte) int
}

// Shape is one request's sizes.
type Shape struct {
	// PromptTokens is the prompt's text in tokens, the shared prefix and
	// the blocks included (not the chat format's overhead).
	PromptTokens int
	MaxTokens    int
	// Blocks are the ids of the shared blocks that lead the text, in
	// order, BlockTokens each (the last cut to fit PromptTokens): requests
	// that share an id share that block's text, so a prompt cache serves
	// them as the trace's service did.
	Blocks []uint64
}

// Shaper gives each request its Shape by its sequence number: a pure
// function of seq (so shards and reruns agree), safe for concurrent use,
// and cheap: it runs as the request is built, so it counts nothing.
type Shaper interface {
	Shape(seq int) Shape
	// LargestPrompt is the largest PromptTokens Shape returns.
	LargestPrompt() int
}

// words are the synthetic text's tokens: three-letter words, each one
// token with its leading space under o200k_base and cl100k_base. A
// request's lead spells its sequence number and the run's nonce in them
// (base len(words)); the filler and a block's text are drawn from them.
var words = strings.Fields(`the and for are but not you all any can had her was one our out day get
has him his how man new now old see two way who boy did its let put say she too use act add age ago
aid aim air art ask bad bag bar bed big bit box bus buy car cat cup cut dog dry due ear eat egg end
eye far fat few fit fix fly fun gas guy hat hit hot ice job key kid lab lay leg lie lot low map mix
net nor oil pay per pet pie pig pin pop pot raw red rid row run sad sea set sit six sky son sun tax
tea ten tie tip toe top toy try van wet win yes yet zoo arm bay bee bow cow cry den dig dot dug fan
fee fog fox fur gap gym hay hen hip hop hug hut ink jam jar jaw jet joy kit lap law lid lip log mad
mat mud nap nut oak odd owl pad pan pen pit rat ray rib rim rod rug sag saw sew shy sip ski sob sow
spa spy tag tan tap tin tub`)

// leadWords is the unique lead's length in tokens: five words spell the
// sequence number (base len(words), the least significant first, so two
// requests differ from their first token), five the run's nonce.
const leadWords = 10

// appendWord appends word i (mod len(words)) with its leading space.
func appendWord(b []byte, i uint64) []byte {
	return append(append(b, ' '), words[i%uint64(len(words))]...)
}

// frame is an API's JSON around a request's text and its output cap:
// p0 TEXT p1 MAX p2, or with maxFirst p0 MAX p1 TEXT p2. The text sits
// inside a JSON string; synthetic text never needs escaping.
type frame struct {
	p0, p1, p2 []byte
	maxFirst   bool
}

// promptBuilder makes synthetic bodies: request seq's text is its Shape's
// PromptTokens tokens exactly — the shared prefix (a leading system
// message, the same for all), the shared blocks, then a unique lead
// (so no two requests share a cacheable prefix beyond those) and filler.
//
// The filler is built once, for the largest prompt, and a request takes
// a prefix of it; only the lead and the output cap are a request's own
// bytes, so token work scales with the sizes, not the requests.
type promptBuilder struct {
	frame    frame
	nonce    uint64
	filler   []byte // words, CharsPerToken bytes each
	system   int    // the shared prefix's tokens
	overhead int    // the chat format's tokens around the text
	fixed    Shape  // every request's, without shapes
	shapes   Shaper
	blocks   blockTexts
}

// newPromptBuilder builds the frame, the shared prefix and the filler.
func newPromptBuilder(cfg *Config) (*promptBuilder, error) {
	var nb [8]byte
	_, _ = rand.Read(nb[:])
	p := &promptBuilder{
		nonce:  binary.LittleEndian.Uint64(nb[:]),
		system: cfg.SharedPrefixTokens,
		fixed:  Shape{PromptTokens: cfg.PromptTokens, MaxTokens: cfg.MaxTokens},
		shapes: cfg.Shapes,
	}
	if err := checkWords(cfg.Tokenizer); err != nil {
		return nil, err
	}
	largest := cfg.PromptTokens
	if p.shapes != nil {
		largest = p.shapes.LargestPrompt()
	}
	var system []byte
	for i := range p.system {
		system = appendWord(system, uint64(i)*7)
	}
	messages := 1
	if p.system > 0 {
		messages = 2
	}
	p.frame = apiFrame(cfg, string(system))
	p.overhead = chatOverhead(cfg.API, messages)
	fill := max(largest-p.system, 1)
	p.filler = make([]byte, 0, fill*CharsPerToken)
	for i := range fill {
		p.filler = appendWord(p.filler, uint64(i)*31+3)
	}
	return p, nil
}

// checkWords makes sure every word is one token under c (nil: the two
// vocabularies served, which the tests check).
func checkWords(c Counter) error {
	if c == nil {
		return nil
	}
	for _, w := range words {
		if c.Count([]byte(" "+w)) != 1 {
			return valid.Errorf("Tokenizer", "counts the synthetic prompt's words otherwise than o200k_base and cl100k_base do: its prompts could not be built to an exact count")
		}
	}
	return nil
}

// apiFrame is cfg.API's frame around the text, with system as the shared
// prefix ("" for none).
func apiFrame(cfg *Config, system string) frame {
	before, after := dialectOf(cfg.API).frame(cfg, system)
	return splitFrame(before, after, strconv.Itoa(cfg.MaxTokens))
}

// splitFrame cuts the output cap out of a frame written around text with
// max as its cap: the cap's digits follow the field that names it.
func splitFrame(before, after, max string) frame {
	for _, field := range []string{`"max_tokens":`, `"max_completion_tokens":`, `"maxOutputTokens":`, `"max_output_tokens":`} {
		if i := strings.Index(before, field+max); i >= 0 {
			at := i + len(field)
			return frame{p0: []byte(before[:at]), p1: []byte(before[at+len(max):]), p2: []byte(after), maxFirst: true}
		}
		if i := strings.Index(after, field+max); i >= 0 {
			at := i + len(field)
			return frame{p0: []byte(before), p1: []byte(after[:at]), p2: []byte(after[at+len(max):])}
		}
	}
	panic("client: a frame without its output cap") // every frame writes one
}

// chatOverhead is the tokens a chat format adds around its messages'
// text in OpenAI's usage: 3 a message and 1 for its role ("user",
// "system"), and 3 priming the reply (OpenAI's cookbook,
// "How to count tokens with tiktoken", for the gpt-3.5-turbo, gpt-4 and
// gpt-4o families). The Responses API's string input is one user
// message, its instructions a system one. Anthropic and Gemini count
// with tokenizers of their own: their overhead is not known, taken as 0.
func chatOverhead(api string, messages int) int {
	return dialectOf(api).overhead(messages)
}

// ChatOverhead is the chat format's tokens around the text of a
// synthetic request to api (with a shared prefix, two messages), as
// prompt_tokens_sent counts them.
func ChatOverhead(api string, sharedPrefix bool) int {
	if sharedPrefix {
		return chatOverhead(api, 2)
	}
	return chatOverhead(api, 1)
}

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
	return b.String(), `"}],` + chatTail(cfg)
}

// chatTail is a chat completion's members after its messages: the output
// cap, and with Stream the stream's options.
func chatTail(cfg *Config) string {
	stream := ""
	if cfg.Stream {
		stream = `,"stream":true,"stream_options":{"include_usage":true}`
	}
	return `"` + cfg.MaxTokensField + `":` + strconv.Itoa(cfg.MaxTokens) + stream + `}`
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

// shape is request seq's Shape.
func (p *promptBuilder) shape(seq int) Shape {
	if p.shapes == nil {
		return p.fixed
	}
	return p.shapes.Shape(seq)
}

// sizes is what request seq carries: its prompt in tokens as
// prompt_tokens_sent counts it (text and the chat format's overhead),
// and its output cap.
func (p *promptBuilder) sizes(seq int) (prompt, maxTokens int) {
	s := p.shape(seq)
	return p.system + max(s.PromptTokens-p.system, 1) + p.overhead, s.MaxTokens
}

// own is request seq's own bytes: its blocks' and lead's text, then its
// output cap's digits (at cut), and how many filler tokens follow the
// lead. A shape whose prompt is no longer than the shared prefix still
// gets one token of its own.
func (p *promptBuilder) own(seq int) (own []byte, cut, fill int) {
	s := p.shape(seq)
	user := max(s.PromptTokens-p.system, 1)
	blocks := min(len(s.Blocks)*BlockTokens, user)
	rest := user - blocks
	lead := min(leadWords, rest)
	own = make([]byte, 0, (blocks+lead)*CharsPerToken+8)
	for i := 0; i < blocks; i += BlockTokens {
		text := p.blocks.text(s.Blocks[i/BlockTokens])
		own = append(own, text[:min(BlockTokens, blocks-i)*CharsPerToken]...)
	}
	// The nonce's ten digits (base 200: 200^8 < 2^64) shift the
	// sequence number's five and follow them.
	n := uint64(len(words))
	for i, q, r := 0, uint64(seq), p.nonce; i < lead; i++ {
		if i < leadWords/2 {
			own = appendWord(own, q%n+r%n)
			q = q / n
		} else {
			own = appendWord(own, r%n)
		}
		r /= n
	}
	cut = len(own)
	own = strconv.AppendInt(own, int64(s.MaxTokens), 10)
	return own, cut, rest - lead
}

// blockTexts remembers the text of the blocks built last: a trace's
// rows share their leading blocks, so a block is mostly built once. At
// maxBlockTexts (8 MiB of text) it starts afresh.
type blockTexts struct {
	mu sync.Mutex
	m  map[uint64][]byte
}

const maxBlockTexts = 4096

// text is the block's BlockTokens words.
func (b *blockTexts) text(id uint64) []byte {
	b.mu.Lock()
	t, ok := b.m[id]
	b.mu.Unlock()
	if ok {
		return t
	}
	t = make([]byte, 0, BlockTokens*CharsPerToken)
	for i := range BlockTokens {
		t = appendWord(t, blockWord(id, i))
	}
	b.mu.Lock()
	if b.m == nil || len(b.m) >= maxBlockTexts {
		b.m = make(map[uint64][]byte)
	}
	b.m[id] = t
	b.mu.Unlock()
	return t
}

// blockWord is word i of the block with id: a function of the two, so
// every row that shares the id shares the block's text.
func blockWord(id uint64, i int) uint64 {
	x := id*0x9e3779b97f4a7c15 + uint64(i)
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// parts is request seq's body in order: the frame's pieces around its
// own bytes and the filler's prefix.
func (p *promptBuilder) parts(seq int) partsBody {
	own, cut, fill := p.own(seq)
	text, mx, filler := own[:cut], own[cut:], p.filler[:fill*CharsPerToken]
	f := &p.frame
	if f.maxFirst {
		return partsBody{parts: [6][]byte{f.p0, mx, f.p1, text, filler, f.p2}}
	}
	return partsBody{parts: [6][]byte{f.p0, text, filler, f.p1, mx, f.p2}}
}

func (p *promptBuilder) body(seq int) []byte {
	b := p.parts(seq)
	var out bytes.Buffer
	b.WriteTo(&out)
	return out.Bytes()
}

// reader returns body seq as a reader and its length. A body up to
// pooledBodyMax is built at its first read into a pooled buffer, given
// back when net/http closes the body once written: a request in flight
// (an open stream) holds 80 bytes of it rather than its parts (some
// 330 bytes: bench/README.md, memory per open stream), and the body is
// one piece to write. A larger one reads the shared pieces and its own
// bytes in place, never a copy of the prompt: with the largest prompt
// (4 MB), 200 requests in flight held 800 MB.
func (p *promptBuilder) reader(seq int) (func() (io.ReadCloser, error), int64) {
	n := p.length(seq)
	if n <= pooledBodyMax {
		return func() (io.ReadCloser, error) { return &pooledBody{p: p, seq: seq}, nil }, n
	}
	b := p.parts(seq)
	open := func() (io.ReadCloser, error) {
		c := b
		return &c, nil
	}
	return open, n
}

// length is body seq's length in bytes, without building it.
func (p *promptBuilder) length(seq int) int64 {
	s := p.shape(seq)
	user := max(s.PromptTokens-p.system, 1)
	// Every token of the text is CharsPerToken bytes: the blocks', the
	// lead's words and the filler's (TestPromptBodyReader).
	n := len(p.frame.p0) + len(p.frame.p1) + len(p.frame.p2) + user*CharsPerToken + digits(s.MaxTokens)
	return int64(n)
}

// digits is the length of n in decimal.
func digits(n int) int {
	d := 1
	if n < 0 {
		d, n = 2, -n
	}
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// pooledBodyMax is the largest body reader builds into a pooled buffer.
const pooledBodyMax = 64 << 10

var promptPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// pooledBody is body seq of p, built at its first read into a buffer from
// promptPool and given back at Close. net/http may close a body while
// another of its goroutines still reads it (an HTTP/2 stream's abort):
// the lock keeps the buffer from going back to the pool under a read.
type pooledBody struct {
	p      *promptBuilder
	seq    int
	mu     sync.Mutex
	buf    *bytes.Buffer
	closed bool
}

// fill builds the body, if it is not built; under b.mu.
func (b *pooledBody) fill() error {
	if b.closed {
		return os.ErrClosed
	}
	if b.buf == nil {
		b.buf = promptPool.Get().(*bytes.Buffer)
		b.buf.Reset()
		parts := b.p.parts(b.seq)
		parts.WriteTo(b.buf)
	}
	return nil
}

func (b *pooledBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.fill(); err != nil {
		return 0, err
	}
	return b.buf.Read(p)
}

func (b *pooledBody) WriteTo(w io.Writer) (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.fill(); err != nil {
		return 0, err
	}
	return b.buf.WriteTo(w)
}

func (b *pooledBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf != nil && b.buf.Cap() <= pooledBodyMax {
		promptPool.Put(b.buf)
	}
	b.buf, b.closed = nil, true
	return nil
}

// partsBody reads its parts one after another, like io.MultiReader over
// bytes.Readers, and writes them out directly to a copy that asks
// (io.Copy). net/http reads a body of known length through an
// io.LimitReader, so it does not reach WriteTo: it flushes the header
// first and copies the body through a buffer of the body's size
// (bench/README.md, issue 31).
type partsBody struct {
	parts [6][]byte
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
