package capacity

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// ParseShare reads a share in percent: "95%" or "95" (the sign optional),
// from 0 to 100, as a fraction (0.95).
func ParseShare(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if len(s) > 32 {
		return 0, errors.New("too long: want a percentage such as 95%")
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "%")), 64)
	if err != nil || math.IsNaN(v) {
		return 0, errors.New("want a percentage such as 95% (0% to 100%)")
	}
	if v < 0 || v > 100 {
		return 0, errors.New("must be from 0% to 100%")
	}
	return v / 100, nil
}

// FormatShare writes a share as ParseShare reads it.
func FormatShare(v float64) string { return strconv.FormatFloat(100*v, 'f', -1, 64) + "%" }
