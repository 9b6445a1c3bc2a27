package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestReaders(t *testing.T) {
	t.Parallel()
	type result struct {
		v   any
		err error
	}
	text := func(s *Scanner) result { v, err := s.Text(); return result{v, err} }
	chars := func(s *Scanner) result { v, err := s.Chars(); return result{v, err} }
	optInt := func(s *Scanner) result {
		v, set, err := s.OptInt()
		if !set && err == nil {
			return result{"unset", nil}
		}
		return result{v, err}
	}
	optBool := func(s *Scanner) result { v, err := s.OptBool(); return result{v, err} }
	tests := []struct {
		name string
		in   string
		read func(*Scanner) result
		want result
	}{
		{"text", ` "gpt-4o"`, text, result{"gpt-4o", nil}},
		{"text with escapes", `"syst\u0065m\n"`, text, result{"system\n", nil}},
		{"text of a number", `5`, text, result{"", ErrNotString}},
		{"text unterminated", `"abc`, text, result{"", ErrSyntax}},
		{"chars", `"abcdefgh"`, chars, result{8, nil}},
		{"chars are runes, not bytes", `"ééééé"`, chars, result{5, nil}},
		{"an escape is one character", `"\u00e9\n\"\\ab"`, chars, result{6, nil}},
		{"raw control character", "\"a\tb\"", chars, result{0, ErrSyntax}},
		{"bad escape", `"\q"`, chars, result{0, ErrSyntax}},
		{"short \\u escape", `"\u00e"`, chars, result{0, ErrSyntax}},
		{"int", `42`, optInt, result{int64(42), nil}},
		{"negative int", `-7`, optInt, result{int64(-7), nil}},
		{"null int", `null`, optInt, result{"unset", nil}},
		{"fraction", `1.5`, optInt, result{int64(0), ErrNotInt}},
		{"exponent", `1e3`, optInt, result{int64(0), ErrNotInt}},
		{"string int", `"5"`, optInt, result{int64(0), ErrNotInt}},
		{"object int", `{"a":1}`, optInt, result{int64(0), ErrNotInt}},
		{"huge int", `123456789012345678901234567890`, optInt, result{int64(Huge), nil}},
		{"leading zero", `01`, optInt, result{int64(0), nil}}, // reads 0; the 1 is trailing
		{"bare minus", `-`, optInt, result{int64(0), ErrSyntax}},
		{"true", `true`, optBool, result{true, nil}},
		{"false", `false`, optBool, result{false, nil}},
		{"null bool", `null`, optBool, result{false, nil}},
		{"string bool", `"true"`, optBool, result{false, ErrNotBool}},
		{"truncated bool", `tru`, optBool, result{false, ErrSyntax}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := New([]byte(tc.in))
			got := tc.read(&s)
			if !errors.Is(got.err, tc.want.err) || (tc.want.err == nil && got.v != tc.want.v) {
				t.Fatalf("got %v, %v; want %v, %v", got.v, got.err, tc.want.v, tc.want.err)
			}
		})
	}
}

func TestObjectArrayAndCapture(t *testing.T) {
	t.Parallel()
	in := []byte(` {"a": [1, {"b": null}], "sys\u0074em" : "x", "c":[ ]} `)
	s := New(in)
	var keys []string
	var captured []byte
	err := s.Object(func(key []byte) error {
		keys = append(keys, string(key))
		if string(key) == "a" {
			var err error
			captured, err = s.Capture(s.Skip)
			return err
		}
		return s.Skip()
	})
	if err != nil || !s.End() {
		t.Fatalf("err %v, next %q", err, s.Peek())
	}
	if want := []string{"a", `sys\u0074em`, "c"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("keys %q, want %q (raw, escapes kept)", keys, want)
	}
	if string(captured) != `[1, {"b": null}]` {
		t.Errorf("captured %q", captured)
	}
}

func TestDepthAndErrorsStopTheWalk(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want error
	}{
		{strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), nil},
		{strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), ErrTooDeep},
		{strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1), ErrTooDeep},
		{`{"a":1,}`, ErrSyntax},
		{`{"a" 1}`, ErrSyntax},
		{`{a:1}`, ErrSyntax},
		{`[1 2]`, ErrSyntax},
		{``, ErrSyntax},
		{`nul`, ErrSyntax},
	}
	for _, tc := range tests {
		s := New([]byte(tc.in))
		if err := s.Skip(); !errors.Is(err, tc.want) {
			t.Errorf("Skip(%.20q…) = %v, want %v", tc.in, err, tc.want)
		}
	}
	s := New([]byte(`{"a":1,"b":2}`))
	stop := errors.New("stop")
	var seen []string
	if err := s.Object(func(key []byte) error { seen = append(seen, string(key)); return stop }); err != stop || len(seen) != 1 {
		t.Errorf("member error: %v after %q, want stop after the first key", err, seen)
	}
}

