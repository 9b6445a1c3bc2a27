package tokenize

import (
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestCountKnownTexts(t *testing.T) {
	// Counts from OpenAI's tiktoken (python), the reference (the ids are
	// in tiktoken-go's own tests).
	cases := []struct {
		vocab, text string
		want        int
	}{
		{O200kBase, "hello world", 2},
		{Cl100kBase, "hello world", 2},
		{O200kBase, "", 0},
		{Cl100kBase, "supercalifragilistic", 7},
		{O200kBase, "supercalifragilistic", 6},
		{Cl100kBase, "We know what we are, but know not what we may be.", 14},
		{O200kBase, "The quick brown fox jumps over the lazy dog.", 10},
	}
	for _, c := range cases {
		tok, err := Get(c.vocab)
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.CountString(c.text); got != c.want {
			t.Errorf("%s %q: %d tokens, want %d", c.vocab, c.text, got, c.want)
		}
		if got := tok.Count([]byte(c.text)); got != c.want {
			t.Errorf("%s %q bytes: %d tokens, want %d", c.vocab, c.text, got, c.want)
		}
	}
}

func TestTokensConcatenateToText(t *testing.T) {
	tok, _ := Get(O200kBase)
	s := "Prompt caching: 512-token blocks, één ☃ — done."
	toks := tok.Tokens(s)
	if strings.Join(toks, "") != s || len(toks) != tok.CountString(s) {
		t.Fatalf("tokens %q do not make %q (count %d)", toks, s, tok.CountString(s))
	}
}

func TestGetRefusesUnknownAndSharesLoaded(t *testing.T) {
	if _, err := Get("p50k_base"); err != ErrUnknown {
		t.Fatalf("p50k_base: %v, want ErrUnknown", err)
	}
	a, _ := Get(O200kBase)
	b, _ := Get(O200kBase)
	if a != b || a.Name() != O200kBase {
		t.Fatal("a second Get loaded the vocabulary again")
	}
}

func TestDefault(t *testing.T) {
	cases := map[string]string{
		"gpt-4o": O200kBase, "gpt-4o-mini": O200kBase, "prod-GPT-4o-eastus": O200kBase,
		"gpt-4.1-nano": O200kBase, "gpt-4.5-preview": O200kBase, "gpt-5": O200kBase,
		"o1": O200kBase, "o3-mini": O200kBase, "my-o4-mini": O200kBase,
		"gpt-4": Cl100kBase, "gpt-4-turbo": Cl100kBase, "gpt-4-32k": Cl100kBase,
		"gpt-35-turbo": Cl100kBase, "gpt-3.5-turbo": Cl100kBase, "team-gpt35turbo": Cl100kBase,
		"text-embedding-3-small": Cl100kBase,
		"":                       O200kBase, "claude-sonnet-4": O200kBase, "pro1": O200kBase,
		"llama-3-70b": O200kBase, "io3x-gpt-4": Cl100kBase,
	}
	for name, want := range cases {
		if got := Default(name); got != want {
			t.Errorf("Default(%q) = %s, want %s", name, got, want)
		}
	}
}

func TestConcurrentCounts(t *testing.T) {
	tok, _ := Get(Cl100kBase)
	text := strings.Repeat("operators measure advised waits ", 50)
	want := tok.CountString(text)
	var wg sync.WaitGroup
	errs := make(chan int, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if n := tok.CountString(text); n != want {
					errs <- n
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for n := range errs {
		t.Fatalf("a concurrent count was %d, want %d", n, want)
	}
}

// benchTexts are the benchmarks' texts: a 1,000-token prompt as the
// client builds one (1,000 words in a chat request's JSON: 1,017 tokens
// under o200k_base, 1,016 under cl100k_base), and 100 KB
// of the module's documents (English, tables, code spans, symbols).
func benchTexts(b *testing.B) map[string]string {
	var docs strings.Builder
	for _, p := range []string{"../../README.md", "../../docs/ARCHITECTURE.md", "../../bench/README.md"} {
		t, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		docs.Write(t)
	}
	if docs.Len() < 100<<10 {
		b.Fatalf("the documents are %d bytes, not 100 KB", docs.Len())
	}
	return map[string]string{"prompt1000": clientPrompt(1000, 1), "docs100KB": docs.String()[:100<<10]}
}

// BenchmarkCount counts each text under each vocabulary with this
// package and with tiktoken-go, the reference it replaced:
// `go test -run '^$' -bench Count ./internal/tokenize`.
func BenchmarkCount(b *testing.B) {
	texts := benchTexts(b)
	for _, name := range Names() {
		tok, _ := Get(name)
		ref := reference(b, name)
		for _, text := range []string{"prompt1000", "docs100KB"} {
			s := texts[text]
			b.Run(name+"/"+text+"/ours", func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				for b.Loop() {
					tok.CountString(s)
				}
			})
			b.Run(name+"/"+text+"/tiktoken-go", func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				for b.Loop() {
					_, _ = ref.Count(s)
				}
			})
		}
	}
}

// BenchmarkGet is the first Get's cost: reading a vocabulary file into
// its map.
func BenchmarkGet(b *testing.B) {
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := loadRanks(vocabData(name)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCountsAsOpenAITiktoken pins the texts where tiktoken-go differs
// from OpenAI's tiktoken to OpenAI's tokens (the npm package tiktoken
// 1.0.22's encode_ordinary, its Rust core): a DEL is a token of its own
// (tiktoken-go drops it), and `\s*[\r\n]+` takes a whitespace run
// through its last line break (tiktoken-go stops at its first).
func TestCountsAsOpenAITiktoken(t *testing.T) {
	cases := []struct {
		vocab, text string
		toks        []string
		ids         []int
	}{
		{O200kBase, "a\x7fb", []string{"a", "\x7f", "b"}, []int{64, 221, 65}},
		{Cl100kBase, "a\x7fb", []string{"a", "\x7f", "b"}, []int{64, 221, 65}},
		{O200kBase, "\n \n", []string{"\n \n"}, []int{47812}},
		{Cl100kBase, "\n \n", []string{"\n \n"}, []int{27907}},
		{O200kBase, "a  \n\n\nb", []string{"a", "  \n\n\n", "b"}, []int{64, 145331, 65}},
		{Cl100kBase, "a  \n\n\nb", []string{"a", "  \n\n\n", "b"}, []int{64, 80326, 65}},
		{O200kBase, "hello\x7f world", []string{"hello", "\x7f", " world"}, []int{24912, 221, 2375}},
		{Cl100kBase, "hello\x7f world", []string{"hello", "\x7f", " world"}, []int{15339, 221, 1917}},
		{O200kBase, "x \n\t\n  y", []string{"x", " \n\t\n", " ", " y"}, []int{87, 119506, 220, 342}},
		{Cl100kBase, "x \n\t\n  y", []string{"x", " \n\t\n", " ", " y"}, []int{87, 52241, 220, 379}},
		{O200kBase, "\x7f\x7f \x7f\n", []string{"\x7f", "\x7f", " ", "\x7f", "\n"}, []int{221, 221, 220, 221, 198}},
		{Cl100kBase, "\x7f\x7f \x7f\n", []string{"\x7f", "\x7f", " ", "\x7f", "\n"}, []int{221, 221, 220, 221, 198}},
		// the same in both: a symbol's piece takes the first line break
		{Cl100kBase, "!\n \n", []string{"!\n", " \n"}, []int{4999, 720}},
	}
	for _, c := range cases {
		tok, err := Get(c.vocab)
		if err != nil {
			t.Fatal(err)
		}
		got := tok.Tokens(c.text)
		var ids []int
		for _, s := range got {
			ids = append(ids, int(tok.ranks.rank(s)))
		}
		if !slices.Equal(got, c.toks) || !slices.Equal(ids, c.ids) {
			t.Errorf("%s %q: tokens %q (ids %v), OpenAI's tiktoken %q (ids %v)", c.vocab, c.text, got, ids, c.toks, c.ids)
		}
		if n := tok.CountString(c.text); n != len(c.ids) {
			t.Errorf("%s %q: count %d, OpenAI's tiktoken %d", c.vocab, c.text, n, len(c.ids))
		}
	}
}
