package results

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// slowDisk counts the writes it is given and takes a millisecond for
// each, as a slow disk would, so writers pile up behind it.
type slowDisk struct {
	mu     sync.Mutex
	writes int
	buf    bytes.Buffer
}

func (d *slowDisk) Write(p []byte) (int, error) {
	time.Sleep(time.Millisecond)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.writes++
	if !bytes.HasSuffix(p, []byte("\n")) {
		panic("a write that does not end a line")
	}
	return d.buf.Write(p)
}

// TestGroupCommit: 400 rows written at once by as many workers all reach
// the file, whole, in two write(2)s after the header: the first worker's
// row alone, then every row that completed while it was written. Each
// Write returned only once its row was on file.
func TestGroupCommit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		disk := &slowDisk{}
		w, err := NewWriter(disk)
		if err != nil {
			t.Fatal(err)
		}
		const n = 400
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				r := Blank()
				r.RunID, r.Shape, r.Group, r.Seq, r.Attempt, r.Status = "gc", ShapeBurst, GroupBurst, i, 1, 200
				if err := w.Write(&r); err != nil {
					t.Error(err)
				}
				if !strings.Contains(disk.String(), ","+itoa(i)+",1,") {
					t.Errorf("Write of seq %d returned before its row was written", i)
				}
			})
		}
		wg.Wait()
		if w.Rows() != n || disk.writes != 3 {
			t.Fatalf("%d rows in %d writes (the header included), want %d in 3", w.Rows(), disk.writes, n)
		}
		rd, err := NewReader(strings.NewReader(disk.String()), "mem")
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		for {
			var r Record
			if err := rd.Read(&r); err != nil {
				break
			}
			seen[r.Seq] = true
		}
		if len(seen) != n || rd.Truncated() != 0 {
			t.Fatalf("%d distinct rows read back, truncated %d", len(seen), rd.Truncated())
		}
	})
}

func (d *slowDisk) String() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.buf.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

// fastDisk counts the writes it is given, each at once.
type fastDisk struct{ slowDisk }

func (d *fastDisk) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.writes++
	return d.buf.Write(p)
}

// TestCommitWindow: rows completing 200 µs apart (5,000 a second), each
// from its own worker, share write(2)s with a 1 ms commit window — some
// five rows a write instead of one — and each Write still returns only
// once its row is on file; rows 5 ms apart and a lone writer's rows in a
// row are not held by it: the first never waits, the second waits once
// per aloneRows + 1 rows.
func TestCommitWindow(t *testing.T) {
	t.Parallel()
	row := func(i int) *Record {
		r := Blank()
		r.RunID, r.Shape, r.Group, r.Seq, r.Attempt, r.Status = "cw", ShapeBurst, GroupBurst, i, 1, 200
		return &r
	}
	paced := func(t *testing.T, window, spacing time.Duration, n int) (writes int, held time.Duration) {
		disk := &fastDisk{}
		w, err := NewWriter(disk)
		if err != nil {
			t.Fatal(err)
		}
		w.SetCommitWindow(window)
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i := range n {
			time.Sleep(spacing)
			wg.Go(func() {
				start := time.Now()
				if err := w.Write(row(i)); err != nil {
					t.Error(err)
				}
				if !strings.Contains(disk.String(), ","+itoa(i)+",1,") {
					t.Errorf("Write of seq %d returned before its row was written", i)
				}
				mu.Lock()
				held = max(held, time.Since(start))
				mu.Unlock()
			})
		}
		wg.Wait()
		if w.Rows() != n {
			t.Fatalf("%d rows written, want %d", w.Rows(), n)
		}
		return disk.writes - 1, held
	}
	synctest.Test(t, func(t *testing.T) {
		if writes, _ := paced(t, 0, 200*time.Microsecond, 1000); writes != 1000 {
			t.Errorf("no window, rows 200 µs apart: %d writes for 1,000 rows, want 1,000", writes)
		}
		if writes, held := paced(t, time.Millisecond, 200*time.Microsecond, 1000); writes > 250 || held > 2*time.Millisecond {
			t.Errorf("a 1 ms window, rows 200 µs apart: %d writes for 1,000 rows (want at most 250), a row held up to %v", writes, held)
		}
		if writes, held := paced(t, time.Millisecond, 5*time.Millisecond, 100); writes != 100 || held > time.Millisecond {
			t.Errorf("a 1 ms window, rows 5 ms apart: %d writes for 100 rows (want 100), a row held up to %v", writes, held)
		}
		disk := &fastDisk{}
		w, err := NewWriter(disk)
		if err != nil {
			t.Fatal(err)
		}
		w.SetCommitWindow(time.Millisecond)
		start := time.Now()
		for i := range 650 {
			if err := w.Write(row(i)); err != nil {
				t.Fatal(err)
			}
		}
		if took := time.Since(start); took > 10*time.Millisecond {
			t.Errorf("a lone writer's 650 rows took %v with a 1 ms window, want at most 10 ms (a window per 65 rows)", took)
		}
	})
}
