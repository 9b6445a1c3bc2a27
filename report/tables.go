package report

import (
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/results"
)

// rows returns Overall first, then the groups in label order.
func rows(a *analyze.Analysis) []*analyze.Group {
	out := []*analyze.Group{&a.Overall}
	for i := range a.Groups {
		out = append(out, &a.Groups[i])
	}
	return out
}

// WritePercentiles writes retry_after_ms_percentiles.csv:
// source_group,count,p50_ms,… with Overall first. A group below the
// minimum size keeps its count and leaves every statistic empty.
func WritePercentiles(w io.Writer, a *analyze.Analysis, columns []analyze.Statistic) error {
	columns = orDefault(columns)
	var b strings.Builder
	b.WriteString("source_group,count")
	for _, s := range columns {
		b.WriteString("," + s.Name)
	}
	b.WriteString("\n")
	for _, g := range rows(a) {
		b.WriteString(csvField(g.Label))
		b.WriteString("," + strconv.Itoa(g.Count()))
		for _, s := range columns {
			b.WriteString(",")
			if v, ok := g.Stats[s.Name]; ok {
				b.WriteString(Number(v))
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteEvents writes retry_after_ms_events.csv: source_group,retry_after_ms,
// one row per usable 429, sorted by group then wait, so nothing in the file
// orders the events in time or ties them to a run.
func WriteEvents(w io.Writer, a *analyze.Analysis) error {
	buf := make([]byte, 0, 64<<10)
	buf = append(buf, "source_group,retry_after_ms\n"...)
	for _, g := range a.Groups {
		// A row is the label, then the wait as results.FormatMS writes it;
		// the waits are sorted, so a wait is formatted once for its run
		// of equal waits (advised waits repeat: whole ms, whole seconds).
		row := append([]byte(csvField(g.Label)), ',')
		label := len(row)
		for i, v := range g.Waits {
			if i == 0 || math.Float64bits(v) != math.Float64bits(g.Waits[i-1]) {
				row = append(results.AppendMS(row[:label], v), '\n')
			}
			buf = append(buf, row...)
			if len(buf) > 60<<10 {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	_, err := w.Write(buf)
	return err
}

// csvField writes a label as a CSV cell. A label that a spreadsheet would
// read as a formula — starting with =, +, -, @, a tab or a carriage return
// — gets a leading ' (the OWASP rule against CSV injection), so opening a
// published CSV never runs a label. A cell with a quote is quoted; labels
// never hold commas or newlines (results.ValidateGroup).
func csvField(s string) string {
	if s != "" && strings.IndexByte("=+-@\t\r", s[0]) >= 0 {
		s = "'" + s
	}
	if strings.ContainsAny(s, "\",\r\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// WriteTable writes the percentile table in Markdown, as in the summary
// and on the terminal: waits in ms with thousands separators, "—" where a
// group is below the minimum size.
func WriteTable(w io.Writer, a *analyze.Analysis, columns []analyze.Statistic) error {
	t := percentileTable(a, columns)
	_, err := io.WriteString(w, t.markdown())
	return err
}

// percentileTable is the percentile table of summary.md, the terminal and
// report.html: one row per group, Overall first.
func percentileTable(a *analyze.Analysis, columns []analyze.Statistic) *Table {
	columns = orDefault(columns)
	t := &Table{ID: "percentile-table", Head: []Text{Plain("source group"), Plain("429 count")}}
	for _, s := range columns {
		t.Head = append(t.Head, Plain(s.Title))
	}
	for _, g := range rows(a) {
		row := []Text{labelText(g.Label), countText(g.Count())}
		for _, s := range columns {
			if v, ok := g.Stats[s.Name]; ok {
				row = append(row, millisText(v))
			} else {
				row = append(row, missing)
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// mdEscaper escapes a label for Markdown: HTML's <, > and & as entities,
// so no tag or entity reaches a renderer, and with a backslash what could
// break a table cell (| or \) or start a link, code or emphasis.
var mdEscaper = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;",
	"|", `\|`, "\\", `\\`, "`", "\\`", "*", `\*`, "_", `\_`,
	"[", `\[`, "]", `\]`, "~", `\~`,
)

// mdText escapes a label for Markdown text and table cells (mdEscaper).
func mdText(s string) string { return mdEscaper.Replace(s) }

// MarkdownText is text from a file or a user (a profile's fit, a name)
// made safe for one line of Markdown: every control character (a line
// break could start a heading or a list) is a space, then it is escaped
// as a label is (HTML's <, > and & as entities; what could break a table
// or start a link, code or emphasis with a backslash).
func MarkdownText(s string) string { return mdText(OneLine(s)) }

// OneLine is s with every control character (line breaks, tabs, escape
// sequences, U+2028 and U+2029) a space: text a user wrote kept to the
// one line it is shown on.
func OneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r >= 0x7f && r < 0xa0 || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
}
