package results

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ptuprobe/ptuprobe/internal/num"
)

// column is one column of a results file: its header name, how a
// Record's field is appended to a line, and how a cell decodes back into
// the Record. The one table, table, drives the header (Columns), the
// writer (appendCSV) and the reader (Reader): a new column is one entry
// at the end of it, plus its line in docs/results.md.
type column struct {
	name   string
	append func(dst []byte, r *Record) []byte
	decode func(r *Record, cell string) error
	// kind and field serve the lineDecoder's fast path (decoder.go): the
	// form of the cell, and the Record field it fills (a *string, *int,
	// *float64 or *bool, by kind).
	kind  cellKind
	field func(r *Record) any
}

// cellKind is the form of a column's cells, one per constructor below.
type cellKind uint8

const (
	kindUnknown       cellKind = iota // the fast path leaves it to the general one
	kindText                          // any text
	kindCount                         // a non-negative integer, always present
	kindOptionalCount                 // a non-negative integer, or empty
	kindDecimal                       // a non-negative number, or empty
	kindFlag                          // 1, or anything else for false
)

// table lists the columns in file order. New columns go at the end: a
// reader matches columns by name, so older files still read.
var table = []column{
	text("run_id", func(r *Record) *string { return &r.RunID }),
	text("shape", func(r *Record) *string { return &r.Shape }),
	text("group", func(r *Record) *string { return &r.Group }),
	count("seq", func(r *Record) *int { return &r.Seq }),
	count("attempt", func(r *Record) *int { return &r.Attempt }),
	optionalCount("wave", func(r *Record) *int { return &r.Wave }),
	decimal("intended_ms", func(r *Record) *float64 { return &r.IntendedMS }),
	decimal("sent_ms", func(r *Record) *float64 { return &r.SentMS }),
	decimal("ttfb_ms", func(r *Record) *float64 { return &r.TTFBMS }),
	decimal("latency_ms", func(r *Record) *float64 { return &r.LatencyMS }),
	count("status", func(r *Record) *int { return &r.Status }),
	text("error", func(r *Record) *string { return &r.Error }),
	text("retry_after_ms", func(r *Record) *string { return &r.RetryAfterMS }),
	text("retry_after", func(r *Record) *string { return &r.RetryAfter }),
	decimal("wait_ms", func(r *Record) *float64 { return &r.WaitMS }),
	text("wait_source", func(r *Record) *string { return &r.WaitSource }),
	oneOrZero("spillover", func(r *Record) *bool { return &r.Spillover }),
	optionalCount("ratelimit_remaining_requests", func(r *Record) *int { return &r.RatelimitRemainingRequests }),
	optionalCount("ratelimit_remaining_tokens", func(r *Record) *int { return &r.RatelimitRemainingTokens }),
	decimal("utilization_pct", func(r *Record) *float64 { return &r.UtilizationPct }),
	optionalCount("prompt_tokens", func(r *Record) *int { return &r.PromptTokens }),
	optionalCount("cached_tokens", func(r *Record) *int { return &r.CachedTokens }),
	optionalCount("completion_tokens", func(r *Record) *int { return &r.CompletionTokens }),
	optionalCount("max_tokens", func(r *Record) *int { return &r.MaxTokens }),
	text("policy", func(r *Record) *string { return &r.Policy }),
	text("decision", func(r *Record) *string { return &r.Decision }),
	oneOrZero("fallback", func(r *Record) *bool { return &r.Fallback }),
	text("dialect", func(r *Record) *string { return &r.Dialect }),
	decimal("reset_requests_ms", func(r *Record) *float64 { return &r.ResetRequestsMS }),
	decimal("reset_tokens_ms", func(r *Record) *float64 { return &r.ResetTokensMS }),
	optionalCount("limit_requests", func(r *Record) *int { return &r.LimitRequests }),
	optionalCount("limit_tokens", func(r *Record) *int { return &r.LimitTokens }),
	text("worker", func(r *Record) *string { return &r.Worker }),
	optionalCount("prompt_tokens_sent", func(r *Record) *int { return &r.PromptTokensSent }),
	decimal("ttft_ms", func(r *Record) *float64 { return &r.TTFTMS }),
	decimal("itl_p50_ms", func(r *Record) *float64 { return &r.ITLP50MS }),
	decimal("itl_max_ms", func(r *Record) *float64 { return &r.ITLMaxMS }),
	decimal("tpot_ms", func(r *Record) *float64 { return &r.TPOTMS }),
}

// requiredColumns is how many leading columns every version of the file
// has had (run_id … spillover): they identify a results header, and a row
// with fewer fields is unreadable.
const requiredColumns = 17

// Columns is the fixed column order of a results file, the names of table.
// New columns go at the end; a reader accepts files that lack trailing
// columns it knows.
var Columns = columnNames()

// header is the header line without its newline.
var header = strings.Join(Columns, ",")

func columnNames() []string {
	names := make([]string, len(table))
	for i, c := range table {
		names[i] = c.name
	}
	return names
}

// decimals is how many decimals a number column keeps (milliseconds to the
// microsecond).
const decimals = 3

