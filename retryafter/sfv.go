package retryafter

import (
	"encoding/base64"
	"strings"
)

// A structured field value (RFC 8941, "Structured Field Values for
// HTTP"), as the IETF RateLimit fields are defined: a List of Items, or,
// in the draft-7 form of RateLimit, a Dictionary. This is the RFC's
// parsing algorithm (§4.2), all of it: Integers, Decimals, Strings,
// Tokens, Byte Sequences (base64-decoded: one that does not decode fails,
// §4.2.7) and Booleans, Inner Lists and Parameters. RFC 9651's later
// additions, Dates and Display Strings, are not read: they fail, as in
// RFC 8941. A value that breaks the syntax anywhere is refused whole, as
// §4.2 requires ("fail parsing"), and the draft says of a malformed
// field: ignore it. The IETF test suite (testdata/sfv-tests) holds it to
// every case of RFC 8941.
//
// The cost is linear in the field: a repeated key of a Dictionary or of
// Parameters is found by a scan while there are few, by a map once there
// are more than sfScanKeys, so a field of n distinct keys costs O(n), not
// O(n²).

// sfKind is the type of a bare item.
type sfKind uint8

const (
	sfInteger sfKind = iota + 1
	sfDecimal
	sfString
	sfToken
	sfBytes
	sfBoolean
)

// sfBare is a bare item: an Integer in i, a Decimal in i as thousandths
// (exact: at most 3 decimal places), a Boolean in i as 0 or 1, a String or
// Token, or the decoded bytes of a Byte Sequence, in s. One number field
// keeps an item small: a long field holds many.
type sfBare struct {
	kind sfKind
	i    int64
	s    string
}

// sfParam is one parameter of an item.
type sfParam struct {
	key   string
	value sfBare
}

func (p sfParam) keyName() string { return p.key }

// sfItem is a member of a List or Dictionary: an Item, or an Inner List
// (inner set, its items in members, bare unset) with its own parameters.
type sfItem struct {
	bare    sfBare
	inner   bool
	members []sfItem
	params  []sfParam
}

// param returns the parameter key of it.
func (it *sfItem) param(key string) (sfBare, bool) {
	for _, p := range it.params {
		if p.key == key {
			return p.value, true
		}
	}
	return sfBare{}, false
}

// integer is the value of an Integer item or parameter.
func (b sfBare) integer() (int64, bool) { return b.i, b.kind == sfInteger }

// name is the value of a String or Token (the draft-11 policy names are
// Strings; earlier drafts and servers also wrote Tokens).
func (b sfBare) name() (string, bool) {
	return b.s, b.kind == sfString || b.kind == sfToken
}

// sfMember is one Dictionary member.
type sfMember struct {
	key  string
	item sfItem
}

func (m sfMember) keyName() string { return m.key }

// sfField joins the field lines of name as §4.2 says: with a comma.
func sfField(lines []string) string { return strings.Join(lines, ", ") }

// parseSFList parses a List (§4.2.1). An empty value is an empty List.
func parseSFList(s string) ([]sfItem, bool) {
	p := sfParser{s: s}
	return p.list()
}

// parseSFDictionary parses a Dictionary (§4.2.2); a repeated key keeps
// its first place and its last value.
func parseSFDictionary(s string) ([]sfMember, bool) {
	p := sfParser{s: s}
	return p.dictionary()
}

// sfParser walks one field value.
type sfParser struct {
	s string
	i int
	// work counts the key comparisons and map probes of the search for
	// repeated keys: the tests hold it linear in the number of keys.
	work int
}

func (p *sfParser) eof() bool { return p.i >= len(p.s) }

// peek is the next byte, 0 at the end (no valid byte of a field is 0).
func (p *sfParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.i]
}

func (p *sfParser) skipSP() {
	for p.peek() == ' ' {
		p.i++
	}
}

func (p *sfParser) skipOWS() {
	for c := p.peek(); c == ' ' || c == '\t'; c = p.peek() {
		p.i++
	}
}

// list parses the whole value as a List (§4.2, §4.2.1).
func (p *sfParser) list() ([]sfItem, bool) {
	p.skipSP()
	var out []sfItem
	for !p.eof() {
		it, ok := p.itemOrInnerList()
		if !ok {
			return nil, false
		}
		out = append(out, it)
		if !p.nextMember() {
			return nil, false
		}
	}
	return out, true
}

