// Package num formats numbers the one way ptuprobe prints them: rounded
// half away from zero to a number of decimals, with no trailing zeros and
// no "-0", optionally with thousands separators for reading.
package num

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Decimal formats v rounded to at most places decimals: Decimal(16921.123, 2)
// is "16921.12", Decimal(43, 2) is "43". NaN and infinities format as
// strconv does ("NaN", "+Inf"); callers that publish check finiteness first.
func Decimal(v float64, places int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	scale := math.Pow10(places)
	r := math.Round(v*scale) / scale
	if math.IsInf(r, 0) || math.Abs(v) >= 1e15 {
		// v*scale overflowed or lost its fraction: v has no decimals to round.
		r = math.Round(v)
	}
	if r == 0 {
		r = 0 // no "-0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// Grouped formats v like Decimal with thousands separators: "16,921.12".
func Grouped(v float64, places int) string {
	s := Decimal(v, places)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	b.Grow(len(s) + len(s)/3 + 1)
	b.WriteString(sign)
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
	return b.String()
}

// Millis formats a number of milliseconds for reading, like Grouped,
// with the unit: Millis(16921.123, 2) is "16,921.12 ms", Millis(1250.4, 0)
// "1,250 ms". It is the one millisecond formatter: reports, run
// summaries and the policy lab's tables word waits and latencies with it.
func Millis(ms float64, places int) string { return Grouped(ms, places) + " ms" }

// AppendDecimal appends Decimal(v, places) to dst without an intermediate
// string, for writers on a hot path.
func AppendDecimal(dst []byte, v float64, places int) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) >= 1e15 {
		return append(dst, Decimal(v, places)...)
	}
	scale := math.Pow10(places)
	r := math.Round(v*scale) / scale
	if r == 0 {
		r = 0
	}
	return strconv.AppendFloat(dst, r, 'f', -1, 64)
}

// PerSecond formats a rate of requests per second for a reader: 4 digits
// at most, "/s" after: PerSecond(2.5) is "2.5/s".
func PerSecond(r float64) string { return strconv.FormatFloat(r, 'g', 4, 64) + "/s" }

// About rounds d for a reader: to the second from a minute up, to a tenth
// of a second from a second up, else to the millisecond.
func About(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// Count is n with its noun: Count(1, "wave", "waves") is "1 wave".
func Count(n uint64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatUint(n, 10) + " " + many
}
