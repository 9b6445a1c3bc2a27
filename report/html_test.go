package report

import (
	"bytes"
	"encoding/csv"
	"regexp"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/internal/pagecheck"
)

// htmlSets are the analyses report.html is checked on: the published
// fixture (foreign CSV) and a ptuprobe results file (attempts, dialects,
// a group below the minimum size, a timeline, settings).
func htmlSets(t *testing.T) []struct {
	name string
	a    *analyze.Analysis
	opts Options
} {
	cols, err := analyze.ParseColumns([]string{"p25", "p75"})
	if err != nil {
		t.Fatal(err)
	}
	return []struct {
		name string
		a    *analyze.Analysis
		opts Options
	}{
		{"upstream", upstreamAnalysis(t), Options{LogX: true}},
		{"results", resultsAnalysis(t), Options{Columns: cols, Timeline: true, Command: "ptuprobe analyze",
			Settings: []Setting{{Name: "--columns", Value: "p25,p75"}, {Name: "--label", Withheld: true}, {Name: "--timeline", Value: "true"}}}},
	}
}

func writeHTMLPage(t *testing.T, a *analyze.Analysis, opts Options) (*pagecheck.Node, []byte) {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, a, opts); err != nil {
		t.Fatal(err)
	}
	root, err := pagecheck.Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return root, b.Bytes()
}

