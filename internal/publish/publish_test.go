package publish

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/report"
)

// upstreamEvents is the published fixture kept with analyze's tests.
var upstreamEvents = filepath.Join("..", "..", "analyze", "testdata", "upstream", "retry_after_ms_events.csv")

// hostileLabels are group names that a spreadsheet would run as a
// formula, or that would break or inject into Markdown and HTML.
var hostileLabels = []string{
	"=cmd|' /C calc'!A0", "+1", "-2", "@SUM(1)", "<script>alert(1)</script>",
	"[click](https://example.com/x)", "`code` *bold* _it_ ~~del~~", `back\slash & pipe|`,
}

// TestRunHostileLabels: labels from a foreign CSV reach every published
// file neutralised — a CSV cell never starts a formula, summary.md holds no
// tag, link or table-breaking pipe — and analysis.json keeps them exactly.
func TestRunHostileLabels(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var in strings.Builder
	in.WriteString("source,retry_after_ms\n")
	for i, label := range hostileLabels {
		for k := range 5 {
			in.WriteString(`"` + strings.ReplaceAll(label, `"`, `""`) + `",` + strconv.Itoa(10*(i+1)+k) + "\n")
		}
	}
	input := filepath.Join(dir, "events.csv")
	if err := os.WriteFile(input, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report")
	res, err := Run(context.Background(), Job{Paths: []string{input}, OutDir: out, MinGroup: 1, Foreign: analyze.ForeignColumns{Group: "source"}})
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer // what the CLI prints
	if err := report.WriteTable(&table, res.Analysis, nil); err != nil {
		t.Fatal(err)
	}
	outputs := map[string][]byte{"table.md": table.Bytes()}
	for _, name := range []string{report.PercentilesFile, report.EventsFile, report.SummaryFile, report.AnalysisFile, report.ECDFSVGFile} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		outputs[name] = b
	}

	// CSV: every group cell, as a spreadsheet reads it, starts with no
	// formula character, and is the label behind a '.
	for _, name := range []string{report.PercentilesFile, report.EventsFile} {
		rows, err := csv.NewReader(bytes.NewReader(outputs[name])).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		seen := map[string]bool{}
		for _, row := range rows[1:] {
			if strings.ContainsAny(row[0][:1], "=+-@\t\r") {
				t.Errorf("%s: cell %q starts a formula", name, row[0])
			}
			seen[row[0]] = true
		}
		for _, label := range hostileLabels {
			want := label
			if strings.ContainsAny(label[:1], "=+-@") {
				want = "'" + label
			}
			if !seen[want] {
				t.Errorf("%s lacks the cell %q", name, want)
			}
		}
	}
	// Markdown: no tag, no link, every table row keeps its cells.
	for _, name := range []string{report.SummaryFile, "table.md"} {
		md := string(outputs[name])
		for _, bad := range []string{"<script", "&amp;amp;"} {
			if strings.Contains(md, bad) {
				t.Errorf("%s contains %q", name, bad)
			}
		}
		if unescapedLink.MatchString(md) {
			t.Errorf("%s contains a link: %s", name, unescapedLink.FindString(md))
		}
		checkTables(t, name, md)
	}
	// JSON is encoded, so it keeps the labels exactly, and never raw HTML.
	var j struct {
		Groups []struct{ Label string } `json:"groups"`
	}
	if err := json.Unmarshal(outputs[report.AnalysisFile], &j); err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, g := range j.Groups {
		labels = append(labels, g.Label)
	}
	if want := slices.Sorted(slices.Values(hostileLabels)); !slices.Equal(labels, want) {
		t.Errorf("analysis.json labels %q, want %q", labels, want)
	}
	for _, name := range []string{report.AnalysisFile, report.ECDFSVGFile} {
		if bytes.Contains(outputs[name], []byte("<script")) {
			t.Errorf("%s holds a raw <script> tag", name)
		}
	}
	for _, name := range []string{report.PercentilesFile, report.EventsFile, report.SummaryFile, "table.md"} {
		golden(t, "hostile_"+name, outputs[name])
	}
}

// unescapedLink is a Markdown link: "](" whose bracket is not escaped.
var unescapedLink = regexp.MustCompile(`(^|[^\\])\]\(`)

// checkTables checks that every row of every Markdown table in md has as
// many cells as its header, counting only unescaped pipes.
func checkTables(t *testing.T, name, md string) {
	t.Helper()
	width := 0
	for i, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			width = 0
			continue
		}
		cells := strings.Count(strings.ReplaceAll(line, `\\`, ""), "|") - strings.Count(strings.ReplaceAll(line, `\\`, ""), `\|`)
		if width == 0 {
			width = cells
		} else if cells != width {
			t.Errorf("%s line %d has %d cell borders, its table %d: %s", name, i+1, cells, width, line)
		}
	}
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (go test ./internal/publish -update to accept):\n%s", name, path, got)
	}
}
