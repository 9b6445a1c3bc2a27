package tokenize

import (
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

var tiktokenNode = flag.String("tiktoken-node", "",
	"a directory holding node_modules/tiktoken (npm install tiktoken@1.0.22): compare the token ids with OpenAI's tiktoken's")

// openAICorpus is the texts TestSameAsOpenAITiktoken compares: the hard
// texts, client prompts, the category pairs (all at once and a line
// each), the module's documents and test data and the shared fixtures
// (each file's first 4 KB), and random strings of a fixed seed: of
// runes of every category with whitespace, line breaks, controls and DEL
// (short, to meet every pair), and of any code point. Only valid UTF-8:
// OpenAI's tiktoken takes strings, not bytes.
func openAICorpus(t *testing.T) []string {
	var texts []string
	add := func(s string) {
		if utf8.ValidString(s) {
			texts = append(texts, s)
		}
	}
	for _, s := range hardTexts {
		add(s)
	}
	for _, n := range []int{1, 3, 10, 30, 100, 300, 1000} {
		add(clientPrompt(n, uint64(n)))
	}
	pairs := categoryPairs()
	add(strings.Join(pairs, ""))
	for _, l := range pairs {
		add(l)
	}
	for _, p := range moduleFiles(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b = b[:min(len(b), 4<<10)]
		for len(b) > 0 && !utf8.Valid(b) { // a rune cut at the end
			b = b[:len(b)-1]
		}
		add(string(b))
	}
	rng := rand.New(rand.NewPCG(39, 8))
	alphabet := append(categoryRunes(), ' ', ' ', '\n', '\n', '\r', '\t', '\v', '\f', 0, 0x1b, 0x1f, 0x7f, 0x7f,
		0x85, 0xa0, 0x2028, 0x3000, '\'', 'a', 'Z', '1', '!', '/', 'ſ', 0x301, 0x1f600, 0xfffd)
	for range 3000 {
		rs := make([]rune, 1+rng.IntN(24))
		for i := range rs {
			rs[i] = alphabet[rng.IntN(len(alphabet))]
		}
		add(string(rs))
	}
	for range 1000 {
		rs := make([]rune, 1+rng.IntN(40))
		for i := range rs {
			r := rune(rng.IntN(0x30000))
			if rng.IntN(2) == 0 {
				r = rune(rng.IntN(0x3000))
			}
			if 0xd800 <= r && r < 0xe000 {
				r = '\n'
			}
			rs[i] = r
		}
		add(string(rs))
	}
	return texts
}

// TestSameAsOpenAITiktoken compares the token ids, under both
// vocabularies, with OpenAI's tiktoken's (the npm package, run by
// testdata/tiktoken.js) on openAICorpus. It runs only with
// -tiktoken-node DIR (.ci/run installs tiktoken@1.0.22 there when node
// and npm exist).
func TestSameAsOpenAITiktoken(t *testing.T) {
	if *tiktokenNode == "" {
		t.Skip("no -tiktoken-node DIR")
	}
	texts := openAICorpus(t)
	var b strings.Builder
	for _, s := range texts {
		j, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	file := filepath.Join(t.TempDir(), "texts.jsonl")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join("testdata", "tiktoken.js"), *tiktokenNode, file)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node testdata/tiktoken.js: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 2*len(texts) {
		t.Fatalf("tiktoken.js printed %d lines for %d texts, want %d", len(lines), len(texts), 2*len(texts))
	}
	bad, tokens := 0, 0
	for i, s := range texts {
		for k, name := range []string{O200kBase, Cl100kBase} {
			tok, err := Get(name)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range tok.Tokens(s) {
				got = append(got, strconv.FormatUint(uint64(tok.ranks.rank(p)), 10))
			}
			want := lines[2*i+k]
			tokens += len(got)
			if g := strings.Join(got, " "); g != want {
				bad++
				if bad <= 10 {
					t.Errorf("%s, text %d %q: ids %s, OpenAI's tiktoken %s", name, i, s[:min(len(s), 80)], g, want)
				}
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d encodings differ from OpenAI's tiktoken", bad, 2*len(texts))
	}
	t.Logf("%d texts, %d tokens under both vocabularies: the ids are OpenAI's tiktoken's", len(texts), tokens)
}
