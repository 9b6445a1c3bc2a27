package report

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
)

// manyGroups analyzes a foreign CSV of n groups; group i has i+1 waits,
// so the largest groups are the last ones.
func manyGroups(t testing.TB, n int) *analyze.Analysis {
	t.Helper()
	var b strings.Builder
	b.WriteString("source,retry_after_ms\n")
	for i := range n {
		for k := range i + 1 {
			fmt.Fprintf(&b, "group-%03d,%d\n", i, 10+k*7+i)
		}
	}
	return readAnalysis(t, strings.NewReader(b.String()), analyze.ForeignColumns{Group: "source"}, nil)
}

// TestChartLegendBounded: a chart draws at most MaxChartGroups groups —
// the largest — beside the combined curve, and its legend says how many
// it left out; with few groups it draws them all and says nothing.
func TestChartLegendBounded(t *testing.T) {
	t.Parallel()
	cases := []struct {
		groups int
		drawn  []string // labels in the legend
		note   string   // the legend's line about groups left out
	}{
		{3, []string{"group-000", "group-001", "group-002"}, ""},
		{analyze.MaxPublishedGroups, []string{"group-094", "group-095", "group-096", "group-097", "group-098", "group-099"}, "94 more groups not drawn"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.groups), func(t *testing.T) {
			t.Parallel()
			var svg bytes.Buffer
			if err := WriteECDF(&svg, manyGroups(t, c.groups), Options{}, SVG); err != nil {
				t.Fatal(err)
			}
			s := svg.String()
			if n := strings.Count(s, "(n = "); n != len(c.drawn)+1 {
				t.Errorf("%d legend entries with n, want %d", n, len(c.drawn)+1)
			}
			for _, label := range c.drawn {
				if !strings.Contains(s, label+" (n = ") {
					t.Errorf("legend lacks %s", label)
				}
			}
			if c.note != "" && !strings.Contains(s, c.note) || c.note == "" && strings.Contains(s, "not drawn") {
				t.Errorf("legend note: want %q", c.note)
			}
		})
	}
}

// TestWriteMaxPublishedGroups writes the whole report for the most groups
// a report may hold, and logs how long that takes.
func TestWriteMaxPublishedGroups(t *testing.T) {
	t.Parallel()
	a := manyGroups(t, analyze.MaxPublishedGroups)
	dir := t.TempDir()
	start := time.Now()
	paths, err := Write(context.Background(), dir, a, Options{LogX: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d groups, %d waits: report written in %v", len(a.Groups), a.Overall.Count(), time.Since(start))
	if len(paths) != 8 {
		t.Errorf("wrote %d files, want 8", len(paths))
	}
	pct, err := os.ReadFile(filepath.Join(dir, PercentilesFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(pct), "\n"); n != analyze.MaxPublishedGroups+2 {
		t.Errorf("%s has %d lines, want the header, Overall and %d groups", PercentilesFile, n, analyze.MaxPublishedGroups)
	}
	st, err := os.Stat(filepath.Join(dir, ECDFSVGFile))
	if err != nil {
		t.Fatal(err)
	}
	// 40,000 groups, before their limit, drew an SVG of 17 MB.
	if st.Size() > 256<<10 {
		t.Errorf("%s is %d bytes; a bounded legend keeps it under 256 KiB", ECDFSVGFile, st.Size())
	}
}
