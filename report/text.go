package report

import (
	"strconv"
	"strings"

	"github.com/ptuprobe/ptuprobe/internal/num"
)

// Span is a run of a report's text, kept apart from how it is shown:
// summary.md and report.html render the same spans, so the two never
// word or format a number differently.
type Span struct {
	Text string
	// Value is the number Text shows, as the CSVs and analysis.json write
	// it ("16921.12" for "16,921.12 ms"); report.html carries it in the
	// cell's data-value. Empty when Text is not one number.
	Value string
	// Code marks a name ptuprobe writes or reads (`none`, `sparse`,
	// `--log-x`): code in Markdown and HTML.
	Code bool
	// Label marks text a user chose (a group label): escaped for Markdown
	// (HTML escapes every span).
	Label bool
}

// Text is a paragraph, a list item or a table cell: spans in order.
type Text []Span

// Plain is text that is shown as it is.
func Plain(s string) Text { return Text{{Text: s}} }

// Code is a name shown as code.
func Code(s string) Text { return Text{{Text: s, Code: true}} }

// labelText is a group label.
func labelText(s string) Text { return Text{{Text: s, Label: true}} }

// countText is a count, with thousands separators.
func countText(n int) Text {
	return Text{{Text: Grouped(float64(n)), Value: strconv.Itoa(n)}}
}

// millisText is a wait as the tables show it, "16,921.12 ms", valued as
// the CSV writes it.
func millisText(v float64) Text { return Text{{Text: Millis(v), Value: Number(v)}} }

// shareText is a share as a percentage, valued as analysis.json writes it.
func shareText(s float64) Text { return Text{{Text: Percent(s), Value: num.Decimal(s, 4)}} }

// missing is the cell of a value that does not exist or is withheld.
var missing = Plain("—")

// cat joins texts into one.
func cat(ts ...Text) Text {
	var out Text
	for _, t := range ts {
		out = append(out, t...)
	}
	return out
}

// markdown renders t for summary.md: code in backticks, labels escaped
// (mdText), the rest as written.
func (t Text) markdown() string {
	var b strings.Builder
	for _, s := range t {
		switch {
		case s.Code:
			b.WriteString("`" + s.Text + "`")
		case s.Label:
			b.WriteString(mdText(s.Text))
		default:
			b.WriteString(s.Text)
		}
	}
	return b.String()
}

// value is the number a one-number cell holds, as the CSVs write it.
func (t Text) value() (string, bool) {
	if len(t) == 1 && t[0].Value != "" {
		return t[0].Value, true
	}
	return "", false
}

// Table is a table of the report: a header row, then rows whose first
// cell names the row (a group, a status, a policy).
type Table struct {
	// ID names the table in report.html (id="percentiles"), for readers
	// and scripts that look for it; empty for none.
	ID   string
	Head []Text
	Rows [][]Text
}

// markdown renders the table as summary.md writes tables.
func (t *Table) markdown() string {
	var b strings.Builder
	b.WriteString("|")
	for _, h := range t.Head {
		b.WriteString(" " + h.markdown() + " |")
	}
	b.WriteString("\n|" + strings.Repeat("---|", len(t.Head)) + "\n")
	for _, row := range t.Rows {
		b.WriteString("|")
		for _, c := range row {
			b.WriteString(" " + c.markdown() + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}
