package dispatch

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/montanaflynn/stats"

	"github.com/ptuprobe/ptuprobe/results"
)

// LateThresholdMS is how late a send must be to count as late in the
// summary: sent_ms − intended_ms above this.
const LateThresholdMS = 10

// Tally counts completed attempts for progress lines and the end-of-run
// summary. It is safe for concurrent use; Observe fits Options.Observe.
type Tally struct {
	mu      sync.Mutex
	done    int
	status  map[int]int
	errors  map[string]int
	n429    int
	waits   []float64
	late    int
	maxLate float64
	noWait  int
	spilled int
}

// NewTally returns an empty Tally.
func NewTally() *Tally {
	return &Tally{status: map[int]int{}, errors: map[string]int{}}
}

// Observe adds one completed attempt.
func (t *Tally) Observe(r *results.Record) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done++
	t.status[r.Status]++
	if r.Error != "" {
		t.errors[r.Error]++
	}
	if r.Is429() {
		t.n429++
		if r.HasWait() {
			t.waits = append(t.waits, r.WaitMS)
		} else {
			t.noWait++
		}
	}
	if r.Spillover {
		t.spilled++
	}
	if late := r.SentMS - r.IntendedMS; late > LateThresholdMS {
		t.late++
		t.maxLate = max(t.maxLate, late)
	} else if late > t.maxLate {
		t.maxLate = late
	}
}

// Counts returns completed attempts and 429s so far, cheaply enough to
// call once per request (Snapshot sorts the waits).
func (t *Tally) Counts() (done, n429 int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.done, t.n429
}

// Snapshot is a consistent view of a Tally.
type Snapshot struct {
	Done, N429, Late, NoWait, Spilled int
	Status                            map[int]int
	Errors                            map[string]int
	WaitP50, WaitP99                  float64 // results.None when no waits
	MaxLateMS                         float64
}

// Snapshot returns the counts so far.
func (t *Tally) Snapshot() Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Snapshot{Done: t.done, N429: t.n429, Late: t.late, NoWait: t.noWait, Spilled: t.spilled,
		Status: map[int]int{}, Errors: map[string]int{}, WaitP50: results.None, WaitP99: results.None, MaxLateMS: t.maxLate}
	for k, v := range t.status {
		s.Status[k] = v
	}
	for k, v := range t.errors {
		s.Errors[k] = v
	}
	if len(t.waits) > 0 {
		// stats.Percentile sorts a copy: type 7, like the published table.
		s.WaitP50, _ = stats.Percentile(t.waits, 50)
		s.WaitP99, _ = stats.Percentile(t.waits, 99)
	}
	return s
}

// WriteSummary prints the end-of-run summary.
func (s Snapshot) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "requests: %d", s.Done)
	codes := make([]int, 0, len(s.Status))
	for c := range s.Status {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	parts := make([]string, 0, len(codes))
	for _, c := range codes {
		label := fmt.Sprint(c)
		if c == 0 {
			label = "no response"
		}
		parts = append(parts, fmt.Sprintf("%s ×%d", label, s.Status[c]))
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(parts, ", "))
	}
	fmt.Fprintln(w)
	if len(s.Errors) > 0 {
		classes := make([]string, 0, len(s.Errors))
		for c := range s.Errors {
			classes = append(classes, c)
		}
		sort.Strings(classes)
		parts = parts[:0]
		for _, c := range classes {
			parts = append(parts, fmt.Sprintf("%s ×%d", c, s.Errors[c]))
		}
		fmt.Fprintf(w, "errors: %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "429s: %d", s.N429)
	if s.WaitP50 >= 0 {
		fmt.Fprintf(w, ", advised wait p50 %s ms, p99 %s ms", results.FormatMS(round2(s.WaitP50)), results.FormatMS(round2(s.WaitP99)))
	}
	if s.NoWait > 0 {
		fmt.Fprintf(w, ", %d without a usable wait", s.NoWait)
	}
	fmt.Fprintln(w)
	if s.Spilled > 0 {
		fmt.Fprintf(w, "served by spillover: %d\n", s.Spilled)
	}
	fmt.Fprintf(w, "sends late by more than %d ms: %d (max %s ms)\n", LateThresholdMS, s.Late, results.FormatMS(round2(s.MaxLateMS)))
}

func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }
