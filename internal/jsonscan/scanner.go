package jsonscan

import (
	"encoding/binary"
	"encoding/json"
	"errors"
)

// MaxDepth bounds nesting so a hostile text cannot recurse deeply.
const MaxDepth = 64

// Errors a Scanner returns. A reader that finds a well-formed value of
// another type returns ErrNotInt, ErrNotBool or ErrNotString; ErrSyntax
// and ErrTooDeep mean the text itself is refused.
var (
	ErrSyntax    = errors.New("not valid JSON")
	ErrTooDeep   = errors.New("nested too deeply")
	ErrNotInt    = errors.New("must be an integer")
	ErrNotBool   = errors.New("must be true or false")
	ErrNotString = errors.New("must be a string")
)

// Scanner reads one JSON text from its start. Every reader consumes the
// value it reads; a reader that returns an error may leave the Scanner
// anywhere, and the caller is expected to give up on the text.
type Scanner struct {
	b     []byte
	i     int
	depth int
}

// New returns a Scanner at the start of b.
func New(b []byte) Scanner { return Scanner{b: b} }

func (s *Scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// Peek returns the next non-space byte, or 0 at the end of the text. A
// NUL byte in the text peeks as 0 too (no value starts with one): End,
// not Peek, says whether the text is over.
func (s *Scanner) Peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// End reports whether only white space is left. A caller checks it after
// the top-level value to refuse trailing bytes.
func (s *Scanner) End() bool {
	s.ws()
	return s.i >= len(s.b)
}

// literal consumes word (true, false, null) if it is next.
func (s *Scanner) literal(word string) bool {
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// Null consumes a null if it is next.
func (s *Scanner) Null() bool { return s.Peek() == 'n' && s.literal("null") }

// str reads a string; raw is its content between the quotes (escapes
// kept) and chars the number of characters it holds (see Chars).
func (s *Scanner) str() (raw []byte, chars int, escaped bool, err error) {
	if s.Peek() != '"' {
		return nil, 0, false, ErrNotString
	}
	s.i++
	start := s.i
	for s.i < len(s.b) {
		// Eight plain bytes at a time: the content of most strings.
		for s.i+8 <= len(s.b) && plain8(binary.LittleEndian.Uint64(s.b[s.i:])) {
			s.i += 8
			chars += 8
		}
		if s.i >= len(s.b) {
			break
		}
		c := s.b[s.i]
		switch {
		case c == '"':
			raw = s.b[start:s.i]
			s.i++
			return raw, chars, escaped, nil
		case c == '\\':
			escaped = true
			if s.i+1 >= len(s.b) {
				return nil, 0, false, ErrSyntax
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) || !isHex(s.b[s.i+2]) || !isHex(s.b[s.i+3]) || !isHex(s.b[s.i+4]) || !isHex(s.b[s.i+5]) {
					return nil, 0, false, ErrSyntax
				}
				s.i += 6
			default:
				return nil, 0, false, ErrSyntax
			}
			chars++
		case c < 0x20:
			return nil, 0, false, ErrSyntax
		default:
			if c&0xC0 != 0x80 { // not a UTF-8 continuation byte: a new character
				chars++
			}
			s.i++
		}
	}
	return nil, 0, false, ErrSyntax
}

// Bytes of a word, for plain8.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plain8 reports whether the eight bytes of w are each printable ASCII
// other than a quote or a backslash: bytes a string holds as they are,
// one character each. (hasZero(x) is exact as a yes or no: some byte of x
// is 0; with no high bit set in w, w−ones·0x20 borrows into a byte's high
// bit exactly where that byte is below 0x20.)
func plain8(w uint64) bool {
	hasZero := func(x uint64) bool { return (x-ones)&^x&highs != 0 }
	return w&highs == 0 && (w-ones*0x20)&^w&highs == 0 &&
		!hasZero(w^(ones*'"')) && !hasZero(w^(ones*'\\'))
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// Chars reads a string and returns how many characters it holds without
// decoding it: each escape counts one (a surrogate pair two), and so does
// each byte that does not continue a UTF-8 sequence. For valid UTF-8
// without \u escapes that is the decoded string's rune count.
func (s *Scanner) Chars() (int, error) {
	_, n, _, err := s.str()
	return n, err
}

// Text reads a string and decodes it. Meant for short values (names,
// roles): only a string with escapes pays for encoding/json.
func (s *Scanner) Text() (string, error) {
	s.ws()
	start := s.i
	raw, _, escaped, err := s.str()
	if err != nil || !escaped {
		return string(raw), err
	}
	var v string
	if err := json.Unmarshal(s.b[start:s.i], &v); err != nil {
		return "", ErrSyntax
	}
	return v, nil
}

// number reads a JSON number; isInt reports it had no fraction or
// exponent, and v its value when it is an integer that fits.
func (s *Scanner) number() (v int64, isInt, fits bool, err error) {
	s.ws()
	neg := false
	if s.i < len(s.b) && s.b[s.i] == '-' {
		neg = true
		s.i++
	}
	digits := 0
	fits = true
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++
		digits = 1
	} else {
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			if v > (1<<62)/10 {
				fits = false
			}
			v = v*10 + int64(s.b[s.i]-'0')
			s.i++
			digits++
		}
	}
	if digits == 0 {
		return 0, false, false, ErrSyntax
	}
	isInt = true
	if s.i < len(s.b) && s.b[s.i] == '.' {
		isInt = false
		s.i++
		if !s.digits() {
			return 0, false, false, ErrSyntax
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		isInt = false
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return 0, false, false, ErrSyntax
		}
	}
	if neg {
		v = -v
	}
	return v, isInt, fits, nil
}

