package analyze

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/results"
)

// rereadRows are rows of every kind the overshoot picture tells apart, in
// completion order (a row up to 5 s before the rows around it, so that
// blocks overlap): timelines of two groups and two shapes, a run appended
// after another (its clock starting again at 0), a fleet of three workers
// with run ids of their own, rows without prompt_tokens (the 429s, and a
// few others), a timeline of raw rows without max_tokens, rows without an
// intended time, rows not sent, and an unreadable line. Intended times
// are whole or tenths of milliseconds, so that a row often lies at the
// start of a window (q − W = x, as decimals), where the predicate,
// rounding and all, must be the sliding window's.
func rereadRows(seed uint64, n int) string {
	rng := rand.New(rand.NewPCG(seed, 7))
	var b bytes.Buffer
	w, _ := results.NewWriter(&b)
	for i := range n {
		r := row{run: "r1", group: "g", shape: results.ShapeScheduled, status: 200, attempt: 1, prompt: 900 + rng.IntN(300), max: 100, wait: none, util: none}
		t := i
		switch i % 7 {
		case 1:
			r.group = "h"
		case 2:
			r.run, r.group, r.shape, r.worker = "w"+fmt.Sprint(i%3), "fleet", results.ShapeBurst, fmt.Sprintf("%d/3", i%3)
		case 3:
			r.shape = results.ShapeBurst
		case 4:
			r.run, r.group, r.max = "raw", "raw", none
		}
		if i >= n/2 && i%7 != 2 && i%7 != 4 {
			r.run, t = "r2", i-n/2 // appended: a second run on its own clock
		}
		r.intended = float64(max(0, t*4-rng.IntN(5000)))
		if i%2 == 0 {
			// A tenth of a millisecond, as a time may be written: q − W
			// then rounds, and where x lies against it is the predicate's
			// to say exactly.
			r.intended += float64(rng.IntN(10)) / 10
		}
		switch rng.IntN(40) {
		case 0:
			r.prompt = none
		case 1:
			r.intended = none
		}
		if rng.IntN(3) == 0 {
			r.status, r.prompt, r.wait = 429, none, float64(rng.IntN(2000))
			if rng.IntN(2) == 0 {
				r.util = 100 + float64(rng.IntN(300))/10
			}
		}
		rec := r.record()
		if rng.IntN(20) == 0 && rec.IntendedMS >= 0 {
			// A request its retry owner gave up on unsent: no load offered.
			rec.Status, rec.Error, rec.Decision = 0, results.ClassPaced, results.DecisionGiveUpLocal
			rec.SentMS, rec.LatencyMS, rec.WaitMS, rec.WaitSource = results.None, results.None, results.None, results.WaitNone
		}
		w.Write(&rec)
		if i == n/3 {
			b.WriteString("not,a,row\n")
		}
	}
	return b.String()
}

// rereadAnalysis reads files (each opened, and handed over with At when
// again says so) into a Tally that keeps at most keep rows, and returns
// its Analysis and whether it took the second pass.
func rereadAnalysis(t *testing.T, window time.Duration, keep int, again []bool, paths ...string) (*Analysis, bool) {
	t.Helper()
	tally := NewTally(true, OfferedLoad(window), keepArrivals(keep))
	for i, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		in := Input{Name: p, Ordinal: i + 1}
		var r io.Reader = f
		if again[i] {
			in.At = f
		} else {
			r = io.MultiReader(f) // not a file: read once
		}
		if err := tally.Read(context.Background(), r, in, ForeignColumns{}); err != nil {
			t.Fatal(err)
		}
	}
	a, err := tally.Analysis(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	return a, tally.load.phase == loadSpilled
}

// TestSecondPassMatchesMemory: past MaxKeptArrivals (here a few thousand
// rows) the picture counted by a second read of the files is the one
// counted from the rows kept in memory, bit for bit, as is the rest of
// the Analysis — from one file of many blocks, from two whose second
// reaches back into the first's timelines, and from a file and a pipe
// (whose rows are kept whatever their number).
func TestSecondPassMatchesMemory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := rereadRows(11, scaled(45_000)) // a little more than three blocks
	if len(file) < 3*blockSize() {
		t.Fatalf("%d bytes: fewer than three blocks", len(file))
	}
	header, body, _ := strings.Cut(file, "\n")
	lines := strings.SplitAfter(body, "\n")
	one := writeFile(t, dir, "one.csv", file)
	half := writeFile(t, dir, "half.csv", header+"\n"+strings.Join(lines[:len(lines)/2], ""))
	rest := writeFile(t, dir, "rest.csv", header+"\n"+strings.Join(lines[len(lines)/2:], ""))
	const window = 9 * time.Second // ~2,000 rows of a timeline: more than a block holds

	for _, c := range []struct {
		name  string
		paths []string
		again []bool
		keeps []int // rows kept: none, a block's, more than the first blocks' or file's
	}{
		{"one file", []string{one}, []bool{true}, []int{0, scaled(5_000), scaled(40_000)}},
		{"two files", []string{half, rest}, []bool{true, true}, []int{0, scaled(5_000), scaled(40_000)}},
		{"a pipe, then a file", []string{half, rest}, []bool{false, true}, []int{0, scaled(5_000), scaled(20_000)}},
		{"a file, then a pipe", []string{half, rest}, []bool{true, false}, []int{0, scaled(5_000), scaled(20_000)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, twoPass := rereadAnalysis(t, window, MaxKeptArrivals, c.again, c.paths...)
			if twoPass {
				t.Fatal("in memory: took the second pass")
			}
			switch {
			case testkit.Race:
				c.keeps = c.keeps[1:2] // a block's rows: the second read's goroutines at work
			case c.name != "one file" && !*long:
				c.keeps = c.keeps[1:2] // a block's rows; more than the first blocks' are -long's (.ci/run)
			case c.name != "one file":
				c.keeps = c.keeps[1:] // keeping none is the same read whatever the inputs
			}
			for _, keep := range c.keeps {
				got, twoPass := rereadAnalysis(t, window, keep, c.again, c.paths...)
				if !twoPass {
					t.Fatalf("keeping %d rows: no second pass", keep)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("keeping %d rows, the Analysis differs from the one counted in memory:\n%s", keep, firstDifference(got, want))
				}
			}
			o := want.Overshoot
			if o == nil || len(o.Groups) != 4 || o.Unplaced == 0 {
				t.Fatalf("the picture: %+v", o)
			}
			for _, g := range o.Groups {
				if g.Requests.Reason != "" || (g.Label == "raw") != (g.Tokens.N == 0) {
					t.Errorf("group %s: %d points, trends %+v %+v", g.Label, len(g.Points), g.Requests, g.Tokens)
				}
			}
		})
	}
}