// maxNumber bounds a number cell: beyond it a float64 no longer holds
// decimals decimals, so the value could not be written back as read.
const maxNumber = 1e15

// text is a column of free text, quoted when it holds a comma, a quote or
// a line break.
func text(name string, field func(*Record) *string) column {
	return column{
		name:   name,
		kind:   kindText,
		field:  func(r *Record) any { return field(r) },
		append: func(dst []byte, r *Record) []byte { return appendText(dst, *field(r)) },
		decode: func(r *Record, cell string) error {
			*field(r) = cell
			return nil
		},
	}
}

// count is a column of a non-negative integer that is always present.
func count(name string, field func(*Record) *int) column {
	return column{
		name:   name,
		kind:   kindCount,
		field:  func(r *Record) any { return field(r) },
		append: func(dst []byte, r *Record) []byte { return strconv.AppendInt(dst, int64(*field(r)), 10) },
		decode: func(r *Record, cell string) (err error) {
			*field(r), err = parseCount(cell)
			return err
		},
	}
}

// optionalCount is a column of a non-negative integer, empty for None.
func optionalCount(name string, field func(*Record) *int) column {
	return column{
		name:  name,
		kind:  kindOptionalCount,
		field: func(r *Record) any { return field(r) },
		append: func(dst []byte, r *Record) []byte {
			if v := *field(r); v >= 0 {
				dst = strconv.AppendInt(dst, int64(v), 10)
			}
			return dst
		},
		decode: func(r *Record, cell string) (err error) {
			if cell == "" {
				*field(r) = None
				return nil
			}
			*field(r), err = parseCount(cell)
			return err
		},
	}
}

// decimal is a column of a non-negative number with at most decimals
// decimals, empty for None.
func decimal(name string, field func(*Record) *float64) column {
	return column{
		name:   name,
		kind:   kindDecimal,
		field:  func(r *Record) any { return field(r) },
		append: func(dst []byte, r *Record) []byte { return appendDecimal(dst, *field(r)) },
		decode: func(r *Record, cell string) error {
			if cell == "" {
				*field(r) = None
				return nil
			}
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil || v < 0 || v != v || v > maxNumber {
				*field(r) = None
				return fmt.Errorf("%q is not a non-negative number", truncate(cell, 32))
			}
			*field(r) = v
			return nil
		},
	}
}

// oneOrZero is a column of a flag, 1 or 0; any other cell reads as false.
func oneOrZero(name string, field func(*Record) *bool) column {
	return column{
		name:  name,
		kind:  kindFlag,
		field: func(r *Record) any { return field(r) },
		append: func(dst []byte, r *Record) []byte {
			if *field(r) {
				return append(dst, '1')
			}
			return append(dst, '0')
		},
		decode: func(r *Record, cell string) error {
			*field(r) = cell == "1"
			return nil
		},
	}
}

func parseCount(cell string) (int, error) {
	v, err := strconv.Atoi(cell)
	if err != nil || v < 0 {
		return None, fmt.Errorf("%q is not a non-negative integer", truncate(cell, 32))
	}
	return v, nil
}

// FormatMS formats a millisecond value as a results file does: at most
// decimals decimals, no trailing zeros; None (any negative value) becomes
// the empty string.
func FormatMS(v float64) string {
	if v < 0 {
		return ""
	}
	return num.Decimal(v, decimals)
}

// appendDecimal appends FormatMS(v). A value under 1e12 (every time a
// run records) is its rounded count of thousandths, n, written as an
// integer with the point put in and the trailing zeros dropped: what
// num.AppendDecimal writes, strconv's shortest form of n/1000 (a decimal
// of at most 15 significant digits reads back as the same float64 and no
// shorter one does, so the shortest form is n/1000's own digits), without
// strconv's float formatting, which was half of a row's time
// (bench/README.md, round 9). FuzzAppendDecimal holds the two together.
func appendDecimal(dst []byte, v float64) []byte {
	if v < 0 {
		return dst
	}
	if !(v < 1e12) {
		return num.AppendDecimal(dst, v, decimals)
	}
	n := uint64(math.Round(v * 1000))
	dst = strconv.AppendUint(dst, n/1000, 10)
	frac := n % 1000
	if frac == 0 {
		return dst
	}
	digits := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
	end := 3
	for digits[end-1] == '0' {
		end--
	}
	dst = append(dst, '.')
	return append(dst, digits[:end]...)
}

// appendText quotes a field the RFC 4180 way when it needs it (an
// HTTP-date in retry-after carries a comma).
func appendText(dst []byte, s string) []byte {
	if !needsQuotes(s) {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			dst = append(dst, '"')
		}
		dst = append(dst, s[i])
	}
	return append(dst, '"')
}

// needsQuotes is strings.ContainsAny(s, ",\"\r\n") without building a
// set on every call: the writer asks it for every text cell.
func needsQuotes(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ',', '"', '\r', '\n':
			return true
		}
	}
	return false
}

// appendCSV appends r as one CSV line (with its newline) to dst.
func appendCSV(dst []byte, r *Record) []byte {
	for i := range table {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = table[i].append(dst, r)
	}
	return append(dst, '\n')
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
