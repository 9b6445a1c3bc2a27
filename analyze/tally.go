package analyze

import (
	"slices"
	"strings"
	"sync"

	"github.com/ptuprobe/ptuprobe/results"
)

// LateAfterMS is how far past its intended time a send must go out to count
// as late: sent_ms − intended_ms > LateAfterMS.
const LateAfterMS = 10

// MaxLineRefs bounds how many line numbers of invalid values are kept; the
// rest are only counted.
const MaxLineRefs = 5

// Limits on groups. A group is a row of every published table and a curve
// or a legend entry of the charts: past a few dozen the report is no longer
// readable, and tens of thousands (a group column that holds request ids)
// took minutes and wrote a chart of megabytes. Both limits are refused
// with a BadInputError that names the setting that fixes it.
const (
	// MaxRawGroups bounds the distinct group names read from the inputs,
	// before Labels merge them. Reading stops at the line that brings the
	// first group past it, so memory and time stay bounded whatever the
	// input holds. The error's Setting is "Group" for a foreign CSV's group
	// column.
	MaxRawGroups = 10_000
	// MaxPublishedGroups bounds the groups of one report, after Labels have
	// renamed (and so possibly merged) the raw groups. The error's Setting
	// is "Labels".
	MaxPublishedGroups = 100
)

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

func (l LineRefs) clone() LineRefs {
	return LineRefs{Count: l.Count, First: slices.Clone(l.First)}
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

// Tally accumulates advised waits and counts over any number of inputs:
// files (Read) and live records (Observe), for `analyze` and for a
// traffic command's progress lines and end-of-run summary alike. It is
// safe for concurrent use. The zero value is not ready; use NewTally.
type Tally struct {
	timeline bool
	groupBy  GroupBy

	mu           sync.Mutex
	attempts     int // ptuprobe attempts, over every group
	refused      int // of them answered 429
	spillover    int // of them served by a spillover deployment
	maxLateMS    float64
	groups       map[string]*groupTally
	statuses     map[int]int
	errorClasses map[string]int
	dialects     map[string]*DialectCount // ptuprobe 429s by dialect
	sources      map[string]int           // ptuprobe 429s by wait source
	invalid      LineRefs                 // advised waits that are not usable: foreign values, results wait_ms over the cap
	unreadable   LineRefs                 // rows that could not be parsed at all
	truncated    []LineRef
	resultsFiles int
	foreignFiles int
	points       []TimelinePoint // raw group names until Analysis relabels them
	// overflow holds the rows of groups past MaxRawGroups, which are not
	// kept by name; once it is set the Tally can no longer be analyzed.
	overflow *groupTally
}

// NewTally returns an empty Tally. With timeline, it also keeps the send
// time of every usable 429 (ptuprobe results only), for the timeline chart.
// By default it groups ptuprobe rows by their group (GroupedBy changes it).
func NewTally(timeline bool, opts ...TallyOption) *Tally {
	t := &Tally{
		timeline:     timeline,
		groupBy:      GroupByGroup,
		groups:       map[string]*groupTally{},
		statuses:     map[int]int{},
		errorClasses: map[string]int{},
		dialects:     map[string]*DialectCount{},
		sources:      map[string]int{},
	}
	for _, o := range opts {
		o(t)
	}
	return t
}

// group returns the tally of the raw group. Past MaxRawGroups a new group
// is not kept: its rows go to t.overflow, which Read and Analysis report.
func (t *Tally) group(raw string) *groupTally {
	g := t.groups[raw]
	if g == nil {
		if len(t.groups) >= MaxRawGroups {
			if t.overflow == nil {
				t.overflow = &groupTally{}
			}
			return t.overflow
		}
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
	results.ErrHeaders: true, results.ErrLocal: true, results.ErrOther: true,
}

// Observe counts one ptuprobe attempt as it completes, for a live run: it
// is cheap (no sorting; a wait is appended) and safe to call from many
// goroutines, so it fits dispatch.Options.Observe.
func (t *Tally) Observe(rec *results.Record) {
	t.mu.Lock()
	t.addRecord(rec)
	t.mu.Unlock()
}

// Counts returns the ptuprobe attempts counted so far and how many of them
// were answered 429, cheaply enough for a progress line after every
// request. Foreign CSV events are not attempts and are not counted here.
func (t *Tally) Counts() (done, n429 int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.attempts, t.refused
}

// addRecord counts one ptuprobe attempt; t.mu is held.
func (t *Tally) addRecord(rec *results.Record) {
	raw := rec.Group
	switch {
	case t.groupBy == GroupByDialect:
		raw = dialectOf(rec.Dialect)
	case t.groupBy == GroupByWorker:
		raw = workerOf(rec.Worker)
	case raw == "":
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
	t.attempts++
	t.statuses[rec.Status]++
	if rec.Spillover {
		t.spillover++
	}
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
	if rec.IntendedMS >= 0 && rec.SentMS >= 0 {
		late := rec.SentMS - rec.IntendedMS
		if late > LateAfterMS {
			g.late++
		}
		t.maxLateMS = max(t.maxLateMS, late)
	}
	if !rec.Is429() {
		return
	}
	g.refused++
	t.refused++
	t.countAdvice(rec, rec.HasWait() && usableWait(rec.WaitMS))
	switch {
	case rec.HasWait() && !usableWait(rec.WaitMS):
		// A wait_ms beyond the cap (a hand-edited file): never published.
		g.invalid++
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
