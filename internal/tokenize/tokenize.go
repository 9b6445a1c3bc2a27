// Package tokenize counts text in tokens under a real OpenAI vocabulary
// (o200k_base, the gpt-4o family's; cl100k_base, gpt-4's and
// gpt-3.5's), as OpenAI's tiktoken counts it: each vocabulary's pre-tokenizer
// (split.go) cuts the text into pieces, and byte-pair encoding (bpe.go)
// merges each piece's bytes into tokens by rank.
//
// Nothing is downloaded at run time: the vocabularies are embedded data
// files (o200k_base.vocab, cl100k_base.vocab: 2.3 MB together, every
// token's bytes in rank order), OpenAI tiktoken's vocabularies (MIT
// licensed; see NOTICE at the module's root) as the tables of
// github.com/tiktoken-go/tokenizer v0.10.0 (MIT) hold them, written out
// by this package's tests (`go generate ./internal/tokenize`). Those
// tests hold every piece, token and count to that library's, on hard
// texts, prompts built as the client builds them, every pair of Unicode
// categories, the module's documents and test data, and
// FuzzSameAsTiktokenGo; only this package's test binary links it.
//
// The library's vocabularies were Go map literals: they made each binary
// that imported this package ~9.7 MB larger and its link ~0.6 s of CPU
// slower than the data files do (round 8's measures, bench/README.md);
// the first Get of a vocabulary now builds its map in tens of
// milliseconds (BenchmarkGet), and counting is 7–15 times as fast
// (BenchmarkCount). Only the packages that wire a counter in import this
// package; a package that counts (client, sim) declares a small
// interface of its own that *Tokenizer satisfies.
//
// The counts are OpenAI's tiktoken's (its encode_ordinary: special
// tokens, "<|endoftext|>" and the rest, are counted as the text they are
// spelled with, as tiktoken-go counts them), checked against the npm
// package tiktoken 1.0.22 (OpenAI's Rust core in WASM) by
// TestSameAsOpenAITiktoken, which runs with -tiktoken-node DIR (.ci/run
// installs it). Where tiktoken-go differs from OpenAI's tiktoken, this
// package counts as OpenAI's does: tiktoken-go's regexp2 matcher has two
// bugs, a DEL (U+007F) in no piece (no token at all: "a\x7fb" is 2
// tokens there, 3 in tiktoken) and `\s*[\r\n]+` ending at a whitespace
// run's first line breaks ("\n \n" is 2 pieces there, 1 in tiktoken;
// split.go). The tests compare with tiktoken-go only on texts without
// either (same_test.go's tiktokenGoIsRight).
package tokenize

import (
	"errors"
	"strings"
	"sync"
	"unicode/utf8"
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
	ranks ranks
	next  func(s string, i int) int // the end of the piece at s[i:]
}

var (
	mu     sync.Mutex
	loaded = map[string]*Tokenizer{}
)

// Get returns the tokenizer of the vocabulary called name (O200kBase or
// Cl100kBase), loading it on first use (the vocabulary's map takes some
// 20–90 ms to build, once per process), or ErrUnknown.
func Get(name string) (*Tokenizer, error) {
	var next func(string, int) int
	switch name {
	case O200kBase:
		next = nextO200k
	case Cl100kBase:
		next = nextCl100k
	default:
		return nil, ErrUnknown
	}
	mu.Lock()
	defer mu.Unlock()
	if t, ok := loaded[name]; ok {
		return t, nil
	}
	v, err := loadRanks(vocabData(name))
	if err != nil {
		return nil, err
	}
	t := &Tokenizer{name: name, ranks: v, next: next}
	loaded[name] = t
	return t, nil
}

// Name is the vocabulary's name, as Get takes it.
func (t *Tokenizer) Name() string { return t.name }

// Count is the number of tokens in text: as many as the server that
// uses this vocabulary counts for it. Invalid UTF-8 is never refused:
// each byte that starts no valid character is counted as a U+FFFD (as
// tiktoken-go reads it).
func (t *Tokenizer) Count(text []byte) int { return t.CountString(string(text)) }

// CountString is Count of a string.
func (t *Tokenizer) CountString(s string) int {
	n := 0
	t.each(s, func(string) { n++ })
	return n
}

// Tokens splits text into its tokens' texts, in order: their
// concatenation is text, if text is valid UTF-8 (each byte that starts
// no valid character is a U+FFFD in them). A prefix of them is
// text cut to that many tokens (a cut inside a multi-byte character may
// leave invalid UTF-8 at the end, which a caller building JSON drops or
// replaces).
func (t *Tokenizer) Tokens(s string) []string {
	var toks []string
	t.each(s, func(tok string) { toks = append(toks, tok) })
	return toks
}

// each calls f with each token of s in order.
func (t *Tokenizer) each(s string, f func(string)) {
	var sc scratch
	t.pieces(runes(s), func(piece string) {
		if len(piece) == 1 || t.ranks.rank(piece) != noRank {
			f(piece)
			return
		}
		b := t.ranks.merge(piece, &sc)
		for k := 0; k+1 < len(b); k++ {
			f(piece[b[k]:b[k+1]])
		}
	})
}

// pieces calls f with each piece of s (valid UTF-8) that the
// vocabulary's pre-tokenizer cuts, in order.
func (t *Tokenizer) pieces(s string, f func(string)) {
	for i := 0; i < len(s); {
		j := t.next(s, i) // > i: every rune starts a piece
		f(s[i:j])
		i = j
	}
}

// runes is s with each byte that starts no valid UTF-8 sequence replaced
// by U+FFFD, as a conversion to []rune reads it; s itself when valid.
func runes(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
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
