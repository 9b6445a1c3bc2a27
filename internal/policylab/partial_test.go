package policylab

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/pagecheck"
	"github.com/ptuprobe/ptuprobe/sim"
)

// TestInterruptedLabIsPartial: a lab canceled from its run pool, after
// its first run, publishes what finished and says in every output that it
// is partial, with how many runs of how many; no group recommends a
// policy, since each has one that did not finish. No timing: the cancel
// comes from the first run's completion, which is a cell's only run (one
// repeat), so that cell has its row; and the lab has more runs than can
// finish after it (at most the GOMAXPROCS in flight, each with its twin
// under the SDKs' cap), so some cell never finishes. Loads, not repeats,
// make the runs: with two repeats a cell's row needs both, and at
// GOMAXPROCS 4 (a 4-core machine, -test.cpu=4) the cancel left no cell
// whole and policies.csv no row (round 15: 7 of 7 runs under
// -test.cpu=1,4).
func TestInterruptedLabIsPartial(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := smallLab(t, sim.ProfilePTU, "honor", "none", "backoff", "pace")
	l.Duration = 2 * time.Second
	for extra := 1; l.Runs() <= 2*runtime.GOMAXPROCS(0)+2; extra++ {
		more, err := ParseLoads(strconv.Itoa(extra) + ".25x")
		if err != nil {
			t.Fatal(err)
		}
		l.Loads = append(l.Loads, more...)
	}
	l.Progress = func(done, total int) { cancel() }
	dir := t.TempDir()
	sw, _, err := Execute(ctx, Job{Lab: l, OutDir: dir})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err %v, want ErrInterrupted", err)
	}
	status := regexp.MustCompile(`[Pp]artial: interrupted after [1-9][0-9]* of ` + strconv.Itoa(l.Runs()) + ` runs`)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	md := read(MarkdownFile)
	if !status.MatchString(md[:strings.Index(md, "## Recommendation")]) {
		t.Errorf("policies.md does not open with the partial line:\n%s", md[:min(len(md), 600)])
	}
	// Each load's group of the lab's cap, and of the SDKs' cap.
	if n := strings.Count(md, "Nothing to recommend: the lab was interrupted"); n != 2*len(l.Loads) {
		t.Errorf("policies.md: %d groups say nothing is recommended, want %d:\n%s", n, 2*len(l.Loads), md)
	}
	for _, p := range []string{"honor", "none", "backoff", "pace"} {
		if strings.Contains(md, "**"+p+"**") || strings.Contains(md, p+" (recommended)") {
			t.Errorf("policies.md recommends %s from an interrupted lab", p)
		}
	}
	if page := read("report.html"); !status.MatchString(page) || strings.Contains(page, "(recommended)") {
		t.Errorf("report.html: partial line %v, a recommendation %v", status.MatchString(page), strings.Contains(page, "(recommended)"))
	}
	csvText := read(csvFile)
	header, _, _ := strings.Cut(csvText, "\n")
	if !strings.HasSuffix(header, ",partial") || !regexp.MustCompile(`,interrupted after [1-9][0-9]* of `+strconv.Itoa(l.Runs())+` runs\n`).MatchString(csvText) {
		t.Errorf("policies.csv does not say it is partial: %s", csvText)
	}
	var term bytes.Buffer
	if err := PrintTable(&term, sw); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(term.String(), "\n")
	if !status.MatchString(first) || strings.Count(term.String(), "nothing recommended: interrupted") != 2*len(l.Loads) {
		t.Errorf("the terminal table:\n%s", term.String())
	}
}

// TestUnfinishedGroupRecommendsNothing: of two groups, the one with an
// unfinished cell recommends nothing and judges no part of the rule,
// naming the policy that did not finish; the complete one is judged as
// before.
func TestUnfinishedGroupRecommendsNothing(t *testing.T) {
	t.Parallel()
	s := fixtureSweep()
	want := map[string]string{}
	for _, g := range judge(s) {
		want[g.Load] = g.Recommendations()[0].Policy
	}
	var kept []Row
	for _, r := range s.Rows {
		if r.Load != "1.5x" || r.Policy != want["1.5x"] {
			kept = append(kept, r)
		}
	}
	s.Rows, s.Runs, s.Completed = kept, 33, 32
	s.Unfinished = []unfinishedCell{{Policy: want["1.5x"], Load: "1.5x", Clients: 16}, {Policy: "slots", Load: "8/s", Clients: 16}}
	if !s.Partial() || s.PartialStatus() != "partial: interrupted after 32 of 33 runs" {
		t.Fatalf("Partial %v, %q", s.Partial(), s.PartialStatus())
	}
	groups := judge(s)
	if len(groups) != len(fixtureLoads)+1 {
		t.Fatalf("%d groups, want the fixture's %d and one of the unfinished cell alone", len(groups), len(fixtureLoads)+1)
	}
	for _, g := range groups {
		r := g.Recommendations()
		switch g.Load {
		case "1.5x", "8/s":
			if len(r) != 0 || len(g.Findings) > 0 || !strings.Contains(g.RecommendationSentence(), "interrupted before the runs of "+g.Unfinished[0]+" finished") {
				t.Errorf("%s: recommended %v, %d findings, %q", g.Name(), r, len(g.Findings), g.RecommendationSentence())
			}
		default:
			if len(r) == 0 || r[0].Policy != want[g.Load] || len(g.Findings) != len(ruleParts) {
				t.Errorf("%s: recommended %v, %d findings; want %s", g.Name(), r, len(g.Findings), want[g.Load])
			}
		}
	}
	if files := chartFiles(s, groups); len(files) != 2*len(fixtureLoads) {
		t.Errorf("%d charts: want two per group with a row, none for the group of no row", len(files))
	}
	// Every output is written, the group of no row included, and the
	// page stays a valid, self-contained one.
	var page, md, table bytes.Buffer
	if err := writeHTML(&page, s, Setup{}); err != nil {
		t.Fatal(err)
	}
	root, err := pagecheck.Parse(page.Bytes())
	if err == nil {
		err = pagecheck.SelfContained(root)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := writeMarkdown(&md, s); err != nil || !strings.Contains(md.String(), "### 8/s, 16 clients\n\nNothing to recommend: the lab was interrupted") {
		t.Errorf("policies.md: %v\n%s", err, md.String())
	}
	if err := PrintTable(&table, s); err != nil || !strings.Contains(table.String(), "  8/s, 16 clients: nothing recommended: interrupted: slots unfinished\n") {
		t.Errorf("the terminal: %v\n%s", err, table.String())
	}
}
