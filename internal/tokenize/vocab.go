package tokenize

import (
	_ "embed"
	"errors"
)

// The vocabularies are generated from tiktoken-go/tokenizer's tables
// (which are OpenAI tiktoken's o200k_base and cl100k_base, MIT
// licensed) by reference_test.go: every token's bytes in rank order,
// each after its length as a uvarint. The test checks them against
// those tables byte for byte.
//
//go:generate go test -run TestVocabularyFilesAreTiktokenGos . -update

//go:embed o200k_base.vocab
var o200kData string

//go:embed cl100k_base.vocab
var cl100kData string

func vocabData(name string) string {
	switch name {
	case O200kBase:
		return o200kData
	case Cl100kBase:
		return cl100kData
	}
	return ""
}

// ranks maps a token's bytes to its rank (its id).
type ranks map[string]uint32

// noRank is the rank of bytes that are no token.
const noRank = ^uint32(0)

func (v ranks) rank(s string) uint32 {
	if r, ok := v[s]; ok {
		return r
	}
	return noRank
}

var errCorrupt = errors.New("tokenize: a vocabulary file is corrupt")

// loadRanks reads a vocabulary file into a map whose keys share the
// file's memory (the embedded string): loading allocates only the map.
func loadRanks(data string) (ranks, error) {
	n := 0
	for i := 0; i < len(data); n++ {
		l, k := uvarint(data[i:])
		if k <= 0 || l > uint64(len(data)-i-k) {
			return nil, errCorrupt
		}
		i += k + int(l)
	}
	v := make(ranks, n)
	for i, r := 0, uint32(0); i < len(data); r++ {
		l, k := uvarint(data[i:])
		i += k
		v[data[i:i+int(l)]] = r
		i += int(l)
	}
	if len(v) != n {
		return nil, errCorrupt // a token twice
	}
	return v, nil
}

// uvarint decodes a uvarint at the start of s: the value and its length
// in bytes, or a length of 0 if s holds no complete one.
func uvarint(s string) (uint64, int) {
	var x uint64
	for i := 0; i < len(s) && i < 10; i++ {
		b := s[i]
		x |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return x, i + 1
		}
	}
	return 0, 0
}
