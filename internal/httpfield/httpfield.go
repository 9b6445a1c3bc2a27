// Package httpfield reads HTTP field values the way ptuprobe's reader of
// rate-limit advice does, for that reader (package retryafter) and for the
// client, which records and vets the same fields: optional white space
// trimmed (TrimOWS), plain decimal numbers only (Number), a repeated field
// as one value or a list (Field), and the names of the fields whose values
// retryafter reads (Reads). It imports nothing of ours.
package httpfield

import (
	"net/http"
	"strconv"
	"strings"
)

// Field is the value of header name (canonical form), repeats included.
// Repeats that agree, once trimmed, are one value. Repeats that differ are
// joined with ", ", as RFC 9110 §5.3 combines a repeated field: a list is no
// number nor date, so a reader finds that field unusable rather than
// silently keeping the first value.
func Field(h http.Header, name string) string {
	vs := h[name]
	if len(vs) == 0 {
		return ""
	}
	first := TrimOWS(vs[0])
	for _, v := range vs[1:] {
		if TrimOWS(v) != first {
			trimmed := make([]string, len(vs))
			for i, v := range vs {
				trimmed[i] = TrimOWS(v)
			}
			return strings.Join(trimmed, ", ")
		}
	}
	return first
}

// Number accepts only plain decimal numbers: digits with at most
// one '.', no sign, no exponent, no "inf"/"nan". strconv.ParseFloat alone
// would take "1e3", "+5", "0x10" and "Inf", none of which a server means.
// It knows no unit: the caller bounds the value.
func Number(s string) (float64, bool) {
	if s == "" || len(s) > 32 {
		return 0, false
	}
	digits, dots := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return 0, false
		}
	}
	if digits == 0 || dots > 1 {
		return 0, false
	}
	if digits <= exactDigits {
		return exact(s), true
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

// exactDigits is how many digits a number may have for exact to read it:
// its digits as an integer are exact in a float64 (below 2^53), and so is
// the power of ten it is divided by (up to 10^22).
const exactDigits = 15

// exact is the value of s, plain digits with at most one '.' and at most
// exactDigits digits: the digits as an integer divided by the power of
// ten of the fraction's length, one correctly rounded division, which is
// strconv.ParseFloat's value (its own exact path, Clinger's). No call to
// strconv: its frame (near 1 KB) doubled the stack of a request that
// read a wait (bench/README.md, issue 39).
func exact(s string) float64 {
	var n uint64
	frac := -1
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			frac = 0
			continue
		}
		n = n*10 + uint64(s[i]-'0')
		if frac >= 0 {
			frac++
		}
	}
	if frac <= 0 {
		return float64(n)
	}
	return float64(n) / pow10[frac]
}

// pow10 holds the powers of ten a fraction of up to exactDigits digits
// divides by, each exact in a float64.
var pow10 = [exactDigits + 1]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// TrimOWS removes HTTP optional white space (spaces and tabs).
func TrimOWS(s string) string {
	i, j := 0, len(s)
	for i < j && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	for j > i && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	return s[i:j]
}
