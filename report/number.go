package report

import "github.com/ptuprobe/ptuprobe/internal/num"

// Number formats a published value: at most 2 decimals, no trailing zeros
// ("50.8", "16921.12", "43").
func Number(v float64) string { return num.Decimal(v, 2) }

// Grouped formats v like Number with thousands separators, for reading:
// "16,921.12".
func Grouped(v float64) string { return num.Grouped(v, 2) }

// Millis formats a wait for reading: "16,921.12 ms" (num.Millis).
func Millis(v float64) string { return num.Millis(v, 2) }

// Percent formats a share as a percentage with one decimal: "12.5%".
func Percent(share float64) string { return num.Decimal(100*share, 1) + "%" }
