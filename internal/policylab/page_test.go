package policylab

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/pagecheck"
	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/report"
)

// TestWrittenPage: the lab's report.html loads and runs nothing; it opens
// with the Recommendation, then the ranked tables (policies.md's, cell for
// cell, with the policy column first and the scroll cue), the charts, the
// method and the settings.
func TestWrittenPage(t *testing.T) {
	t.Parallel()
	s := fixtureSweep()
	setup := Setup{Command: "ptuprobe policies", Settings: []report.Setting{{Name: "--load", Value: "0.8x,1.5x,3x"}, {Name: "--endpoint", Withheld: true}}}
	var md, page bytes.Buffer
	if err := writeMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	if err := writeHTML(&page, s, setup); err != nil {
		t.Fatal(err)
	}
	root, err := pagecheck.Parse(page.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := pagecheck.SelfContained(root); err != nil {
		t.Fatal(err)
	}
	var sections []string
	for _, n := range root.Named("section") {
		id, _ := n.Get("id")
		sections = append(sections, id)
	}
	if got := strings.Join(sections, " "); got != "recommendation ranking charts method settings" {
		t.Errorf("sections %s", got)
	}
	rec := root.ByID("recommendation").Content()
	for _, g := range judge(s) {
		if !strings.Contains(rec, g.Name()+" — "+g.RecommendationSentence()) {
			t.Errorf("the recommendation lacks %s's sentence", g.Name())
		}
		for _, f := range g.Findings {
			if !strings.Contains(rec, findingLine(f)) {
				t.Errorf("the recommendation lacks %q", findingLine(f))
			}
		}
	}
	if !strings.Contains(rec, fairness(s)) {
		t.Error("no fairness line")
	}
	if !strings.Contains(root.ByID("ranking").Content(), scrollCue) {
		t.Error("no scroll cue")
	}
	// policies.md's tables, row by row.
	var mdRows [][]string
	for _, line := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(line, "| ") {
			mdRows = append(mdRows, strings.Split(strings.Trim(line, "| "), " | "))
		}
	}
	var pageRows [][]string
	for _, g := range judge(s) {
		table := root.ByID("ranking-" + g.id())
		if table == nil {
			t.Fatalf("no table for %s", g.Name())
		}
		head := pagecheck.Head(table)
		if head[0] != "policy" {
			t.Errorf("%s: the first column is %q: a phone keeps the first column in view", g.Name(), head[0])
		}
		pageRows = append(pageRows, head)
		for _, row := range pagecheck.Rows(table) {
			var texts []string
			for _, c := range row {
				texts = append(texts, c.Text)
			}
			pageRows = append(pageRows, texts)
		}
	}
	if len(pageRows) != len(mdRows) {
		t.Fatalf("%d rows on the page, %d in policies.md", len(pageRows), len(mdRows))
	}
	for i := range mdRows {
		if !slices.Equal(pageRows[i], mdRows[i]) {
			t.Errorf("row %d: page %q, policies.md %q", i, pageRows[i], mdRows[i])
		}
	}
	if n := len(root.Named("svg")); n != 2*2*len(judge(s)) {
		t.Errorf("%d charts, want 2 per load × 2 sizes × 3 loads", n)
	}
	if set := root.ByID("settings"); set == nil || !strings.Contains(set.Content(), "--endpoint") {
		t.Error("settings section missing")
	}
}

// TestPublish writes every file into a directory and returns their paths.
func TestPublish(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sweep, want := fixtureSweep(), []string{csvFile, MarkdownFile, "policy_frontier_1.5x.png", "policy_frontier_1.5x.svg",
		"policy_latency_ecdf_3x.png", "policy_latency_ecdf_3x.svg", report.HTMLFile}
	if testkit.Race {
		// Under the race detector drawing PNGs is most of the time: one
		// load's charts prove what three do.
		sweep.Rows = slices.DeleteFunc(sweep.Rows, func(r Row) bool { return r.Load != "3x" })
		want = slices.DeleteFunc(want, func(n string) bool { return strings.Contains(n, "1.5x") })
	}
	written, err := publish(dir, sweep, Setup{Command: "ptuprobe policies"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range written {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
		names = append(names, filepath.Base(p))
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(written) {
		t.Errorf("%d files in the directory, %d written (a temporary left behind?)", len(entries), len(written))
	}
	for _, w := range want {
		if !slices.Contains(names, w) {
			t.Errorf("%s not written: %v", w, names)
		}
	}
}
