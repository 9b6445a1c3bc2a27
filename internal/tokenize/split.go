package tokenize

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizers: each vocabulary first cuts text into pieces with a
// regular expression of its own, then encodes each piece alone. These
// are hand-written matchers of those expressions with the semantics of a
// backtracking engine (leftmost alternative first, greedy loops), the
// character classes of Go's unicode tables (\s is unicode.IsSpace), and
// the input's invalid bytes read as U+FFFD each (as tiktoken-go's
// regexp2 reads them; OpenAI's tiktoken takes only valid text). The
// expressions, as tiktoken publishes them:
//
// cl100k_base:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//	 ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// o200k_base:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// The pieces are OpenAI's tiktoken's (its Rust core, fancy-regex), which
// TestSameAsOpenAITiktoken checks with the npm package (-tiktoken-node);
// the equivalence tests and FuzzSameAsTiktokenGo compare them with
// tiktoken-go's on every input where that library is right (same_test.go's
// tiktokenGoIsRight: its regexp2 matcher leaves DEL out of the negated
// sets and ends `\s*[\r\n]+` at a run's first line breaks).

// A rune's classes, as bits.
const (
	cLetter = 1 << iota // \p{L}
	cNumber             // \p{N}
	cSpace              // \s
	cUpper              // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	cLower              // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
)

// classOf is a rune's classes from Go's unicode tables.
func classOf(r rune) uint8 {
	var c uint8
	if unicode.IsSpace(r) {
		c |= cSpace
	}
	switch {
	case unicode.Is(unicode.N, r):
		c |= cNumber
	case unicode.Is(unicode.Ll, r):
		c |= cLetter | cLower
	case unicode.Is(unicode.Lu, r) || unicode.Is(unicode.Lt, r):
		c |= cLetter | cUpper
	case unicode.Is(unicode.Lm, r) || unicode.Is(unicode.Lo, r):
		c |= cLetter | cUpper | cLower
	case unicode.Is(unicode.M, r):
		c |= cUpper | cLower
	}
	return c
}

// asciiClass is the ASCII runes' classes. DEL (U+007F) is in none of
// \s, \p{L}, \p{N}, so it is in the negated sets ([^\s\p{L}\p{N}],
// [^\r\n\p{L}\p{N}]) as in any regex engine ("a\x7fb" is 3 tokens);
// tiktoken-go's generated matcher leaves it out of them.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := range t {
		t[r] = classOf(rune(r))
	}
	return t
}()

