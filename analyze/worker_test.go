package analyze

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/results"
)

func TestWorkerOf(t *testing.T) {
	t.Parallel()
	for cell, want := range map[string]string{
		"": WorkerNone, "0/1": "worker 0/1", "3/4": "worker 3/4", "2/12": "worker 02/12", "7/10": "worker 7/10",
		"42/101": "worker 042/101", "007/10": "worker 7/10",
		"4/4": WorkerOther, "0/0": WorkerOther, "x/y": WorkerOther, "/4": WorkerOther, "1": WorkerOther, "-1/4": WorkerOther,
		"+1/4": WorkerOther, "1/4/4": WorkerOther, "0/10001": WorkerOther, "<b>0/4</b>": WorkerOther,
		"99999999999999999999/4": WorkerOther,
	} {
		if got := workerOf(cell); got != want {
			t.Errorf("workerOf(%q) = %q, want %q", cell, got, want)
		}
	}
	if g, err := ParseGroupBy("worker"); err != nil || g != GroupByWorker {
		t.Errorf("ParseGroupBy(worker) = %q, %v", g, err)
	}
	if _, err := ParseGroupBy("workers"); err == nil || !strings.Contains(err.Error(), "worker") {
		t.Errorf("ParseGroupBy(workers): %v", err)
	}
}

// TestGroupByWorker: the workers' files analyzed together give the fleet's
// groups, and grouped by worker one group per worker, in index order; a
// file written before the worker column reads as unsharded.
func TestGroupByWorker(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	row := func(worker string, seq int, wait float64) results.Record {
		r := attempt(results.GroupBurst, results.ShapeBurst, 429, wait, results.WaitRetryAfterMS)
		r.Seq, r.Worker = seq, worker
		return r
	}
	var recs []results.Record
	for seq := range 24 {
		recs = append(recs, row([]string{"0/12", "2/12", "11/12"}[seq%3], seq, float64(10+seq)))
	}
	recs = append(recs, row("hand/edited", 99, 5))
	fleet := resultsFile(t, dir, "fleet.csv", recs)
	// An older file: the header and rows without the last (worker) column.
	var older strings.Builder
	older.WriteString(strings.Join(results.Columns[:len(results.Columns)-1], ",") + "\n")
	for seq := range 3 {
		r := row("", seq, 7)
		line := string(csvRow(&r))
		older.WriteString(strings.TrimSuffix(line, ",\n") + "\n")
	}
	old := writeFile(t, dir, "older.csv", older.String())

	for _, c := range []struct {
		by   GroupBy
		want []string
	}{
		{GroupByGroup, []string{DefaultLabels[results.GroupBurst]}},
		{GroupByWorker, []string{WorkerNone, "worker 00/12", "worker 02/12", "worker 11/12", WorkerOther}},
	} {
		tally := NewTally(false, GroupedBy(c.by))
		for i, p := range []string{fleet, old} {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := tally.Read(context.Background(), f, Input{Name: p, Ordinal: i + 1}, ForeignColumns{}); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
		a, err := tally.Analysis(nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		var labels []string
		for _, g := range a.Groups {
			labels = append(labels, g.Label)
		}
		if !reflect.DeepEqual(labels, c.want) {
			t.Fatalf("by %s: groups %v, want %v", c.by, labels, c.want)
		}
		if a.Overall.Count() != 28 {
			t.Fatalf("by %s: %d waits in all, want 28", c.by, a.Overall.Count())
		}
		if c.by == GroupByWorker {
			if g := a.GroupByLabel("worker 02/12"); g.Count() != 8 || g.Waits[0] != 11 {
				t.Errorf("worker 2/12: %+v", g)
			}
			if g := a.GroupByLabel(WorkerNone); g.Count() != 3 {
				t.Errorf("the older file's rows: %+v", g)
			}
		}
	}
}
