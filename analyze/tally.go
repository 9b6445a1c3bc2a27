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

// absorb adds the lines of o, which come after l's.
func (l *LineRefs) absorb(o LineRefs) {
	l.Count += o.Count
	room := MaxLineRefs - len(l.First)
	l.First = append(l.First, o.First[:min(room, len(o.First))]...)
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
	waits    series // the usable waits, in the order counted
	attempts int    // ptuprobe rows
	refused  int    // ptuprobe rows with status 429
	events   int    // foreign rows (each one is a 429 event)
	none     int    // 429s with no advised wait
	invalid  int    // 429s whose advised wait could not be used
	late     int
	errors   int

	// counts holds the waits of a Tally made with CountedWaits: how many
	// times each distinct value was advised. Nil otherwise, and once the
	// group has more than MaxCountedWaits distinct values (uncount).
	counts map[float64]int
	id     int32 // the group's number in its Tally (byID)

	req requestTally // its requests' outcomes and latencies (requests.go)
}

// addWait counts one usable wait.
func (g *groupTally) addWait(w float64) {
	if g.counts != nil {
		if _, seen := g.counts[w]; seen || len(g.counts) < MaxCountedWaits {
			g.counts[w]++
			return
		}
		g.uncount()
	}
	g.waits.add(w)
}

// uncount turns g's counted waits into waits kept one by one, in value
// order (an Analysis sorts them anyway).
func (g *groupTally) uncount() {
	if g.counts == nil {
		return
	}
	for _, w := range countedFrom(g.counts).list() {
		g.waits.add(w)
	}
	g.counts = nil
}

// absorb adds the rows o counted to g's, as noteShape and addRecord would
// have counted them after g's own: both have rows, so the shape stays
// only when they agree.
func (g *groupTally) absorb(o *groupTally) {
	if g.shape != o.shape {
		g.shape = "mixed"
	}
	if g.counts != nil && o.counts != nil {
		for w, n := range o.counts {
			g.counts[w] += n
		}
		if len(g.counts) > MaxCountedWaits {
			g.uncount()
		}
	} else {
		g.uncount()
		o.uncount()
	}
	g.waits.absorb(&o.waits)
	g.attempts += o.attempts
	g.refused += o.refused
	g.events += o.events
	g.none += o.none
	g.invalid += o.invalid
	g.late += o.late
	g.errors += o.errors
	g.req.absorb(&o.req)
}

// letGo drops g's waits and latencies, which an Analysis has copied
// (FinalAnalysis).
func (g *groupTally) letGo() {
	g.waits = series{}
	for _, s := range g.req.series() {
		*s = series{}
	}
}

// listedCount is how many waits g keeps one by one (not counted).
func (g *groupTally) listedCount() int { return g.waits.len() }

// appendWaits appends g's waits to dst, in the order they were counted.
func (g *groupTally) appendWaits(dst []float64) []float64 { return g.waits.appendTo(dst) }

// series are numbers counted in order (waits, latencies), kept in chunks
// that are never grown: a chunk of a block merged whole is kept as the
// block counted it (absorb), and a new chunk is twice the size of the
// last, up to maxChunk. So reading a file copies no number a second time
// and leaves no grown slice behind, and a group of a few waits holds a
// few.
type series struct {
	full [][]float64 // in order
	last []float64   // the chunk being filled, after them
}

// Chunk sizes of a series, in numbers.
const (
	minChunk = 64
	maxChunk = 8 << 10
)

func (c *series) add(v float64) {
	if len(c.last) == cap(c.last) {
		size := min(max(2*cap(c.last), minChunk), maxChunk)
		if len(c.last) > 0 {
			c.full = append(c.full, c.last)
		}
		c.last = make([]float64, 0, size)
	}
	c.last = append(c.last, v)
}

