package report

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// writeOverloadResults writes n rows of an overload run, 40% of them
// 429s, byte for byte as bench/analyze_baseline.py's overload mix does
// (its docstring says what they hold).
func writeOverloadResults(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	bw.WriteString(strings.Join(results.Columns, ",") + "\n")
	num3 := func(v float64) string {
		return strings.TrimSuffix(strings.TrimRight(strconv.FormatFloat(v, 'f', 3, 64), "0"), ".")
	}
	x := int64(12345)
	for i := range n {
		x = (x*1103515245 + 12345) % 2147483648
		u := float64(x) / 2147483648
		worker, attempt := i%4, 1+(i/4)%3
		intended := float64(i) + float64(x%1000)/1000
		sent := intended + float64(x%4096)/1000
		if i%997 == 0 {
			sent += 40
		}
		var ttfb, lat, raMS, ra, wait, rr, rt, comp, dec, err, util string
		source, status := "none", "200"
		switch k := i % 100; {
		case k < 40:
			w := float64(50 + int(u*u*9000))
			switch {
			case k%10 == 3:
				w = 1000 * float64(1+int(w)/1000)
				source, ra = "retry-after-seconds", strconv.Itoa(int(w)/1000)
			default:
				raMS, ra, source = strconv.Itoa(int(w)), strconv.Itoa(1+int(w)/1000), "retry-after-ms"
				if k%20 == 7 {
					w += float64(x%1000) / 1000
					raMS = num3(w)
				}
			}
			status, wait, dec = "429", num3(w), "sleep"
			if attempt == 3 {
				dec = "give-up"
			}
			ttfb, lat = num3(0.15+u), num3(0.2+u*1.3)
			rr, rt, util = "0", strconv.Itoa(int(u*900)), num3(100+u*8)
		case k == 40:
			status, dec, ttfb, lat = "429", "give-up", num3(0.2+u), num3(0.3+u)
		case k < 95:
			t := 180 + u*900
			ttfb, lat, comp, dec = num3(t), num3(t+300+float64(x%7919)/3), strconv.Itoa(int(60+x%41)), "done"
			rr, rt, util = strconv.Itoa(int(x%12)), strconv.Itoa(int(x%9000)), num3(60+u*40)
		case k < 98:
			status, dec, ttfb, lat = "503", "give-up", num3(5+u*20), num3(6+u*20)
		default:
			status, err, dec, lat = "0", "timeout", "give-up", num3(60000+u)
		}
		fmt.Fprintf(bw, "c0ffee42,scheduled,scheduled-shaped,%d,%d,,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,0,%s,%s,%s,1000,,%s,100,retry,%s,0,azure,,,60,60000,%d/4\n",
			i/12*4+worker, attempt, num3(intended), num3(sent), ttfb, lat, status, err, raMS, ra, wait, source, rr, rt, util, comp, dec, worker)
	}
	if err := bw.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkAnalyze1M streams a 1,000,000-row results file into an
// Analysis, as `ptuprobe analyze` does (the overshoot picture included,
// FinalAnalysis: "read"), and then also writes the whole report with its
// charts ("report"), for both of bench/analyze.sh's mixes: the
// developers' (dev: 25% 429s) and an overload run's (overload: 40%).
func BenchmarkAnalyze1M(b *testing.B) {
	for _, mix := range []struct {
		name   string
		write  func(testing.TB, string, int)
		usable int
	}{{"dev", WriteBenchResults, BenchRows / 4}, {"overload", writeOverloadResults, BenchRows * 40 / 100}} {
		path := filepath.Join(b.TempDir(), "results.csv")
		mix.write(b, path, BenchRows)
		st, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		for _, withReport := range []bool{false, true} {
			name := mix.name + "/read"
			if withReport {
				name = mix.name + "/report"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(st.Size())
				b.ReportAllocs()
				for b.Loop() {
					a := benchAnalysis(b, path, mix.usable)
					if withReport {
						if _, err := Write(context.Background(), b.TempDir(), a, Options{}); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}

func benchAnalysis(b *testing.B, path string, usable int) *analyze.Analysis {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	tally := analyze.NewTally(false, analyze.OfferedLoad(0))
	if err := tally.Read(context.Background(), f, analyze.Input{Name: path, Ordinal: 1, At: f}, analyze.ForeignColumns{}); err != nil {
		b.Fatal(err)
	}
	a, err := tally.FinalAnalysis(nil, analyze.DefaultMinGroup)
	if err != nil {
		b.Fatal(err)
	}
	if a.Overall.Count() != usable {
		b.Fatalf("%d usable waits, want %d", a.Overall.Count(), usable)
	}
	return a
}

// BenchmarkReport writes a whole report (Write: its three PNG charts, its
// SVGs, report.html and the tables) of a run the size of the main job's
// (2,000 requests, 500 of them 429s with a wait), as characterize writes
// it at its end: its CPU is most of the main job's own, besides the
// traffic's waits.
func BenchmarkReport(b *testing.B) {
	path := filepath.Join(b.TempDir(), "results.csv")
	WriteBenchResults(b, path, 2000)
	a := benchAnalysis(b, path, 500)
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Write(context.Background(), dir, a, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
