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