// absorb appends o's numbers to c's; o is not used afterwards.
func (c *series) absorb(o *series) {
	if len(c.last) > 0 {
		c.full, c.last = append(c.full, c.last), nil
	}
	c.full = append(c.full, o.full...)
	if len(o.last) > 0 {
		c.full = append(c.full, o.last)
	}
}

func (c *series) len() int {
	n := len(c.last)
	for _, f := range c.full {
		n += len(f)
	}
	return n
}

// appendTo appends c's numbers to dst, in the order counted.
func (c *series) appendTo(dst []float64) []float64 {
	dst = slices.Grow(dst, c.len())
	for _, f := range c.full {
		dst = append(dst, f...)
	}
	return append(dst, c.last...)
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
	counted  bool          // CountedWaits
	slo      SLO           // WithSLO
	final    bool          // analyzed once, then dropped: FinalAnalysis
	opts     []TallyOption // as given, for the tallies of blocks (fork)

	mu           sync.Mutex
	attempts     int // ptuprobe attempts, over every group
	refused      int // of them answered 429
	spillover    int // of them served by a spillover deployment
	maxLateMS    float64
	groups       map[string]*groupTally
	last         *groupTally // the group of the row counted last (group)
	statuses     statusCounts
	errorClasses map[string]int
	dialects     map[string]*DialectCount // ptuprobe 429s by dialect
	sources      map[string]int           // ptuprobe 429s by wait source
	advice       [8]pendingAdvice         // 429s not yet in dialects and sources
	invalid      LineRefs                 // advised waits that are not usable: foreign values, results wait_ms over the cap
	unreadable   LineRefs                 // rows that could not be parsed at all
	truncated    []LineRef
	resultsFiles int
	foreignFiles int
	otherStatus  int      // foreign rows whose status column is not 429, skipped
	notes        []string // how the inputs were read, for the terminal
	points       timeline
	load         *loadTally    // the rows' intended times, with OfferedLoad; else nil
	through      throughput    // the throughput timeline (throughput.go)
	byID         []*groupTally // groups by number (groupTally.id): in the order first seen
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
		errorClasses: map[string]int{},
		dialects:     map[string]*DialectCount{},
		sources:      map[string]int{},
	}
	t.opts = opts
	for _, o := range opts {
		o(t)
	}
	return t
}

// fork returns an empty Tally set up as t, to count one block of a file
// apart from t (blocks.go).
func (t *Tally) fork() *Tally { return NewTally(t.timeline, t.opts...) }

// absorb adds what p counted to t (t.mu held), as if t had counted p's
// rows after its own: sums, the latest send, and the waits and points
// appended in order. p is not used afterwards: its groups may be taken
// over whole.
func (t *Tally) absorb(p *Tally) {
	t.attempts += p.attempts
	t.refused += p.refused
	t.spillover += p.spillover
	t.maxLateMS = max(t.maxLateMS, p.maxLateMS)
	remap := make([]int32, len(p.byID)) // p's group numbers to t's
	for i, pg := range p.byID {
		if g := t.groups[pg.raw]; g != nil {
			g.absorb(pg)
			remap[i] = g.id
		} else {
			t.adopt(pg)
			remap[i] = pg.id
		}
	}
	t.statuses.absorb(&p.statuses)
	addCounts(t.errorClasses, p.errorClasses)
	p.flushAdvice()
	addCounts(t.sources, p.sources)
	for d, pc := range p.dialects {
		if c := t.dialects[d]; c != nil {
			c.Total429 += pc.Total429
			c.Usable += pc.Usable
			addCounts(c.Sources, pc.Sources)
		} else {
			t.dialects[d] = pc
		}
	}
	t.invalid.absorb(p.invalid)
	t.unreadable.absorb(p.unreadable)
	t.points.absorb(&p.points, remap)
	t.through.absorb(&p.through)
	if t.load != nil {
		t.load.absorb(p.load, remap)
	}
}

// statusCounts counts attempts by HTTP status: in an array for the
// statuses HTTP defines (a map look-up per row cost more than the rest of
// counting it), in a map for anything else a file holds.
type statusCounts struct {
	http  [600]int
	other map[int]int
}

func (s *statusCounts) add(status int) {
	if uint(status) < uint(len(s.http)) {
		s.http[status]++
		return
	}
	if s.other == nil {
		s.other = map[int]int{}
	}
	s.other[status]++
}

func (s *statusCounts) absorb(o *statusCounts) {
	for status, n := range o.http {
		s.http[status] += n
	}
	for status, n := range o.other {
		if s.other == nil {
			s.other = map[int]int{}
		}
		s.other[status] += n
	}
}

// byStatus returns the counts as a map, by status.
func (s *statusCounts) byStatus() map[int]int {
	m := map[int]int{}
	for status, n := range s.http {
		if n > 0 {
			m[status] = n
		}
	}
	for status, n := range s.other {
		m[status] = n
	}
	return m
}

// newGroups counts the groups of p that t does not have yet.
func (t *Tally) newGroups(p *Tally) int {
	n := 0
	for raw := range p.groups {
		if t.groups[raw] == nil {
			n++
		}
	}
	return n
}

func addCounts[K comparable](to, from map[K]int) {
	for k, n := range from {
		to[k] += n
	}
}

// group returns the tally of the raw group. Past MaxRawGroups a new group
// is not kept: its rows go to t.overflow, which Read and Analysis report.
func (t *Tally) group(raw string) *groupTally {
	if t.last != nil && t.last.raw == raw { // rows come in long stretches of a group
		return t.last
	}
	g := t.groups[raw]
	if g == nil {
		if len(t.groups) >= MaxRawGroups {
			if t.overflow == nil {
				t.overflow = &groupTally{id: -1} // its points are never published
			}
			return t.overflow
		}
		// A clone: raw may be a slice of a whole row.
		g = &groupTally{raw: strings.Clone(raw)}
		if t.counted {
			g.counts = map[float64]int{}
		}
		t.adopt(g)
	}
	t.last = g
	return g
}

// adopt adds g to t's groups, numbered next.
func (t *Tally) adopt(g *groupTally) {
	g.id = int32(len(t.byID))
	t.byID = append(t.byID, g)
	t.groups[g.raw] = g
}

// knownErrorClasses are the only error strings published; anything else in
// the column (a hand-edited file) is counted as "other", so free text never
// reaches a report.
var knownErrorClasses = map[string]bool{
	results.ClassTimeout: true, results.ClassRefused: true, results.ClassReset: true,
	results.ClassCanceled: true, results.ClassTLS: true, results.ClassBody: true,
	results.ClassHeaders: true, results.ClassLocal: true, results.ClassOther: true,
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

// addRecord counts one ptuprobe row; t.mu is held. A row not sent counts
// only among the requests (requests.go).
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
	g.req.add(rec, &t.slo)
	if rec.NotSent() {
		return // no HTTP attempt: no status, no send time, no load offered
	}
	g.attempts++
	t.attempts++
	t.statuses.add(rec.Status)
	if rec.Spillover {
		t.spillover++
	}
	if rec.Error != "" {
		class := rec.Error
		if !knownErrorClasses[class] {
			class = results.ClassOther
		}
		t.errorClasses[class]++
	}
	if rec.Error != "" || rec.Status == 0 {
		g.errors++
	}
	if t.load != nil {
		t.load.add(rec, g.id)
	}
	t.through.add(rec)
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
		g.addWait(rec.WaitMS)
		if t.timeline && rec.SentMS >= 0 {
			t.points.add(point{group: g.id, sentMS: rec.SentMS, waitMS: rec.WaitMS})
		}
	case rec.WaitSource == results.WaitNone || rec.WaitSource == "":
		g.none++
	default:
		// wait_source invalid, or a usable source whose wait_ms is missing.
		g.invalid++
	}
}
