package analyze

import (
	"strings"

	"github.com/ptuprobe/ptuprobe/results"
)

// LateAfterMS is how far past its intended time a send must go out to count
// as late: sent_ms − intended_ms > LateAfterMS.
const LateAfterMS = 10

// MaxLineRefs bounds how many line numbers of invalid values are kept; the
// rest are only counted.
const MaxLineRefs = 5

// LineRef points at one line of one input: Input is the 1-based position of
// the file on the command line, so a published summary can point at a line
// without naming the file.
type LineRef struct {
	Input int `json:"input"`
	Line  int `json:"line"`
}

// LineRefs counts lines of one kind and keeps the first MaxLineRefs.
type LineRefs struct {
	Count int       `json:"count"`
	First []LineRef `json:"first_lines"`
}

func (l *LineRefs) add(ref LineRef) {
	l.Count++
	if len(l.First) < MaxLineRefs {
		l.First = append(l.First, ref)
	}
}

// TimelinePoint is one usable 429 placed in time: its group, when it was
// sent (ms since its run started) and the wait it advised. Only ptuprobe
// results carry send times.
type TimelinePoint struct {
	Group  string
	SentMS float64
	WaitMS float64
}

// groupTally accumulates one raw group while files stream in.
type groupTally struct {
	raw      string
	shape    string // results.ShapeBurst, results.ShapeScheduled, "" (foreign) or "mixed"
	waits    []float64
	attempts int // ptuprobe rows
	refused  int // ptuprobe rows with status 429
	events   int // foreign rows (each one is a 429 event)
	none     int // 429s with no advised wait
	invalid  int // 429s whose advised wait could not be used
	late     int
	errors   int
}

func (g *groupTally) noteShape(shape string) {
	switch {
	case g.shape == "" && g.attempts == 0 && g.events == 0:
		g.shape = shape
	case g.shape != shape:
		g.shape = "mixed"
	}
}

// Tally accumulates advised waits and counts over any number of inputs.
// The zero value is not ready; use NewTally.
type Tally struct {
	timeline bool

	groups       map[string]*groupTally
	statuses     map[int]int
	errorClasses map[string]int
	invalid      LineRefs // foreign values that are not a non-negative number
	unreadable   LineRefs // rows that could not be parsed at all
	truncated    []LineRef
	resultsFiles int
	foreignFiles int
	points       []TimelinePoint // raw group names until Analysis relabels them
}

// NewTally returns an empty Tally. With timeline, it also keeps the send
// time of every usable 429 (ptuprobe results only), for the timeline chart.
func NewTally(timeline bool) *Tally {
	return &Tally{
		timeline:     timeline,
		groups:       map[string]*groupTally{},
		statuses:     map[int]int{},
		errorClasses: map[string]int{},
	}
}

func (t *Tally) group(raw string) *groupTally {
	g := t.groups[raw]
	if g == nil {
		// A clone: raw may be a slice of a whole row.
		g = &groupTally{raw: strings.Clone(raw)}
		t.groups[g.raw] = g
	}
	return g
}

// knownErrorClasses are the only error strings published; anything else in
// the column (a hand-edited file) is counted as "other", so free text never
// reaches a report.
var knownErrorClasses = map[string]bool{
	results.ErrTimeout: true, results.ErrRefused: true, results.ErrReset: true,
	results.ErrCanceled: true, results.ErrTLS: true, results.ErrBody: true,
	results.ErrOther: true,
}

// addRecord counts one ptuprobe attempt.
func (t *Tally) addRecord(rec *results.Record) {
	raw := rec.Group
	if raw == "" {
		switch rec.Shape {
		case results.ShapeBurst:
			raw = results.GroupBurst
		case results.ShapeScheduled:
			raw = results.GroupScheduled
		default:
			raw = "ungrouped"
		}
	}
	g := t.group(raw)
	shape := rec.Shape
	if shape != results.ShapeBurst && shape != results.ShapeScheduled {
		shape = ""
	}
	g.noteShape(shape)
	g.attempts++
	t.statuses[rec.Status]++
	if rec.Error != "" {
		class := rec.Error
		if !knownErrorClasses[class] {
			class = results.ErrOther
		}
		t.errorClasses[class]++
	}
	if rec.Error != "" || rec.Status == 0 {
		g.errors++
	}
	if rec.IntendedMS >= 0 && rec.SentMS >= 0 && rec.SentMS-rec.IntendedMS > LateAfterMS {
		g.late++
	}
	if !rec.Is429() {
		return
	}
	g.refused++
	switch {
	case rec.HasWait():
		g.waits = append(g.waits, rec.WaitMS)
		if t.timeline && rec.SentMS >= 0 {
			t.points = append(t.points, TimelinePoint{Group: raw, SentMS: rec.SentMS, WaitMS: rec.WaitMS})
		}
	case rec.WaitSource == results.WaitNone || rec.WaitSource == "":
		g.none++
	default:
		// wait_source invalid, or a usable source whose wait_ms is missing.
		g.invalid++
	}
}
