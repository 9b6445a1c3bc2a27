// Package tokenize counts text in tokens under a real OpenAI vocabulary
// (o200k_base, the gpt-4o family's; cl100k_base, gpt-4's and
// gpt-3.5's), wrapping github.com/tiktoken-go/tokenizer, whose
// vocabularies are embedded: nothing is downloaded at run time.
//
// The vocabularies add ~12 MB and ~0.45 s of linking to every binary
// that imports this package, so only the packages that wire a counter in
// import it; a package that counts (client, sim) declares a small
// interface of its own that *Tokenizer satisfies.
package tokenize

import (
	"errors"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// The vocabularies this package serves, by their tiktoken names.
const (
	O200kBase  = "o200k_base"
	Cl100kBase = "cl100k_base"
)

// Names lists the vocabularies Get serves, the default first.
func Names() []string { return []string{O200kBase, Cl100kBase} }

// ErrUnknown is Get's error for a name it does not serve.
var ErrUnknown = errors.New("unknown tokenizer: want o200k_base or cl100k_base")

// Tokenizer counts tokens under one vocabulary. It is safe for
// concurrent use.
type Tokenizer struct {
	name  string
	codec tokenizer.Codec
}

var (
	mu     sync.Mutex
	loaded = map[string]*Tokenizer{}
)

// Get returns the tokenizer of the vocabulary called name (O200kBase or
// Cl100kBase), loading it on first use (the vocabulary's table takes
// ~0.1–0.3 s to build once per process), or ErrUnknown.
func Get(name string) (*Tokenizer, error) {
	var enc tokenizer.Encoding
	switch name {
	case O200kBase:
		enc = tokenizer.O200kBase
	case Cl100kBase:
		enc = tokenizer.Cl100kBase
	default:
		return nil, ErrUnknown
	}
	mu.Lock()
	defer mu.Unlock()
	if t, ok := loaded[name]; ok {
		return t, nil
	}
	c, err := tokenizer.Get(enc)
	if err != nil {
		return nil, err
	}
	t := &Tokenizer{name: name, codec: c}
	loaded[name] = t
	return t, nil
}

// Name is the vocabulary's name, as Get takes it.
func (t *Tokenizer) Name() string { return t.name }

// Count is the number of tokens in text: as many as the server that
// uses this vocabulary counts for it. Invalid UTF-8 is counted as the
// bytes it is (tiktoken's byte-level fallback), never refused.
func (t *Tokenizer) Count(text []byte) int { return t.CountString(string(text)) }

// CountString is Count of a string.
func (t *Tokenizer) CountString(s string) int {
	if s == "" {
		return 0
	}
	n, _ := t.codec.Count(s) // errors only in strict UTF-8 mode, which is not set
	return n
}

// Tokens splits text into its tokens' texts, in order: their
// concatenation is text. A prefix of them is text cut to that many
// tokens (a cut inside a multi-byte character may leave invalid UTF-8
// at the end, which a caller building JSON drops or replaces).
func (t *Tokenizer) Tokens(s string) []string {
	if s == "" {
		return nil
	}
	_, toks, _ := t.codec.Encode(s)
	return toks
}

// Default is the vocabulary for a model or deployment name: the gpt-4o,
// gpt-4.1, gpt-4.5, gpt-5 and o-series (o1, o3, o4) families count with
// o200k_base, gpt-4 (gpt-4-turbo, gpt-4-32k), gpt-3.5 (Azure's gpt-35)
// and the text-embedding models with cl100k_base, anything else with
// o200k_base (the current models'). A deployment name is a user's word,
// so the families are looked for anywhere in it, case aside
// ("prod-gpt-4o-eastus" is o200k_base, "team-gpt35turbo" cl100k_base).
func Default(name string) string {
	s := strings.ToLower(name)
	for _, f := range []string{"gpt-4o", "gpt4o", "gpt-4.1", "gpt-41", "gpt4.1", "gpt-4.5", "gpt-45", "gpt4.5", "gpt-5", "gpt5", "gpt-oss", "chatgpt"} {
		if strings.Contains(s, f) {
			return O200kBase
		}
	}
	if oSeries(s) {
		return O200kBase
	}
	for _, f := range []string{"gpt-4", "gpt4", "gpt-35", "gpt-3.5", "gpt35", "gpt3.5", "text-embedding", "davinci-002", "babbage-002"} {
		if strings.Contains(s, f) {
			return Cl100kBase
		}
	}
	return O200kBase
}

// oSeries reports whether s names an o-series model: o1, o3 or o4 as a
// word of its own ("o1", "o3-mini", "my-o4-mini"), not inside one
// ("pro1", "io3x").
func oSeries(s string) bool {
	for _, f := range []string{"o1", "o3", "o4"} {
		for i := 0; ; {
			j := strings.Index(s[i:], f)
			if j < 0 {
				break
			}
			at := i + j
			end := at + len(f)
			if (at == 0 || !alnum(s[at-1])) && (end == len(s) || !alnum(s[end])) {
				return true
			}
			i = at + 1
		}
	}
	return false
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