// peek reads the rune at s[i:]: the rune, its classes and its length in
// bytes (0 at the end). s is valid UTF-8.
func peek(s string, i int) (rune, uint8, int) {
	if i >= len(s) {
		return -1, 0, 0
	}
	if b := s[i]; b < utf8.RuneSelf {
		return rune(b), asciiClass[b], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return r, classOf(r), n
}

// span is the end of the longest run from s[i:] of runes with any of
// the classes in mask.
func span(s string, i int, mask uint8) int {
	for {
		_, c, n := peek(s, i)
		if n == 0 || c&mask == 0 {
			return i
		}
		i += n
	}
}

// other reports whether classes c are [^\s\p{L}\p{N}]'s.
func other(c uint8) bool { return c&(cSpace|cLetter|cNumber) == 0 }

// prefixable reports whether rune r of classes c is [^\r\n\p{L}\p{N}]'s.
func prefixable(r rune, c uint8) bool {
	return c&(cLetter|cNumber) == 0 && r != '\r' && r != '\n'
}

// contraction is the length in bytes of the match of
// (?i:s|t|re|ve|m|ll|d) at s[j:] (the part after the apostrophe), 0 if
// none. Under (?i) the long s, U+017F, is an s.
func contraction(s string, j int) int {
	if j >= len(s) {
		return 0
	}
	second := func(a, b byte) int {
		if j+1 < len(s) && (s[j+1] == a || s[j+1] == b) {
			return 2
		}
		return 0
	}
	switch s[j] {
	case 's', 'S', 't', 'T', 'm', 'M', 'd', 'D':
		return 1
	case 'r', 'R', 'v', 'V':
		return second('e', 'E')
	case 'l', 'L':
		return second('l', 'L')
	case 0xc5: // U+017F is C5 BF
		return second(0xbf, 0xbf)
	}
	return 0
}

// suffix is the length of an optional contraction ('s, 'll, …) at s[i:].
func suffix(s string, i int) int {
	if i < len(s) && s[i] == '\'' {
		if k := contraction(s, i+1); k > 0 {
			return 1 + k
		}
	}
	return 0
}

// digits is the end of \p{N}{1,3} whose first rune ends at i.
func digits(s string, i int) int {
	for range 2 {
		_, c, n := peek(s, i)
		if c&cNumber == 0 {
			break
		}
		i += n
	}
	return i
}

// nextCl100k is the end of cl100k_base's piece that starts at s[i:]
// (i < len(s)); every rune starts one.
func nextCl100k(s string, i int) int {
	r, c, n := peek(s, i)
	if r == '\'' {
		if k := contraction(s, i+1); k > 0 {
			return i + 1 + k
		}
	}
	switch {
	case c&cLetter != 0:
		return span(s, i+n, cLetter)
	case c&cNumber != 0:
		return digits(s, i+n)
	case prefixable(r, c):
		if _, c2, n2 := peek(s, i+n); c2&cLetter != 0 {
			return span(s, i+n+n2, cLetter)
		}
	}
	return symbolsOrSpace(s, i, r, "\r\n")
}

// nextO200k is the end of o200k_base's piece that starts at s[i:]
// (i < len(s)); every rune starts one.
func nextO200k(s string, i int) int {
	r, c, n := peek(s, i)
	p := prefixable(r, c)
	if p {
		if e := lowerTail(s, i+n); e >= 0 {
			return e
		}
	}
	if e := lowerTail(s, i); e >= 0 {
		return e
	}
	if p {
		if e := upperHead(s, i+n); e >= 0 {
			return e
		}
	}
	if e := upperHead(s, i); e >= 0 {
		return e
	}
	if c&cNumber != 0 {
		return digits(s, i+n)
	}
	return symbolsOrSpace(s, i, r, "\r\n/")
}

// lowerTail is the end of [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+
// and the optional contraction matched at s[p:], -1 if none. The first
// loop gives runes back until the second can take one: if the rune after
// its run is no lower-class rune, the second takes the run's last rune
// that is both (Lm, Lo, M), and only it (the runes after it are Lu or Lt).
func lowerTail(s string, p int) int {
	j, both := p, -1
	for {
		_, c, n := peek(s, j)
		if c&cUpper == 0 {
			break
		}
		if c&cLower != 0 {
			both = j
		}
		j += n
	}
	var e int
	if _, c, n := peek(s, j); c&cLower != 0 {
		e = span(s, j+n, cLower)
	} else if both >= 0 {
		_, _, n := peek(s, both)
		e = both + n
	} else {
		return -1
	}
	return e + suffix(s, e)
}

// upperHead is the end of [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*
// and the optional contraction matched at s[p:], -1 if none.
func upperHead(s string, p int) int {
	j := span(s, p, cUpper)
	if j == p {
		return -1
	}
	e := span(s, j, cLower)
	return e + suffix(s, e)
}

// symbolsOrSpace matches the alternatives after the numbers, from s[i:]
// whose rune r is neither letter nor number:
// ` ?[^\s\p{L}\p{N}]+[TRAIL]*` (TRAIL "\r\n" or "\r\n/"), then the
// whitespace's: `\s*[\r\n]+` (a backtracking engine gives \s* back
// from the run's end, so the piece is the run through its last CR or LF:
// "\n \n" is one piece; tiktoken-go's regexp2 ends it at the run's first
// line breaks),
// `\s+(?!\S)` (the run but its last rune, unless it ends the text),
// `\s+`.
func symbolsOrSpace(s string, i int, r rune, trail string) int {
	j := i
	if r == ' ' {
		j++
	}
	if _, c2, n2 := peek(s, j); n2 > 0 && other(c2) {
		j += n2
		for {
			_, c3, n3 := peek(s, j)
			if n3 == 0 || !other(c3) {
				break
			}
			j += n3
		}
		for j < len(s) && strings.IndexByte(trail, s[j]) >= 0 {
			j++
		}
		return j
	}
	// Every rune is a letter, a number, whitespace or in the negated set
	// above, so r is whitespace here and the run is not empty.
	e := span(s, i, cSpace)
	if k := strings.LastIndexAny(s[i:e], "\r\n"); k >= 0 {
		return i + k + 1
	}
	if e == len(s) {
		return e
	}
	if _, last := utf8.DecodeLastRuneInString(s[i:e]); e-last > i {
		return e - last
	}
	return e
}