// dictionary parses the whole value as a Dictionary (§4.2, §4.2.2).
func (p *sfParser) dictionary() ([]sfMember, bool) {
	p.skipSP()
	var keys sfKeys[sfMember]
	for !p.eof() {
		key, ok := p.key()
		if !ok {
			return nil, false
		}
		var it sfItem
		if p.peek() == '=' {
			p.i++
			if it, ok = p.itemOrInnerList(); !ok {
				return nil, false
			}
		} else {
			it.bare = sfBare{kind: sfBoolean, i: 1}
			if it.params, ok = p.parameters(); !ok {
				return nil, false
			}
		}
		if j := keys.find(p, key); j >= 0 {
			keys.list[j].item = it
		} else {
			keys.add(sfMember{key: key, item: it})
		}
		if !p.nextMember() {
			return nil, false
		}
	}
	return keys.list, true
}

// sfScanKeys is how many keys are searched by a scan; past it, a map.
const sfScanKeys = 8

// sfKeys keeps the members of a Dictionary, or the Parameters of an item,
// in order, and finds a repeated key among them: by a scan while they are
// few, by a map from key to place once there are more than sfScanKeys.
type sfKeys[T interface{ keyName() string }] struct {
	list  []T
	index map[string]int
}

// find is the place of key in k.list, or -1.
func (k *sfKeys[T]) find(p *sfParser, key string) int {
	if k.index != nil {
		p.work++
		if j, ok := k.index[key]; ok {
			return j
		}
		return -1
	}
	for j := range k.list {
		p.work++
		if k.list[j].keyName() == key {
			return j
		}
	}
	return -1
}

// add appends v, whose key k does not hold yet.
func (k *sfKeys[T]) add(v T) {
	k.list = append(k.list, v)
	switch {
	case k.index != nil:
		k.index[v.keyName()] = len(k.list) - 1
	case len(k.list) > sfScanKeys:
		k.index = make(map[string]int, 2*len(k.list))
		for j := range k.list {
			k.index[k.list[j].keyName()] = j
		}
	}
}

// nextMember consumes what follows a member of a List or Dictionary: the
// end, or a comma and optional white space before another member (a
// trailing comma fails).
func (p *sfParser) nextMember() bool {
	p.skipOWS()
	if p.eof() {
		return true
	}
	if p.s[p.i] != ',' {
		return false
	}
	p.i++
	p.skipOWS()
	return !p.eof()
}

// itemOrInnerList parses a member (§4.2.1.1).
func (p *sfParser) itemOrInnerList() (sfItem, bool) {
	if p.peek() == '(' {
		return p.innerList()
	}
	return p.itemAt()
}

// innerList parses an Inner List (§4.2.1.2).
func (p *sfParser) innerList() (sfItem, bool) {
	p.i++ // (
	out := sfItem{inner: true}
	for !p.eof() {
		p.skipSP()
		if p.peek() == ')' {
			p.i++
			var ok bool
			out.params, ok = p.parameters()
			return out, ok
		}
		it, ok := p.itemAt()
		if !ok {
			return sfItem{}, false
		}
		out.members = append(out.members, it)
		if c := p.peek(); c != ' ' && c != ')' {
			return sfItem{}, false
		}
	}
	return sfItem{}, false
}

// itemAt parses an Item (§4.2.3) where the parser stands.
func (p *sfParser) itemAt() (sfItem, bool) {
	b, ok := p.bareItem()
	if !ok {
		return sfItem{}, false
	}
	params, ok := p.parameters()
	return sfItem{bare: b, params: params}, ok
}

// parameters parses Parameters (§4.2.3.2); a repeated key keeps its first
// place and its last value.
func (p *sfParser) parameters() ([]sfParam, bool) {
	var keys sfKeys[sfParam]
	for p.peek() == ';' {
		p.i++
		p.skipSP()
		key, ok := p.key()
		if !ok {
			return nil, false
		}
		v := sfBare{kind: sfBoolean, i: 1}
		if p.peek() == '=' {
			p.i++
			if v, ok = p.bareItem(); !ok {
				return nil, false
			}
		}
		if keys.list == nil {
			keys.list = make([]sfParam, 0, 2) // RateLimit items have r and t
		}
		if j := keys.find(p, key); j >= 0 {
			keys.list[j].value = v
		} else {
			keys.add(sfParam{key: key, value: v})
		}
	}
	return keys.list, true
}

// key parses a Key (§4.2.3.3): lcalpha or "*", then lcalpha, digits,
// "_", "-", ".", "*".
func (p *sfParser) key() (string, bool) {
	start := p.i
	if c := p.peek(); !isLCAlpha(c) && c != '*' {
		return "", false
	}
	p.i++
	for c := p.peek(); isLCAlpha(c) || isDigit(c) || c == '_' || c == '-' || c == '.' || c == '*'; c = p.peek() {
		p.i++
	}
	return p.s[start:p.i], true
}