// FuzzScanner is the scanner's differential test: it must accept exactly
// what encoding/json accepts (within MaxDepth), and its readers must
// return what encoding/json decodes.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{
		`{"messages":[{"role":"user","content":"` + strings.Repeat("p", 400) + `"}],"max_tokens":100}`,
		`{"messages":[{"role":"system","content":[{"type":"text","text":"x"}]}],"stream":true}`,
		`{"system":[{"type":"text","text":"s"}],"messages":[{"content":"u"}],"max_tokens":16384}`,
		`{"prompt":"p","n":2}`, `{`, `[]`, `null`, "", "\x00", `{"messages":[{"content":{"a":1}}]}`,
		`"\u00e9\ud83d\ude00\n"`, `"é\xff\x80"`, `[1,-0,2.5e-3,1E+2,9223372036854775807,-9223372036854775808,1e400]`,
		`[true,false,null,"a",[[]],{}]`, ` 12 `, `-`, `01`, `[1,]`, `{"a":1}x`, `"\u12"`, "0\x00", "{}\x00 ",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := New(data)
		err := s.Skip()
		if errors.Is(err, ErrTooDeep) {
			return // refused before the rest was read
		}
		accepted := err == nil && s.End()
		if accepted != json.Valid(data) {
			t.Fatalf("scanner accepts %q: %v (%v); encoding/json: %v", data, accepted, err, json.Valid(data))
		}
		if !accepted {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("encoding/json cannot decode %q it called valid: %v", data, err)
		}
		s = New(data)
		agree(t, &s, want)
	})
}

// agree reads the value at s with the reader a caller would use for it
// and fails unless it matches want, encoding/json's decoding. Object
// members are skipped: keys are matched raw, not decoded.
func agree(t *testing.T, s *Scanner, want any) {
	t.Helper()
	switch w := want.(type) {
	case nil:
		if !s.Null() {
			t.Fatalf("Null() false for null")
		}
	case bool:
		if got, err := s.OptBool(); err != nil || got != w {
			t.Fatalf("OptBool = %v, %v; want %v", got, err, w)
		}
	case string:
		agreeString(t, s, w)
	case json.Number:
		got, set, err := s.OptInt()
		exact, perr := strconv.ParseInt(string(w), 10, 64)
		switch {
		case strings.ContainsAny(string(w), ".eE"):
			if !errors.Is(err, ErrNotInt) {
				t.Fatalf("OptInt(%s) = %v, %v; want ErrNotInt", w, got, err)
			}
		case err != nil || !set:
			t.Fatalf("OptInt(%s) = %v, %v, %v", w, got, set, err)
		case got != Huge && (perr != nil || got != exact):
			t.Fatalf("OptInt(%s) = %d; want %d (%v)", w, got, exact, perr)
		}
	case []any:
		err := s.Array(func(i int) error {
			if i >= len(w) {
				t.Fatalf("element %d of %d", i, len(w))
			}
			agree(t, s, w[i])
			return nil
		})
		if err != nil {
			t.Fatalf("Array: %v", err)
		}
	case map[string]any:
		if err := s.Skip(); err != nil {
			t.Fatalf("Skip object: %v", err)
		}
	}
}

func agreeString(t *testing.T, s *Scanner, want string) {
	t.Helper()
	var got string
	raw, err := s.Capture(func() (err error) { got, err = s.Text(); return err })
	if err != nil {
		t.Fatalf("Text(%s): %v", raw, err)
	}
	// Unescaped bytes are returned as they are; encoding/json replaces
	// invalid UTF-8 with U+FFFD. Where both are valid UTF-8 they agree.
	if utf8.ValidString(got) && got != want {
		t.Fatalf("Text(%s) = %q; want %q", raw, got, want)
	}
	again := New(raw)
	n, err := again.Chars()
	if err != nil {
		t.Fatalf("Chars(%s): %v", raw, err)
	}
	if utf8.Valid(raw) && !bytes.Contains(raw, []byte(`\u`)) && n != utf8.RuneCountInString(want) {
		t.Fatalf("Chars(%s) = %d; want %d", raw, n, utf8.RuneCountInString(want))
	}
}

// TestStringsAtEveryOffset puts each byte a string may not hold as it is
// (a quote, a backslash, a control character, a byte of a multi-byte
// character, DEL) at every offset of a long string, where the reader goes
// eight bytes at a time, and holds Chars and the validity to
// encoding/json's.
func TestStringsAtEveryOffset(t *testing.T) {
	t.Parallel()
	for _, special := range []string{`\"`, `\\`, `\n`, `\u00e9`, "\x1f", "\x00", "é", "€", "\x7f", "~", " ", `"`} {
		for at := 0; at <= 20; at++ {
			content := strings.Repeat("a", at) + special + strings.Repeat("b", 20-at)
			doc := `"` + content + `"`
			s := New([]byte(doc))
			n, err := s.Chars()
			if err == nil && !s.End() {
				err = ErrSyntax // a quote ended it early
			}
			var want string
			jerr := json.Unmarshal([]byte(doc), &want)
			if (err == nil) != (jerr == nil) {
				t.Fatalf("%q: Chars error %v, encoding/json %v", doc, err, jerr)
			}
			if err == nil && n != utf8.RuneCountInString(want) {
				t.Fatalf("%q: Chars %d, want %d", doc, n, utf8.RuneCountInString(want))
			}
		}
	}
}
