package testkit

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// TestReadRecords: every row written (WriteResults) reads back, in
// order, and ResultsText is the file's text.
func TestReadRecords(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "results.csv")
	var recs []results.Record
	for seq := range 3 {
		r := results.Blank()
		r.RunID, r.Shape, r.Group, r.Seq, r.Attempt, r.Status = "a1b2c3d4", results.ShapeBurst, "g", seq, 1, 200
		recs = append(recs, r)
	}
	WriteResults(t, path, recs...)
	got := ReadRecords(t, path)
	if len(got) != 3 || got[2].Seq != 2 || got[0].Group != "g" {
		t.Fatalf("read %+v", got)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != ResultsText(t, recs...) {
		t.Errorf("the file %q (%v) is not ResultsText's %q", b, err, ResultsText(t, recs...))
	}
}

// TestDirFiles: a snapshot holds every file, hidden ones too; a directory
// that does not exist is nil, unlike an empty one.
func TestDirFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := DirFiles(t, dir)
	if missing := DirFiles(t, filepath.Join(dir, "none")); missing != nil || empty == nil || SameFiles(missing, empty) {
		t.Fatalf("missing %v, empty %v", missing, empty)
	}
	for name, text := range map[string]string{"a.csv": "a", ".tmp-b": "b"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := DirFiles(t, dir)
	if len(before) != 2 || before[".tmp-b"] != "b" || !SameFiles(before, DirFiles(t, dir)) {
		t.Fatalf("snapshot %v", before)
	}
	os.WriteFile(filepath.Join(dir, "a.csv"), []byte("A"), 0o644)
	if SameFiles(before, DirFiles(t, dir)) {
		t.Fatal("a changed file compares the same")
	}
}

// TestCancelAfter: Err is nil for the first N calls, then Canceled.
func TestCancelAfter(t *testing.T) {
	t.Parallel()
	c := &CancelAfter{Context: context.Background(), N: 2}
	for i, want := range []error{nil, nil, context.Canceled, context.Canceled} {
		if err := c.Err(); !errors.Is(err, want) || (want == nil) != (err == nil) {
			t.Fatalf("call %d: %v, want %v", i, err, want)
		}
	}
	if c.Calls() != 4 {
		t.Fatalf("%d calls counted", c.Calls())
	}
}

// TestWaitBound: the flag is raised unless the run set it or runs under
// the race detector.
func TestWaitBound(t *testing.T) {
	f := flag.Lookup("test.parallel")
	before, set := f.Value.String(), false
	flag.Visit(func(g *flag.Flag) { set = set || g.Name == "test.parallel" })
	WaitBound(37)
	defer f.Value.Set(before)
	want := "37"
	if set || Race {
		want = before
	}
	if got := f.Value.String(); got != want {
		t.Errorf("-test.parallel %s, want %s", got, want)
	}
}

// TestStallsSeeABusyProcess: with one P held by a busy goroutine for 40
// ms, the watcher wakes only when the scheduler preempts it (some 10 ms
// in): a stall is seen within the busy span, none before the watch
// began. Not parallel: it sets GOMAXPROCS.
func TestStallsSeeABusyProcess(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	before := time.Now()
	s := WatchStalls(t)
	time.Sleep(5 * time.Millisecond)
	from := time.Now()
	for time.Since(from) < 40*time.Millisecond {
	}
	to := time.Now()
	time.Sleep(5 * time.Millisecond)
	if w := s.Worst(from, to); w < 2*time.Millisecond || s.Total(from, to) < w {
		t.Errorf("worst stall %v, total %v, over 40 ms of one P kept busy", w, s.Total(from, to))
	}
	if w := s.Worst(before.Add(-time.Hour), before); w != 0 {
		t.Errorf("a stall of %v before the watch began", w)
	}
}

// TestStallsOverlap: Worst and Total count the stalls that overlap the
// span asked about, and only those.
func TestStallsOverlap(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	s := &Stalls{spans: []stall{{at(0), at(5)}, {at(10), at(12)}, {at(20), at(27)}}}
	for _, c := range []struct {
		from, to     int
		worst, total time.Duration
	}{
		{-5, -1, 0, 0},
		{4, 11, 5 * time.Millisecond, 7 * time.Millisecond},
		{12, 20, 0, 0}, // touching ends do not overlap
		{11, 21, 7 * time.Millisecond, 9 * time.Millisecond},
		{-100, 100, 7 * time.Millisecond, 14 * time.Millisecond},
	} {
		if w, tot := s.Worst(at(c.from), at(c.to)), s.Total(at(c.from), at(c.to)); w != c.worst || tot != c.total {
			t.Errorf("[%d, %d] ms: worst %v total %v, want %v %v", c.from, c.to, w, tot, c.worst, c.total)
		}
	}
}

// TestLessGC: the collector's target is raised to LessGCPercent unless
// GOGC is set in the environment. Not parallel: it sets the process's
// collector and environment.
func TestLessGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC")
	LessGC()
	if got := debug.SetGCPercent(100); got != LessGCPercent {
		t.Errorf("GOGC %d after LessGC, want %d", got, LessGCPercent)
	}
	t.Setenv("GOGC", "100")
	LessGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC %d after LessGC with GOGC=100 set, want 100", got)
	}
}