// bareItem parses a Bare Item (§4.2.3.1).
func (p *sfParser) bareItem() (sfBare, bool) {
	switch c := p.peek(); {
	case c == '-' || isDigit(c):
		return p.number()
	case c == '"':
		return p.str()
	case isAlpha(c) || c == '*':
		return p.token()
	case c == ':':
		return p.byteSequence()
	case c == '?':
		return p.boolean()
	}
	return sfBare{}, false
}

// number parses an Integer or a Decimal (§4.2.4): at most 15 digits for
// an Integer; at most 12 before the point and 3 after it for a Decimal.
func (p *sfParser) number() (sfBare, bool) {
	neg := false
	if p.peek() == '-' {
		neg = true
		p.i++
	}
	if !isDigit(p.peek()) {
		return sfBare{}, false
	}
	start, point := p.i, -1
digits:
	for !p.eof() {
		switch c := p.s[p.i]; {
		case isDigit(c):
		case c == '.' && point < 0:
			if p.i-start > 12 {
				return sfBare{}, false
			}
			point = p.i
		default:
			break digits
		}
		p.i++
		if point < 0 && p.i-start > 15 || point >= 0 && p.i-start > 16 {
			return sfBare{}, false
		}
	}
	kind := sfInteger
	var v int64
	for _, c := range []byte(p.s[start:p.i]) {
		if c != '.' {
			v = v*10 + int64(c-'0')
		}
	}
	if point >= 0 {
		frac := p.i - point - 1
		if frac < 1 || frac > 3 {
			return sfBare{}, false
		}
		kind = sfDecimal
		for ; frac < 3; frac++ {
			v *= 10
		}
	}
	if neg {
		v = -v
	}
	return sfBare{kind: kind, i: v}, true
}

// str parses a String (§4.2.5): printable ASCII, with \" and \\ the only
// escapes.
func (p *sfParser) str() (sfBare, bool) {
	p.i++ // "
	var b strings.Builder
	for !p.eof() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			if p.eof() {
				return sfBare{}, false
			}
			n := p.s[p.i]
			p.i++
			if n != '"' && n != '\\' {
				return sfBare{}, false
			}
			b.WriteByte(n)
		case c == '"':
			return sfBare{kind: sfString, s: b.String()}, true
		case c < 0x20 || c > 0x7e:
			return sfBare{}, false
		default:
			b.WriteByte(c)
		}
	}
	return sfBare{}, false
}

// token parses a Token (§4.2.6).
func (p *sfParser) token() (sfBare, bool) {
	start := p.i
	p.i++
	for c := p.peek(); isTChar(c) || c == ':' || c == '/'; c = p.peek() {
		p.i++
	}
	return sfBare{kind: sfToken, s: p.s[start:p.i]}, true
}

// byteSequence parses a Byte Sequence (§4.2.7): base64 between colons,
// decoded; content that does not decode fails ("=" anywhere but at the
// end, a length no padding can mend). As the RFC asks of a recipient, a
// missing "=" padding is synthesized and non-zero pad bits are accepted.
func (p *sfParser) byteSequence() (sfBare, bool) {
	p.i++ // :
	start := p.i
	for !p.eof() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == ':':
			b, ok := decodeBase64(p.s[start : p.i-1])
			return sfBare{kind: sfBytes, s: b}, ok
		case isAlpha(c) || isDigit(c) || c == '+' || c == '/' || c == '=':
		default:
			return sfBare{}, false
		}
	}
	return sfBare{}, false
}

// decodeBase64 decodes standard base64 whose "=" padding may be missing.
// Its characters are checked already: the alphabet and "=" only, so none
// is the line break encoding/base64 would skip.
func decodeBase64(s string) (string, bool) {
	if r := len(s) % 4; r != 0 {
		s += "==="[:4-r]
	}
	b, err := base64.StdEncoding.DecodeString(s)
	return string(b), err == nil
}

// boolean parses a Boolean (§4.2.8): ?0 or ?1.
func (p *sfParser) boolean() (sfBare, bool) {
	p.i++ // ?
	if c := p.peek(); c == '0' || c == '1' {
		p.i++
		return sfBare{kind: sfBoolean, i: int64(c - '0')}, true
	}
	return sfBare{}, false
}

func isDigit(c byte) bool   { return c >= '0' && c <= '9' }
func isLCAlpha(c byte) bool { return c >= 'a' && c <= 'z' }
func isAlpha(c byte) bool   { return isLCAlpha(c) || c >= 'A' && c <= 'Z' }

// isTChar is RFC 9110's tchar.
func isTChar(c byte) bool {
	return isAlpha(c) || isDigit(c) || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
