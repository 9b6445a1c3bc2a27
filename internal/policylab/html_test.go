package policylab

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/pagecheck"
	"github.com/ptuprobe/ptuprobe/report"
)

// TestWrittenPage: report.html of the lab holds policies.md's tables cell
// for cell, in its order, its reading, both charts, and the settings;
// it loads and runs nothing.
func TestWrittenPage(t *testing.T) {
	t.Parallel()
	ms := []Measure{
		{Policy: "slow", Requests: 10, Succeeded: 10, Attempts: 30, E2E: []float64{100, 200, 9000}, SimEarlyReturns: 0},
		{Policy: "fast", Requests: 1200, Succeeded: 1200, Attempts: 1300, E2E: []float64{10, 20, 3000}, EarlyRetries: 2, SimEarlyReturns: 3},
		{Policy: "bad", Requests: 10, Succeeded: 4, GaveUp: 6, Attempts: 10, HTTP429: 6, E2E: []float64{1, 2}},
	}
	lab := Setup{Requests: 10, Target: "a test", Budget: "30 s", Command: "ptuprobe policies",
		Settings: []report.Setting{{Name: "--policy", Value: "fast"}, {Name: "--endpoint", Withheld: true}}}
	var md, page bytes.Buffer
	if err := WriteMarkdown(&md, ms, lab); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, ms, lab); err != nil {
		t.Fatal(err)
	}
	root, err := pagecheck.Parse(page.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := pagecheck.SelfContained(root); err != nil {
		t.Fatal(err)
	}
	// policies.md's two tables, row by row.
	var tables [][]string
	for _, line := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(line, "| ") {
			tables = append(tables, strings.Split(strings.Trim(line, "| "), " | "))
		}
	}
	var cells [][]string
	for _, id := range []string{"policy-table", "witness-table"} {
		table := root.ByID(id)
		if table == nil {
			t.Fatalf("no %s", id)
		}
		cells = append(cells, pagecheck.Head(table))
		for _, row := range pagecheck.Rows(table) {
			var texts []string
			for _, c := range row {
				texts = append(texts, c.Text)
			}
			cells = append(cells, texts)
		}
	}
	if len(cells) != len(tables) {
		t.Fatalf("%d rows on the page, %d in policies.md", len(cells), len(tables))
	}
	for i := range tables {
		if strings.Join(cells[i], "|") != strings.Join(tables[i], "|") {
			t.Errorf("row %d: page %q, policies.md %q", i, cells[i], tables[i])
		}
	}
	if got := cells[1][0] + " " + cells[1][1]; got != "fast 1,200" {
		t.Errorf("first ranked row starts %q, want fast 1,200", got)
	}
	if r := root.ByID("reading"); r == nil || !strings.Contains(r.Content(), Reading(Ranked(ms), lab)) {
		t.Error("no reading")
	}
	if n := len(root.Named("svg")); n != 4 {
		t.Errorf("%d charts, want 2 figures × 2 sizes", n)
	}
	if s := root.ByID("settings"); s == nil || !strings.Contains(s.Content(), "--endpoint") || strings.Contains(s.Content(), "Withheld") {
		t.Error("settings section missing or wrong")
	}
}
