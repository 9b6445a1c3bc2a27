package report

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/results"
)

// BenchRows is the size of the generated results file of the benchmarks.
const BenchRows = 1_000_000

// WriteBenchResults writes n rows shaped like a long burst-and-schedule
// run: a quarter are 429s with a usable wait, a few 429s have none.
func WriteBenchResults(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w, err := results.NewWriter(bw)
	if err != nil {
		tb.Fatal(err)
	}
	r := results.Blank()
	r.RunID, r.Attempt = "5eed1234", 1
	for i := 0; i < n; i++ {
		r.Seq = i
		r.Shape, r.Group, r.Wave = results.ShapeBurst, results.GroupBurst, i/500
		if i%2 == 1 {
			r.Shape, r.Group, r.Wave = results.ShapeScheduled, results.GroupScheduled, results.None
		}
		r.IntendedMS = float64(i) * 3
		r.SentMS = r.IntendedMS + float64(i%7)
		r.TTFBMS, r.LatencyMS = 80+float64(i%50), 400+float64(i%300)
		r.Status, r.WaitMS, r.WaitSource = 200, results.None, results.WaitNone
		r.RetryAfterMS, r.RetryAfter = "", ""
		r.PromptTokens, r.CompletionTokens, r.MaxTokens = 1200, 100, 100
		switch i % 8 {
		case 0, 3:
			wait := float64((i*7919)%2000) + 0.5
			if i%800 == 0 {
				wait = 15000 + float64(i%3000)
			}
			r.Status, r.WaitMS, r.WaitSource = 429, wait, results.WaitRetryAfterMS
			r.RetryAfterMS, r.RetryAfter = results.FormatMS(wait), "1"
			r.CompletionTokens = results.None
		case 5:
			if i%40 == 5 {
				r.Status = 429
				r.CompletionTokens = results.None
			}
		}
		if err := w.Write(&r); err != nil {
			tb.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkAnalyze1M streams a 1,000,000-row results file (about 100 MB)
// into an Analysis ("read"), and then also writes the whole report with
// its charts ("report"): what `ptuprobe analyze` does.
func BenchmarkAnalyze1M(b *testing.B) {
	path := filepath.Join(b.TempDir(), "results.csv")
	WriteBenchResults(b, path, BenchRows)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, withReport := range []bool{false, true} {
		name := "read"
		if withReport {
			name = "report"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(st.Size())
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				a := benchAnalysis(b, path)
				if withReport {
					if _, err := Write(context.Background(), b.TempDir(), a, Options{LogX: true}); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

func benchAnalysis(b *testing.B, path string) *analyze.Analysis {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	tally := analyze.NewTally(false)
	if err := tally.Read(context.Background(), f, analyze.Input{Name: path, Ordinal: 1}, analyze.ForeignColumns{}); err != nil {
		b.Fatal(err)
	}
	a, err := tally.Analysis(nil, analyze.DefaultMinGroup)
	if err != nil {
		b.Fatal(err)
	}
	if a.Overall.Count() != BenchRows/4 {
		b.Fatalf("%d usable waits", a.Overall.Count())
	}
	return a
}