// markdownRows returns the body rows of the first Markdown table in md,
// cell by cell.
func markdownRows(md string) [][]string {
	var rows [][]string
	lines := strings.Split(md, "\n")
	for i, line := range lines {
		if !strings.HasPrefix(line, "|") {
			if len(rows) > 0 {
				break
			}
			continue
		}
		if i == 0 || !strings.HasPrefix(lines[i-1], "|") || strings.HasPrefix(line, "|---") {
			continue // the header and its rule
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for j := range cells {
			cells[j] = strings.ReplaceAll(strings.TrimSpace(cells[j]), "`", "")
		}
		rows = append(rows, cells)
	}
	return rows
}

// TestHTMLTablesAreTheSummarys reads the tables of report.html as a
// browser's DOM holds them: every cell of the percentile table is the
// terminal's (and summary.md's) cell, and carries in data-value the
// number the percentile CSV holds; the 429s per group are summary.md's.
func TestHTMLTablesAreTheSummarys(t *testing.T) {
	t.Parallel()
	for _, set := range htmlSets(t) {
		t.Run(set.name, func(t *testing.T) {
			t.Parallel()
			root, _ := writeHTMLPage(t, set.a, set.opts)

			var csvOut, table bytes.Buffer
			if err := WritePercentiles(&csvOut, set.a, set.opts.Columns); err != nil {
				t.Fatal(err)
			}
			if err := WriteTable(&table, set.a, set.opts.Columns); err != nil {
				t.Fatal(err)
			}
			records, err := csv.NewReader(&csvOut).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			pt := root.ByID("percentile-table")
			if pt == nil {
				t.Fatal("no percentile-table")
			}
			if head, want := pagecheck.Head(pt), len(records[0]); len(head) != want {
				t.Errorf("%d header cells, want %d", len(head), want)
			}
			got, md := pagecheck.Rows(pt), markdownRows(table.String())
			if len(got) != len(records)-1 || len(md) != len(got) {
				t.Fatalf("%d rows in the page, %d in the CSV, %d in the table", len(got), len(records)-1, len(md))
			}
			for i, row := range got {
				rec := records[i+1]
				if len(row) != len(rec) || !row[0].Header || row[0].Text != rec[0] {
					t.Fatalf("row %d: %+v, CSV %q", i, row, rec)
				}
				for j := 1; j < len(row); j++ {
					if row[j].Text != md[i][j] {
						t.Errorf("row %s column %d shows %q, the table %q", rec[0], j, row[j].Text, md[i][j])
					}
					if rec[j] == "" {
						if row[j].HasValue {
							t.Errorf("row %s column %d: data-value %q for a withheld value", rec[0], j, row[j].Value)
						}
					} else if !row[j].HasValue || row[j].Value != rec[j] {
						t.Errorf("row %s column %d: data-value %q, the CSV %q", rec[0], j, row[j].Value, rec[j])
					}
				}
			}

			var summary bytes.Buffer
			if err := WriteSummary(&summary, set.a, set.opts); err != nil {
				t.Fatal(err)
			}
			md = markdownRows(summary.String()[strings.Index(summary.String(), "## 429s per group"):])
			got = pagecheck.Rows(root.ByID("group-table"))
			if len(got) != len(md) {
				t.Fatalf("429s per group: %d rows, summary.md %d", len(got), len(md))
			}
			for i := range got {
				for j := range got[i] {
					if got[i][j].Text != md[i][j] {
						t.Errorf("429s per group row %d column %d: %q, summary.md %q", i, j, got[i][j].Text, md[i][j])
					}
				}
			}
			if r := root.ByID("reading"); r == nil || !strings.Contains(r.Content(), Reading(set.a)) {
				t.Errorf("the reading section lacks the reading")
			}
		})
	}
}

// TestHTMLSelfContained: no script, nothing loaded from anywhere, every
// section and chart present, each chart drawn for a wide and a narrow
// screen and named.
func TestHTMLSelfContained(t *testing.T) {
	t.Parallel()
	for _, set := range htmlSets(t) {
		t.Run(set.name, func(t *testing.T) {
			t.Parallel()
			root, page := writeHTMLPage(t, set.a, set.opts)
			if err := pagecheck.SelfContained(root); err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(bytes.ToLower(page), []byte("<script")) {
				t.Error("a <script")
			}
			for _, id := range []string{"percentiles", "reading", "ecdf", "histogram", "groups", "overshoot", "flags", "origins", "totals"} {
				if root.ByID(id) == nil {
					t.Errorf("no section %q", id)
				}
			}
			svgs := root.Named("svg")
			figures := 3
			if o := set.a.Overshoot; o != nil && len(o.Groups) > 0 {
				figures++ // advised wait against offered load
			}
			if root.ByID("throughput") != nil {
				figures++ // tokens per minute above the offered and refused per second
			} else if set.a.ResultsFiles > 0 {
				t.Error("ptuprobe results and no throughput section")
			}
			if len(svgs) != 2*figures {
				t.Errorf("%d charts, want %d figures × 2 sizes", len(svgs), figures)
			}
			for _, s := range svgs {
				if label, _ := s.Get("aria-label"); label == "" {
					t.Error("a chart without a name")
				}
			}
			settings := root.ByID("settings")
			if (set.opts.Command != "") != (settings != nil) {
				t.Fatalf("settings section: %v, command %q", settings != nil, set.opts.Command)
			}
			if settings != nil {
				var shown []string
				for _, row := range pagecheck.Rows(root.ByID("settings-table")) {
					shown = append(shown, row[0].Text+" "+row[1].Text)
				}
				if got := strings.Join(shown, "; "); got != "--columns p25,p75; --timeline true" {
					t.Errorf("settings shown: %s", got)
				}
				text := settings.Content()
				for _, want := range []string{"ptuprobe analyze", "not shown", "--label"} {
					if !strings.Contains(text, want) {
						t.Errorf("settings lack %q: %s", want, text)
					}
				}
			}
		})
	}
}

func TestWritePageRefusesBadIDs(t *testing.T) {
	t.Parallel()
	for _, p := range []*Page{
		{Sections: []Section{{ID: "a b", Heading: "x"}}},
		{Sections: []Section{{ID: "", Heading: "x"}}},
		{Sections: []Section{{ID: "a", Heading: "x"}, {ID: "a", Heading: "y"}}},
		{Sections: []Section{{ID: "a", Heading: "x", Blocks: []Block{{Table: &Table{ID: "a"}}}}}},
	} {
		if err := WritePage(&bytes.Buffer{}, p); err == nil {
			t.Errorf("wrote a page with ids %+v", p.Sections)
		}
	}
}

// svgBody matches an inline chart, for the golden skeleton.
var svgBody = regexp.MustCompile(`(?s)<svg .*?</svg>`)

// htmlSkeleton is a page with each chart cut to a mark: the golden file
// holds the page's markup and texts, not gonum/plot's drawing.
func htmlSkeleton(page []byte) []byte {
	return svgBody.ReplaceAllFunc(page, func(svg []byte) []byte {
		end := bytes.IndexByte(svg, '>')
		return append(svg[:end:end], []byte(">…</svg>")...)
	})
}
