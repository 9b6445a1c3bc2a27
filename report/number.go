package report

import (
	"math"
	"strconv"
	"strings"
)

// Number formats a published value: at most 2 decimals, no trailing zeros
// ("50.8", "16921.12", "43").
func Number(v float64) string {
	r := math.Round(v*100) / 100
	if r == 0 {
		r = 0 // no "-0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// Grouped formats v like Number with thousands separators, for reading:
// "16,921.12".
func Grouped(v float64) string {
	s := Number(v)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return sign + b.String()
}

// Millis formats a wait for reading: "16,921.12 ms".
func Millis(v float64) string { return Grouped(v) + " ms" }

// Percent formats a share as a percentage with one decimal: "12.5%".
func Percent(share float64) string {
	return strconv.FormatFloat(math.Round(share*1000)/10, 'f', -1, 64) + "%"
}