func (s *Scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// Huge is what OptInt returns for an integer too large to hold exactly:
// a value out of every range a caller accepts.
const Huge = 1 << 62

// OptInt reads an integer or null; set is false for null. A number with a
// fraction or an exponent, or a value of another type, is ErrNotInt.
func (s *Scanner) OptInt() (v int64, set bool, err error) {
	if s.Null() {
		return 0, false, nil
	}
	c := s.Peek()
	if c != '-' && (c < '0' || c > '9') {
		if err := s.Skip(); err != nil {
			return 0, false, err
		}
		return 0, false, ErrNotInt
	}
	v, isInt, fits, err := s.number()
	if err != nil {
		return 0, false, err
	}
	if !isInt {
		return 0, false, ErrNotInt
	}
	if !fits {
		v = Huge
	}
	return v, true, nil
}

// OptBool reads true, false or null (false).
func (s *Scanner) OptBool() (bool, error) {
	switch {
	case s.Null(), s.Peek() == 'f' && s.literal("false"):
		return false, nil
	case s.Peek() == 't' && s.literal("true"):
		return true, nil
	}
	if err := s.Skip(); err != nil {
		return false, err
	}
	return false, ErrNotBool
}

// Object reads an object, calling member for each key (its raw bytes,
// escapes kept) with the Scanner at the member's value; member must
// consume the value. An error from member stops the walk and is returned.
func (s *Scanner) Object(member func(key []byte) error) error {
	if s.Peek() != '{' {
		return ErrSyntax
	}
	if s.depth++; s.depth > MaxDepth {
		return ErrTooDeep
	}
	s.i++
	if s.Peek() == '}' {
		s.i++
		s.depth--
		return nil
	}
	for {
		key, _, _, err := s.str()
		if err != nil {
			return ErrSyntax
		}
		if s.Peek() != ':' {
			return ErrSyntax
		}
		s.i++
		if err := member(key); err != nil {
			return err
		}
		switch s.Peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return nil
		default:
			return ErrSyntax
		}
	}
}

// Array reads an array, calling elem for each element with the Scanner
// at it; elem must consume it.
func (s *Scanner) Array(elem func(i int) error) error {
	if s.Peek() != '[' {
		return ErrSyntax
	}
	if s.depth++; s.depth > MaxDepth {
		return ErrTooDeep
	}
	s.i++
	if s.Peek() == ']' {
		s.i++
		s.depth--
		return nil
	}
	for i := 0; ; i++ {
		if err := elem(i); err != nil {
			return err
		}
		switch s.Peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return nil
		default:
			return ErrSyntax
		}
	}
}

// Skip consumes any value.
func (s *Scanner) Skip() error {
	switch c := s.Peek(); {
	case c == '{':
		return s.Object(func([]byte) error { return s.Skip() })
	case c == '[':
		return s.Array(func(int) error { return s.Skip() })
	case c == '"':
		_, _, _, err := s.str()
		return err
	case c == '-' || c >= '0' && c <= '9':
		_, _, _, err := s.number()
		return err
	case c == 't' && s.literal("true"), c == 'f' && s.literal("false"), c == 'n' && s.literal("null"):
		return nil
	}
	return ErrSyntax
}

// Capture runs read, which must consume one value, and returns that
// value's bytes as they stand in the text (from its first byte to its
// last, no surrounding space). The bytes alias the text.
func (s *Scanner) Capture(read func() error) ([]byte, error) {
	s.ws()
	from := s.i
	err := read()
	return s.b[from:s.i], err
}
