package httpfield

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

func TestReads(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"retry-after", "Retry-After-Ms", "x-ms-retry-after-ms", "date", "ratelimit", "RateLimit-Policy", "ratelimit-reset",
		"x-ratelimit-reset", "x-ratelimit-reset-tokens", "anthropic-ratelimit-output-tokens-reset", "azure-openai-deployment-utilization"} {
		if !Reads(name) {
			t.Errorf("Reads(%q) = false", name)
		}
	}
	for _, name := range []string{"x-ms-region", "apim-request-id", "content-type", "authorization", "x-request-id"} {
		if Reads(name) {
			t.Errorf("Reads(%q) = true", name)
		}
	}
}

// TestReadsEveryFieldInAnyCase: the initial-letter filter in front of the
// look-up passes every field retryafter reads, whatever the case of its
// name as received (HTTP/2 sends names in lower case), and "" is none.
func TestReadsEveryFieldInAnyCase(t *testing.T) {
	t.Parallel()
	for _, names := range [][]string{RetryFields[:], OpenAIFields[:], AnthropicFields[:], IETFFields[:], AzureFields[:]} {
		for _, n := range names {
			for _, name := range []string{n, strings.ToLower(n), strings.ToUpper(n)} {
				if !Reads(name) {
					t.Errorf("Reads(%q) = false", name)
				}
			}
		}
	}
	if Reads("") {
		t.Error(`Reads("") = true`)
	}
}

func TestNumber(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"43", 43, true}, {"16921.125", 16921.125, true}, {"0", 0, true}, {".5", 0.5, true}, {"5.", 5, true},
		{"", 0, false}, {".", 0, false}, {"1.2.3", 0, false}, {"-1", 0, false}, {"+5", 0, false}, {"1e3", 0, false},
		{"0x10", 0, false}, {"Inf", 0, false}, {"NaN", 0, false}, {" 1", 0, false}, {strings.Repeat("9", 33), 0, false},
	} {
		if got, ok := Number(c.in); got != c.want || ok != c.ok {
			t.Errorf("Number(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestFieldAndTrimOWS(t *testing.T) {
	t.Parallel()
	if got := TrimOWS(" \t4 2\t "); got != "4 2" {
		t.Errorf("TrimOWS = %q", got)
	}
	for _, c := range []struct {
		values []string
		want   string
	}{
		{nil, ""},
		{[]string{" 43 "}, "43"},
		{[]string{"43", "43\t"}, "43"},
		{[]string{"43", " 44"}, "43, 44"},
	} {
		h := http.Header{}
		for _, v := range c.values {
			h.Add("Retry-After-Ms", v)
		}
		if got := Field(h, "Retry-After-Ms"); got != c.want {
			t.Errorf("Field(%q) = %q, want %q", c.values, got, c.want)
		}
	}
}

// FuzzNumber: what Number accepts is a plain decimal (digits and at most
// one point), and its value is finite and not negative.
func FuzzNumber(f *testing.F) {
	for _, s := range []string{"43", "1.5", "1e3", "-1", ".", "Inf", "99999999999999999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := Number(s)
		if !ok {
			return
		}
		if strings.Trim(s, "0123456789.") != "" || strings.Count(s, ".") > 1 {
			t.Fatalf("Number(%q) accepted", s)
		}
		if v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			t.Fatalf("Number(%q) = %v", s, v)
		}
		if want, err := strconv.ParseFloat(s, 64); err != nil || v != want {
			t.Fatalf("Number(%q) = %v, strconv.ParseFloat's %v (%v)", s, v, want, err)
		}
	})
}

// TestNumberIsParseFloat: a number of up to exactDigits digits, read
// without strconv, is strconv.ParseFloat's to the bit, at every length
// and every place of its point; longer ones go to ParseFloat.
func TestNumberIsParseFloat(t *testing.T) {
	t.Parallel()
	x := uint64(88172645463325252)
	for digits := 1; digits <= exactDigits+2; digits++ {
		for range 300 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			d := strconv.FormatUint(x, 10)
			for len(d) < digits {
				d += d
			}
			d = d[:digits]
			for dot := -1; dot <= digits; dot++ {
				s := d
				if dot >= 0 {
					s = d[:dot] + "." + d[dot:]
				}
				want, err := strconv.ParseFloat(s, 64)
				if s == "." || err != nil {
					continue
				}
				if v, ok := Number(s); !ok || v != want {
					t.Fatalf("Number(%q) = %v, %v; strconv.ParseFloat's %v", s, v, ok, want)
				}
			}
		}
	}
}

// TestSilent: a header is silent when it holds no field retryafter reads
// (Date aside) nor one it reads for its presence, in any case.
func TestSilent(t *testing.T) {
	t.Parallel()
	silent := []http.Header{
		nil, {},
		{"Content-Type": {"application/json"}, "Content-Length": {"57"}, "Date": {"Sun, 06 Dec 2026 20:33:09 GMT"}},
		{"date": {"soon"}, "X-Request-Id": {"7"}, "Server": {"gw"}, "Apim-Request": {"x"}, "": {"x"}, "Rate": {"1"}},
	}
	for _, h := range silent {
		if !Silent(h) {
			t.Errorf("Silent(%v) = false", h)
		}
	}
	var loud []http.Header
	for _, names := range [][]string{RetryFields[:], OpenAIFields[:], AnthropicFields[:], IETFFields[:], AzureFields[:], PresenceFields[:], {PresenceField, "x-ms-region", "X-Ratelimit-Foo", "RateLimitX"}} {
		for _, n := range names {
			if n == "Date" {
				continue
			}
			loud = append(loud, http.Header{n: {"1"}}, http.Header{strings.ToLower(n): {"1"}}, http.Header{"Content-Type": {"a"}, strings.ToUpper(n): {"1"}})
		}
	}
	for _, h := range loud {
		if Silent(h) {
			t.Errorf("Silent(%v) = true", h)
		}
	}
}
