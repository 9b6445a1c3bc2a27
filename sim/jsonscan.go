package sim

import (
	"encoding/json"
	"errors"
)

// jsonScanner reads the few fields the model needs straight from a body,
// skipping everything else, without building values. It exists because
// encoding/json spent ~45 µs on the client's 4 KB body — most of a 429's
// budget at 20,000 answers/s on two cores — and a refusal needs only the
// character counts. It accepts exactly RFC 8259 JSON; object keys are
// matched byte for byte (no escapes, case-sensitive).
type jsonScanner struct {
	b     []byte
	i     int
	depth int
}

// maxJSONDepth bounds nesting so a hostile body cannot recurse deeply.
const maxJSONDepth = 64

var (
	errSyntax   = errors.New("not valid JSON")
	errTooDeep  = errors.New("nested too deeply")
	errNotInt   = errors.New("must be an integer")
	errNotBool  = errors.New("must be true or false")
	errNotStr   = errors.New("must be a string")
	errNotParts = errors.New("must be a string or an array of parts")
)

func (s *jsonScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (s *jsonScanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// literal consumes word (true, false, null) if it is next.
func (s *jsonScanner) literal(word string) bool {
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// null consumes a null if it is next.
func (s *jsonScanner) null() bool { return s.peek() == 'n' && s.literal("null") }

// str reads a string; raw is its content between the quotes (escapes
// kept) and runes the number of characters it decodes to.
func (s *jsonScanner) str() (raw []byte, runes int, escaped bool, err error) {
	if s.peek() != '"' {
		return nil, 0, false, errNotStr
	}
	s.i++
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw = s.b[start:s.i]
			s.i++
			return raw, runes, escaped, nil
		case c == '\\':
			escaped = true
			if s.i+1 >= len(s.b) {
				return nil, 0, false, errSyntax
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) || !isHex(s.b[s.i+2]) || !isHex(s.b[s.i+3]) || !isHex(s.b[s.i+4]) || !isHex(s.b[s.i+5]) {
					return nil, 0, false, errSyntax
				}
				s.i += 6
			default:
				return nil, 0, false, errSyntax
			}
			runes++
		case c < 0x20:
			return nil, 0, false, errSyntax
		default:
			if c&0xC0 != 0x80 { // not a UTF-8 continuation byte: a new character
				runes++
			}
			s.i++
		}
	}
	return nil, 0, false, errSyntax
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// text reads a short string and decodes it (only escaped strings pay for
// encoding/json).
func (s *jsonScanner) text() (string, error) {
	start := s.i
	raw, _, escaped, err := s.str()
	if err != nil || !escaped {
		return string(raw), err
	}
	var v string
	if err := json.Unmarshal(s.b[start:s.i], &v); err != nil {
		return "", errSyntax
	}
	return v, nil
}

// number reads a JSON number; isInt reports it had no fraction or
// exponent, and v its value when it is an integer that fits.
func (s *jsonScanner) number() (v int64, isInt, fits bool, err error) {
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
		return 0, false, false, errSyntax
	}
	isInt = true
	if s.i < len(s.b) && s.b[s.i] == '.' {
		isInt = false
		s.i++
		if !s.digits() {
			return 0, false, false, errSyntax
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		isInt = false
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return 0, false, false, errSyntax
		}
	}
	if neg {
		v = -v
	}
	return v, isInt, fits, nil
}

func (s *jsonScanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// optInt reads an integer or null; set is false for null.
func (s *jsonScanner) optInt() (v int64, set bool, err error) {
	if s.null() {
		return 0, false, nil
	}
	c := s.peek()
	if c != '-' && (c < '0' || c > '9') {
		if err := s.skip(); err != nil {
			return 0, false, err
		}
		return 0, false, errNotInt
	}
	v, isInt, fits, err := s.number()
	if err != nil {
		return 0, false, err
	}
	if !isInt {
		return 0, false, errNotInt
	}
	if !fits {
		v = 1 << 62 // out of every range the caller accepts
	}
	return v, true, nil
}

// optBool reads true, false or null (false).
func (s *jsonScanner) optBool() (bool, error) {
	switch {
	case s.null(), s.peek() == 'f' && s.literal("false"):
		return false, nil
	case s.peek() == 't' && s.literal("true"):
		return true, nil
	}
	if err := s.skip(); err != nil {
		return false, err
	}
	return false, errNotBool
}

// object calls member for each key, positioned at its value; member must
// consume the value.
func (s *jsonScanner) object(member func(key []byte) error) error {
	if s.peek() != '{' {
		return errSyntax
	}
	if s.depth++; s.depth > maxJSONDepth {
		return errTooDeep
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		s.depth--
		return nil
	}
	for {
		key, _, _, err := s.str()
		if err != nil {
			return errSyntax
		}
		if s.peek() != ':' {
			return errSyntax
		}
		s.i++
		if err := member(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return nil
		default:
			return errSyntax
		}
	}
}

// array calls elem for each element, positioned at it; elem must consume
// it.
func (s *jsonScanner) array(elem func(i int) error) error {
	if s.peek() != '[' {
		return errSyntax
	}
	if s.depth++; s.depth > maxJSONDepth {
		return errTooDeep
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		s.depth--
		return nil
	}
	for i := 0; ; i++ {
		if err := elem(i); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return nil
		default:
			return errSyntax
		}
	}
}

// skip consumes any value.
func (s *jsonScanner) skip() error {
	switch c := s.peek(); {
	case c == '{':
		return s.object(func([]byte) error { return s.skip() })
	case c == '[':
		return s.array(func(int) error { return s.skip() })
	case c == '"':
		_, _, _, err := s.str()
		return err
	case c == '-' || c >= '0' && c <= '9':
		_, _, _, err := s.number()
		return err
	case c == 't' && s.literal("true"), c == 'f' && s.literal("false"), c == 'n' && s.literal("null"):
		return nil
	}
	return errSyntax
}

// content counts the characters of a message content — a string, an
// array of parts whose "text" fields count, or null — and returns the
// value's raw bytes for the prompt cache's digest.
func (s *jsonScanner) content() (chars int, raw []byte, err error) {
	start := s.peek()
	from := s.i
	switch start {
	case 'n':
		if s.null() {
			return 0, nil, nil
		}
	case '"':
		_, n, _, err := s.str()
		return n, s.b[from:s.i], err
	case '[':
		err := s.array(func(int) error {
			if s.null() {
				return nil
			}
			if s.peek() != '{' {
				if err := s.skip(); err != nil {
					return err
				}
				return errNotParts
			}
			return s.object(func(key []byte) error {
				if string(key) != "text" {
					return s.skip()
				}
				if s.null() {
					return nil
				}
				_, n, _, err := s.str()
				chars += n
				return err
			})
		})
		return chars, s.b[from:s.i], err
	}
	if err := s.skip(); err != nil {
		return 0, nil, err
	}
	return 0, nil, errNotParts
}
