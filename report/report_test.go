package report

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/analyze"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// upstreamDir holds copies of the published fixture (shared/fixtures/upstream),
// so the tests run from a clone without shared/ beside it.
const upstreamDir = "../analyze/testdata/upstream"

// upstreamAnalysis reads the published events file the way the README's
// reference command does.
func upstreamAnalysis(t testing.TB) *analyze.Analysis {
	t.Helper()
	f, err := os.Open(filepath.Join(upstreamDir, "retry_after_ms_events.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return readAnalysis(t, f, analyze.ForeignColumns{Group: "source"},
		analyze.Labels{"task013": "Burst-shaped source", "task019": "Scheduled-shaped source"})
}

// readAnalysis reads one input into an Analysis with the default
// --min-group.
func readAnalysis(t testing.TB, r io.Reader, cols analyze.ForeignColumns, labels analyze.Labels, opts ...analyze.TallyOption) *analyze.Analysis {
	t.Helper()
	tally := analyze.NewTally(false, append([]analyze.TallyOption{analyze.OfferedLoad(0)}, opts...)...)
	if err := tally.Read(context.Background(), r, analyze.Input{Name: "input.csv", Ordinal: 1}, cols); err != nil {
		t.Fatal(err)
	}
	a, err := tally.Analysis(labels, analyze.DefaultMinGroup)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestUpstreamPercentilesExact is the reference case of ARCHITECTURE.md:
// the published events must give the published table byte for byte.
func TestUpstreamPercentilesExact(t *testing.T) {
	t.Parallel()
	a := upstreamAnalysis(t)
	var got bytes.Buffer
	if err := WritePercentiles(&got, a, nil); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(upstreamDir, "expected_percentiles.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("percentiles differ from the published table\ngot:\n%s\nwant:\n%s", got.String(), want)
	}
}

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
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./report -update to accept):\n%s", name, firstDiff(string(got), string(want)))
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + gl + "\nwant: " + wl
		}
	}
	return "(no line differs)"
}

// TestGolden checks every text output for the published fixture and for a
// ptuprobe results file.
func TestGolden(t *testing.T) {
	t.Parallel()
	columns := func(keys ...string) []analyze.Statistic {
		cols, err := analyze.ParseColumns(keys)
		if err != nil {
			t.Fatal(err)
		}
		return cols
	}
	sets := []struct {
		prefix string
		a      *analyze.Analysis
		opts   Options
	}{
		{"upstream", upstreamAnalysis(t), Options{Columns: columns("min", "p95", "mean")}},
		{"results", resultsAnalysis(t), Options{Columns: columns("p25", "p75"), Timeline: true, Command: "ptuprobe analyze",
			Settings: []Setting{{Name: "--columns", Value: "p25,p75"}, {Name: "--label", Withheld: true}, {Name: "--timeline", Value: "true"}}}},
	}
	for _, set := range sets {
		outputs := map[string]func(*bytes.Buffer) error{
			"summary.md":      func(b *bytes.Buffer) error { return WriteSummary(b, set.a, set.opts) },
			"percentiles.csv": func(b *bytes.Buffer) error { return WritePercentiles(b, set.a, set.opts.Columns) },
			"events.csv":      func(b *bytes.Buffer) error { return WriteEvents(b, set.a) },
			"analysis.json":   func(b *bytes.Buffer) error { return WriteJSON(b, set.a, set.opts) },
			// report.html with each chart cut to its opening tag.
			"report.html": func(b *bytes.Buffer) error {
				var page bytes.Buffer
				if err := WriteHTML(&page, set.a, set.opts); err != nil {
					return err
				}
				b.Write(htmlSkeleton(page.Bytes()))
				return nil
			},
		}
		for name, write := range outputs {
			name := set.prefix + "_" + name
			t.Run(name, func(t *testing.T) {
				var b bytes.Buffer
				if err := write(&b); err != nil {
					t.Fatal(err)
				}
				golden(t, name, b.Bytes())
			})
		}
	}
}

func TestWriteCharts(t *testing.T) {
	t.Parallel()
	a := upstreamAnalysis(t)
	for _, logX := range []bool{false, true} {
		dir := t.TempDir()
		// PTUPROBE_CHART_DIR keeps the charts for a look by eye.
		if keep := os.Getenv("PTUPROBE_CHART_DIR"); keep != "" {
			dir = filepath.Join(keep, "linear")
			if logX {
				dir = filepath.Join(keep, "logx")
			}
		}
		paths, err := Write(context.Background(), dir, a, Options{LogX: logX})
		if err != nil {
			t.Fatal(err)
		}
		if len(paths) != 8 {
			t.Errorf("wrote %d files, want 8: %v", len(paths), paths)
		}
		for _, name := range []string{ECDFPNGFile, HistogramFile} {
			checkPNG(t, filepath.Join(dir, name))
		}
		svg, err := os.ReadFile(filepath.Join(dir, ECDFSVGFile))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(bytes.TrimSpace(svg), []byte("<?xml")) || !bytes.Contains(svg, []byte("<svg")) {
			t.Errorf("%s is not an SVG document", ECDFSVGFile)
		}
	}
}

// checkPNG decodes path and checks the chart size.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != ChartWidthPx || b.Dy() != ChartHeightPx {
		t.Errorf("%s is %dx%d, want %dx%d", filepath.Base(path), b.Dx(), b.Dy(), ChartWidthPx, ChartHeightPx)
	}
}
