package tokenize

import (
	"bytes"
	"encoding/binary"
	"flag"
	"os"
	"sync"
	"testing"

	"github.com/dlclark/regexp2/v2"
	"github.com/tiktoken-go/tokenizer"
)

// The reference: github.com/tiktoken-go/tokenizer (MIT), the library
// this package wrapped until round 8. Only this package's tests link it:
// its vocabularies are Go map literals whose link cost every binary
// importing it paid. The data files are written from its tables, and
// the tests compare every count and every split with its own.

var update = flag.Bool("update", false, "rewrite the vocabulary files (*.vocab) from tiktoken-go/tokenizer's tables")

var (
	refMu     sync.Mutex
	refCodecs = map[string]tokenizer.Codec{}
)

// reference is tiktoken-go's codec for the vocabulary called name,
// built once per test binary.
func reference(t testing.TB, name string) tokenizer.Codec {
	t.Helper()
	refMu.Lock()
	defer refMu.Unlock()
	if c, ok := refCodecs[name]; ok {
		return c
	}
	enc := map[string]tokenizer.Encoding{O200kBase: tokenizer.O200kBase, Cl100kBase: tokenizer.Cl100kBase}[name]
	c, err := tokenizer.Get(enc)
	if err != nil {
		t.Fatal(err)
	}
	refCodecs[name] = c
	return c
}

// vocabularyFile is the file format vocab.go reads, built from
// tiktoken-go's table: every token's bytes in rank order, each after
// its length as a uvarint. The ranks are dense from 0 (checked: the
// rank after the last has no token, nor do the next 10,000, the
// special tokens' ranks aside, which are not in the table).
func vocabularyFile(t testing.TB, c tokenizer.Codec) []byte {
	t.Helper()
	var out []byte
	rank := 0
	for ; ; rank++ {
		tok, err := c.Decode([]uint{uint(rank)})
		if err != nil {
			break
		}
		out = binary.AppendUvarint(out, uint64(len(tok)))
		out = append(out, tok...)
	}
	if rank == 0 {
		t.Fatal("the reference has no token of rank 0")
	}
	for r := rank + 1; r < rank+10000; r++ {
		if tok, err := c.Decode([]uint{uint(r)}); err == nil {
			t.Fatalf("the reference's ranks are not dense: %d has no token, %d has %q", rank, r, tok)
		}
	}
	return out
}

// TestVocabularyFilesAreTiktokenGos checks the embedded vocabularies
// against the reference's tables byte for byte (so a new version of the
// reference that changes a table fails here), or with -update rewrites
// them: `go generate ./internal/tokenize` runs that.
func TestVocabularyFilesAreTiktokenGos(t *testing.T) {
	for _, name := range Names() {
		want := vocabularyFile(t, reference(t, name))
		file := name + ".vocab"
		if *update {
			if err := os.WriteFile(file, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from tiktoken-go's table (%d bytes, want %d): run go generate ./internal/tokenize", file, len(got), len(want))
		}
		if embedded := vocabData(name); embedded != string(got) {
			t.Errorf("the embedded %s is not the file", file)
		}
	}
}

// referenceSplit is the reference's pre-tokenizer: its expressions (as
// tiktoken-go's codec package compiles them, so that regexp2 runs the
// matcher that package generated and registered for them).
var referenceSplit = map[string]*regexp2.Regexp{
	Cl100kBase: regexp2.MustCompile(`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`, regexp2.None),
	O200kBase: regexp2.MustCompile(
		`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
		regexp2.None),
}

// referencePieces is the pieces the reference cuts text into.
func referencePieces(t testing.TB, name, text string) []string {
	t.Helper()
	var out []string
	m, err := referenceSplit[name].FindStringMatch(text)
	for ; m != nil && err == nil; m, err = referenceSplit[name].FindNextMatch(m) {
		out = append(out, m.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}