// firstDifference names the first point of the pictures of a and b that
// differs, or says the rest of the Analysis does.
func firstDifference(a, b *Analysis) string {
	if a.Overshoot == nil || b.Overshoot == nil || len(a.Overshoot.Groups) != len(b.Overshoot.Groups) {
		return fmt.Sprintf("pictures %+v and %+v", a.Overshoot, b.Overshoot)
	}
	for gi, g := range a.Overshoot.Groups {
		h := b.Overshoot.Groups[gi]
		if len(g.Points) != len(h.Points) {
			return fmt.Sprintf("group %s: %d points, want %d", g.Label, len(g.Points), len(h.Points))
		}
		for i := range g.Points {
			if g.Points[i] != h.Points[i] {
				return fmt.Sprintf("group %s point %d: %+v, want %+v", g.Label, i, g.Points[i], h.Points[i])
			}
		}
	}
	return "the pictures agree; the rest differs"
}

// TestSecondPassFindsAChangedFile: a file rewritten between the read and
// the analysis is an error, not a picture of rows that were not read.
func TestSecondPassFindsAChangedFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := rereadRows(12, 20_000)
	path := writeFile(t, dir, "f.csv", file)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tally := NewTally(false, OfferedLoad(time.Second), keepArrivals(100))
	if err := tally.Read(context.Background(), f, Input{Name: path, Ordinal: 1, At: f}, ForeignColumns{}); err != nil {
		t.Fatal(err)
	}
	// The same size, a row fewer of timeline r2/g: its last line, which
	// the second pass reads (the first block's rows are kept), made
	// unreadable.
	start := strings.LastIndex(file, "\nr2,scheduled,g,") + 1
	end := start + strings.IndexByte(file[start:], '\n')
	changed := file[:start] + strings.Repeat("x", end-start) + file[end:]
	if err := os.WriteFile(path, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tally.Analysis(nil, 1); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Fatalf("got %v, want the inputs changed", err)
	}
}

// TestFirstAtLeast: searching out from any hint finds what a binary
// search finds, ties and all.
func TestFirstAtLeast(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		at := make([]float64, rng.IntN(40))
		for i := range at {
			at[i] = float64(rng.IntN(30))
		}
		sort.Float64s(at)
		x, sub := float64(rng.IntN(34)-2), float64(rng.IntN(3))
		want := sort.Search(len(at), func(k int) bool { return at[k]-sub >= x })
		for hint := -1; hint <= len(at)+1; hint++ {
			if got := firstAtLeast(at, x, sub, hint); got != want {
				t.Fatalf("at %v, x %v, sub %v, hint %d: %d, want %d", at, x, sub, hint, got, want)
			}
		}
	}
}

// TestSecondPassFindsARewriteOfTheSameShape: a file overwritten in place
// with the same rows of the same timelines, only their token budgets
// changed (the same size, the same row counts), is an error too: the
// second read would count a load the first did not read.
func TestSecondPassFindsARewriteOfTheSameShape(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := rereadRows(13, 20_000)
	path := writeFile(t, dir, "f.csv", file)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tally := NewTally(false, OfferedLoad(time.Second), keepArrivals(100))
	if err := tally.Read(context.Background(), f, Input{Name: path, Ordinal: 1, At: f}, ForeignColumns{}); err != nil {
		t.Fatal(err)
	}
	header, body, _ := strings.Cut(file, "\n")
	prompt := slices.Index(strings.Split(header, ","), "prompt_tokens")
	lines := strings.SplitAfter(body, "\n")
	changed := 0
	for i := len(lines) / 2; i < len(lines); i++ { // past the rows kept
		fields := strings.Split(lines[i], ",")
		if prompt >= len(fields) || len(fields[prompt]) < 2 {
			continue
		}
		p := []byte(fields[prompt])
		p[len(p)-1] = '0' + (p[len(p)-1]-'0'+5)%10 // the same width, 5 tokens off
		fields[prompt] = string(p)
		lines[i] = strings.Join(fields, ",")
		changed++
	}
	rewritten := header + "\n" + strings.Join(lines, "")
	if len(rewritten) != len(file) || changed < 1000 {
		t.Fatalf("the rewrite: %d bytes for %d, %d rows changed", len(rewritten), len(file), changed)
	}
	if err := os.WriteFile(path, []byte(rewritten), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tally.Analysis(nil, 1); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Fatalf("got %v, want the inputs changed", err)
	}
}
