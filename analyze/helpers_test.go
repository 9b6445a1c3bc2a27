package analyze

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/results"
)

// attempt builds one results row; the zero wait means "no wait".
func attempt(group, shape string, status int, waitMS float64, source string) results.Record {
	r := results.Blank()
	r.RunID, r.Shape, r.Group, r.Attempt, r.Status = "0badc0de", shape, group, 1, status
	r.IntendedMS, r.SentMS, r.LatencyMS = 100, 101, 20
	if waitMS >= 0 && source != results.WaitNone && source != results.WaitInvalid {
		r.WaitMS, r.WaitSource = waitMS, source
	} else {
		r.WaitSource = source
	}
	return r
}

// resultsFile writes recs as a ptuprobe results file under dir.
func resultsFile(t testing.TB, dir, name string, recs []results.Record) string {
	t.Helper()
	return writeFile(t, dir, name, testkit.ResultsText(t, recs...))
}

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// analyzeFiles reads paths into one Analysis.
func analyzeFiles(t testing.TB, cols ForeignColumns, labels Labels, minGroup int, paths ...string) (*Analysis, error) {
	t.Helper()
	tally := NewTally(true)
	for i, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		err = tally.Read(context.Background(), f, Input{Name: p, Ordinal: i + 1}, cols)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return tally.Analysis(labels, minGroup)
}

func lines(s ...string) string { return strings.Join(s, "\n") + "\n" }

func readAll(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
