package retryafter

import (
	"bytes"
	"encoding/base32"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// sfCase is one case of the IETF structured-field test suite
// (testdata/sfv-tests/README.md has its source and what was left out).
type sfCase struct {
	Name       string          `json:"name"`
	Raw        []string        `json:"raw"`
	HeaderType string          `json:"header_type"`
	Expected   json.RawMessage `json:"expected"`
	MustFail   bool            `json:"must_fail"`
	CanFail    bool            `json:"can_fail"`
}

// sfToken and sfBinary are the suite's __type objects for a Token and a
// Byte Sequence (its bytes, decoded), told apart from a String.
type (
	sfTokenValue  string
	sfBinaryValue string
)

// sfSuiteCases is how many cases the RFC 8941 files of the suite hold: a
// file lost from testdata fails the test rather than shrinking it.
const sfSuiteCases = 1552

// TestStructuredFieldSuite runs every case of the suite: a must_fail case
// must fail to parse, any other must parse to its expected structure (a
// can_fail case may also fail). Each failure names its file and case.
func TestStructuredFieldSuite(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "sfv-tests", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no suite files: %v", err)
	}
	n := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var cases []sfCase
		if err := json.Unmarshal(data, &cases); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, c := range cases {
			n++
			if msg := runSFCase(c); msg != "" {
				t.Errorf("%s: %q (raw %q): %s", filepath.Base(file), c.Name, c.Raw, msg)
			}
		}
	}
	if n != sfSuiteCases {
		t.Errorf("ran %d cases, the suite's RFC 8941 files hold %d", n, sfSuiteCases)
	}
}

// runSFCase is what is wrong with the parser's answer to c, "" if nothing.
func runSFCase(c sfCase) string {
	p := sfParser{s: sfField(c.Raw)}
	var got any
	var ok bool
	switch c.HeaderType {
	case "item":
		var it sfItem
		it, ok = p.item()
		got = sfItemJSON(it)
	case "list":
		var l []sfItem
		l, ok = p.list()
		members := []any{}
		for _, it := range l {
			members = append(members, sfMemberJSON(it))
		}
		got = members
	case "dictionary":
		var d []sfMember
		d, ok = p.dictionary()
		members := []any{}
		for _, m := range d {
			members = append(members, []any{m.key, sfMemberJSON(m.item)})
		}
		got = members
	default:
		return "unknown header_type " + c.HeaderType
	}
	switch {
	case c.MustFail && ok:
		return "parsed, must fail"
	case c.MustFail, !ok && c.CanFail:
		return ""
	case !ok:
		return "failed to parse"
	}
	want, err := sfExpected(c.Expected)
	if err != nil {
		return "bad expected value: " + err.Error()
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		return "got " + string(g) + ", want " + string(w)
	}
	return ""
}

// sfMemberJSON is a List or Dictionary member in the suite's form: an
// Item, or an Inner List as [[items…], params].
func sfMemberJSON(it sfItem) any {
	if !it.inner {
		return sfItemJSON(it)
	}
	items := []any{}
	for _, m := range it.members {
		items = append(items, sfItemJSON(m))
	}
	return []any{items, sfParamsJSON(it.params)}
}

func sfItemJSON(it sfItem) any { return []any{sfBareJSON(it.bare), sfParamsJSON(it.params)} }

func sfParamsJSON(ps []sfParam) any {
	out := []any{}
	for _, p := range ps {
		out = append(out, []any{p.key, sfBareJSON(p.value)})
	}
	return out
}

func sfBareJSON(b sfBare) any {
	switch b.kind {
	case sfInteger:
		return b.i
	case sfDecimal:
		return b.decimal()
	case sfString:
		return b.s
	case sfToken:
		return sfTokenValue(b.s)
	case sfBytes:
		return sfBinaryValue(b.s)
	case sfBoolean:
		return b.boolean()
	}
	return nil
}

// sfExpected decodes a case's expected structure into the values
// sfBareJSON gives: int64 for an Integer (a JSON number without a point
// or exponent), float64 for a Decimal, the __type objects as
// sfTokenValue and sfBinaryValue (base32 in the suite).
func sfExpected(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return sfNormalize(v)
}

func sfNormalize(v any) (any, error) {
	switch v := v.(type) {
	case json.Number:
		if strings.ContainsAny(string(v), ".eE") {
			return strconv.ParseFloat(string(v), 64)
		}
		return strconv.ParseInt(string(v), 10, 64)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			var err error
			if out[i], err = sfNormalize(e); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		s, _ := v["value"].(string)
		switch v["__type"] {
		case "token":
			return sfTokenValue(s), nil
		case "binary":
			b, err := base32.StdEncoding.DecodeString(s)
			return sfBinaryValue(b), err
		}
		return v, nil // a type the parser does not read: never equal
	}
	return v, nil
}
