package analyze

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/ptuprobe/ptuprobe/results"
)

// DefaultMinGroup is the smallest number of usable waits for which a
// group's percentiles are published.
const DefaultMinGroup = 5

// OverallLabel is the label of the row that combines every group.
const OverallLabel = "Overall"

// NoWait counts 429s that carried no usable advised wait, by reason.
type NoWait struct {
	None    int `json:"none"`    // no retry-after header (or an empty value)
	Invalid int `json:"invalid"` // a header, or a value, that is not a usable wait
}

// Group is one published source group (or Overall): its advised waits and
// the counts around them.
type Group struct {
	Label string   // the published label
	Raw   []string // the raw group names merged under Label, sorted
	Shape string   // "burst", "scheduled", "" when unknown, "mixed"

	// Waits are the usable advised waits in ms, sorted ascending; nil when
	// the Tally counted them (CountedWaits), which changes neither Count
	// nor Stats.
	Waits []float64
	// Stats holds every Statistic by Name, only when Count >= the minimum
	// group size.
	Stats map[string]float64

	Attempts int // ptuprobe attempts (0 for foreign CSV events)
	Refused  int // ptuprobe attempts answered 429
	Events   int // foreign CSV rows, each one a 429 event
	NoWait   NoWait
	Late     int // attempts sent more than LateAfterMS after their intended time
	Errors   int // attempts with an error class or no response (status 0)
	// Requests are the outcomes and latencies of its ptuprobe attempts
	// (requests.go); zero for foreign CSV events.
	Requests Requests

	counts  map[float64]int // the counted waits of its raw groups, while merging
	counted counted         // its waits as counted, when Waits is nil
}

// Count is the number of 429s with a usable wait: the n behind the
// percentiles.
func (g *Group) Count() int {
	if g.counted != nil {
		return g.counted.len()
	}
	return len(g.Waits)
}

// Percentile is the percent-th percentile of the group's usable waits,
// as the package's Percentile computes it, whether or not the group has
// the minimum size for Stats; NaN when it has no waits.
func (g *Group) Percentile(percent float64) float64 {
	return percentileOf(g.sorted(), percent)
}

// sorted returns g's waits, sorted, as they are kept.
func (g *Group) sorted() sortedWaits {
	if g.counted != nil {
		return g.counted
	}
	return listed(g.Waits)
}

// Total429 is every 429 of the group, with or without a usable wait.
func (g *Group) Total429() int { return g.Refused + g.Events }

// Share429 is the share of the group's ptuprobe attempts answered 429; ok
// is false when there were no attempts (foreign CSVs record only 429s).
func (g *Group) Share429() (share float64, ok bool) {
	if g.Attempts == 0 {
		return 0, false
	}
	return float64(g.Refused) / float64(g.Attempts), true
}

// BelowMinGroup reports whether the group's percentiles are withheld.
func (g *Group) BelowMinGroup() bool { return g.Stats == nil }

func (g *Group) merge(o *groupTally) {
	g.Raw = append(g.Raw, o.raw)
	switch {
	case g.Attempts == 0 && g.Events == 0:
		g.Shape = o.shape
	case g.Shape != o.shape:
		g.Shape = "mixed"
	}
	if o.counts != nil {
		if g.counts == nil {
			g.counts = make(map[float64]int, len(o.counts))
		}
		for w, n := range o.counts {
			g.counts[w] += n
		}
	} else {
		g.Waits = o.appendWaits(g.Waits) // into room made for every raw group of g
	}
	g.Attempts += o.attempts
	g.Refused += o.refused
	g.Events += o.events
	g.NoWait.None += o.none
	g.NoWait.Invalid += o.invalid
	g.Late += o.late
	g.Errors += o.errors
	g.mergeRequests(&o.req)
}

// settle makes the waits counted while merging g's counted waits, or,
// when some of its raw groups listed their waits, lists them too.
func (g *Group) settle() {
	switch {
	case g.counts == nil:
	case g.Waits != nil:
		g.Waits = append(g.Waits, countedFrom(g.counts).list()...)
	default:
		g.counted = countedFrom(g.counts)
	}
	g.counts = nil
}

// Totals are the counts over every input.
type Totals struct {
	Attempts     int            // ptuprobe attempts
	Total429     int            // 429s, with or without a usable wait
	Errors       int            // attempts with an error class or status 0
	Late         int            // late sends
	MaxLateMS    float64        // the latest send, sent_ms − intended_ms; 0 when none was late at all
	Spillover    int            // ptuprobe attempts served by a spillover deployment
	ByStatus     map[int]int    // ptuprobe attempts by HTTP status (0 = no response)
	ByErrorClass map[string]int // ptuprobe attempts by error class
	NoWait       NoWait
	// WaitSources counts ptuprobe 429s by wait_source: where their advised
	// wait came from (none and invalid included; a cell no version writes
	// is SourceOther). Foreign CSVs carry no source.
	WaitSources map[string]int
	// Dialects counts ptuprobe 429s by the dialect their response spoke,
	// in the order of results.Dialects, then DialectUnknown (a file written
	// before the column) and DialectOther.
	Dialects []DialectCount
}

// Analysis is everything a report publishes, and what --fail-if reads.
type Analysis struct {
	MinGroup int
	Overall  Group
	Groups   []Group // sorted by label
	Totals   Totals

	// ResultsFiles and ForeignFiles count the inputs of each kind.
	ResultsFiles int
	ForeignFiles int
	// InvalidValues are advised waits that cannot be used: foreign values
	// that are not a number from 0 to results.MaxWaitMS, and wait_ms cells
	// of results files beyond that cap.
	InvalidValues LineRefs
	// UnreadableRows are rows that could not be parsed (counted, skipped).
	UnreadableRows LineRefs
	// TruncatedLines are incomplete last lines (an interrupted run), skipped.
	TruncatedLines []LineRef
	// Timeline holds the usable 429s in time, when the Tally kept them.
	Timeline []TimelinePoint
	// Overshoot places the usable 429s of ptuprobe results against the
	// load offered just before each, when the Tally kept it (OfferedLoad);
	// nil otherwise, and for foreign CSVs alone, which carry no intended
	// times.
	Overshoot *Overshoot

	// OtherStatus counts the rows of foreign CSVs whose status column
	// (ForeignColumns.Status) is not 429: skipped, not events.
	OtherStatus int
	// ReadNotes say how the inputs were read, each starting "note: " (a
	// status column taken by default) or "warning: " (a value column
	// named like seconds read as ms, a column read whose name another
	// column has too). They name files and columns, so
	// they are for the terminal, not published.
	ReadNotes []string

	// SLO is the objective the goodput was counted under (WithSLO); zero
	// when none was given.
	SLO SLO
	// Baseline is this analysis beside a baseline run's (Compare), set by
	// the caller that has one (analyze --baseline); nil otherwise.
	Baseline *Comparison
	// ThroughputBeyond counts the rows placed past MaxThroughputSeconds,
	// left out of the throughput timeline.
	ThroughputBeyond int
	throughput       []ThroughputSecond

	Flags    []Flag
	Warnings []string
}

// Analysis groups the tally under published labels (merging raw groups
// that share one), sorts the waits and computes every Statistic for each
// group with at least minGroup waits. It fails when a label taken from the
// data cannot be published (results.ValidateGroup), and when the
// overshoot picture's second read (reread.go) cannot read an input again
// (Input.At) or finds it changed. The Analysis is a copy: the Tally may go
// on counting.
func (t *Tally) Analysis(labels Labels, minGroup int) (*Analysis, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.analysis(labels, minGroup)
}

// FinalAnalysis is Analysis for a Tally that is analyzed once and then
// dropped, as `ptuprobe analyze` drops it: the Analysis takes the
// Tally's rows as it is done with them — each group's waits and
// latencies once copied into its Group, the overshoot picture's rows
// once placed — so that a large input's rows are not held twice at the
// peak. The Analysis is the same; the Tally must not be used afterwards.
func (t *Tally) FinalAnalysis(labels Labels, minGroup int) (*Analysis, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.final = true
	return t.analysis(labels, minGroup)
}

// analysis is Analysis, t.mu held.
func (t *Tally) analysis(labels Labels, minGroup int) (*Analysis, error) {
	t.flushAdvice()
	if minGroup < 1 {
		minGroup = 1
	}
	if t.overflow != nil {
		return nil, &BadInputError{Err: errTooManyGroups}
	}
	raws, published, waits, err := t.publish(labels)
	if err != nil {
		return nil, err
	}
	a := &Analysis{
		MinGroup:         minGroup,
		Overall:          Group{Label: OverallLabel},
		ResultsFiles:     t.resultsFiles,
		ForeignFiles:     t.foreignFiles,
		InvalidValues:    t.invalid.clone(),
		UnreadableRows:   t.unreadable.clone(),
		TruncatedLines:   slices.Clone(t.truncated),
		OtherStatus:      t.otherStatus,
		ReadNotes:        slices.Clone(t.notes),
		SLO:              t.slo,
		throughput:       t.through.trimmed(),
		ThroughputBeyond: t.through.beyond,
	}
	// The overshoot picture reads the Tally only: it is made on other
	// cores while the groups are.
	var overshoot struct {
		o   *Overshoot
		err error
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		overshoot.o, overshoot.err = t.overshoot(published, slices.Sorted(maps.Keys(waits)))
	}()
	a.setGroups(t.groupsByLabel(raws, published, waits), minGroup)
	a.Totals = t.totals(&a.Overall)
	if t.timeline {
		labels := make([]string, len(t.byID))
		for i, g := range t.byID {
			labels[i] = published[g.raw]
		}
		a.Timeline = t.points.published(labels)
	}
	<-done
	if overshoot.err != nil {
		return nil, overshoot.err
	}
	a.Overshoot = overshoot.o
	a.Flags = flagsFor(a)
	a.Warnings = warningsFor(a)
	if w := t.load.warning(); w != "" {
		a.Warnings = append(a.Warnings, w)
	}
	return a, nil
}

// publish names the label each raw group is published under (raws: the
// raw groups, sorted; waits: the listed waits of each label), and fails
// on a label that cannot be published or on more labels than a report
// publishes.
func (t *Tally) publish(labels Labels) (raws []string, published map[string]string, waits map[string]int, err error) {
	raws = make([]string, 0, len(t.groups))
	for raw := range t.groups {
		raws = append(raws, raw)
	}
	sort.Strings(raws)
	published = map[string]string{}
	waits = map[string]int{}
	for _, raw := range raws {
		label := labels.Published(raw)
		if err := results.ValidateGroup(label); err != nil {
			return nil, nil, nil, &BadInputError{Setting: "Labels", Err: fmt.Errorf("group %q from the input cannot be published: %s", clip(raw, results.MaxGroupLen), labelError(err))}
		}
		if label == OverallLabel {
			return nil, nil, nil, &BadInputError{Setting: "Labels", Err: fmt.Errorf("group %q would be published as %q, which is the combined row", clip(raw, results.MaxGroupLen), OverallLabel)}
		}
		published[raw] = label
		waits[label] += t.groups[raw].listedCount()
	}
	if len(waits) > MaxPublishedGroups {
		return nil, nil, nil, &BadInputError{Setting: "Labels", Err: fmt.Errorf("the inputs hold %d groups, more than the %d a report can publish: merge groups by giving them one label", len(waits), MaxPublishedGroups)}
	}
	return raws, published, waits, nil
}

// groupsByLabel merges the raw groups into one Group per published label,
// in label order, their waits sorted. Each group's waits are copied once,
// into a slice of their size, and sorted there; Overall merges them
// (mergeSorted). A copy, because the Tally may go on counting.
func (t *Tally) groupsByLabel(raws []string, published map[string]string, waits map[string]int) []*Group {
	byLabel := map[string]*Group{}
	var order []string
	for _, raw := range raws {
		label := published[raw]
		g := byLabel[label]
		if g == nil {
			g = &Group{Label: label}
			if n := waits[label]; n > 0 {
				g.Waits = make([]float64, 0, n)
			}
			byLabel[label] = g
			order = append(order, label)
		}
		g.merge(t.groups[raw])
		if t.final {
			t.groups[raw].letGo()
		}
	}
	sort.Strings(order)
	sorted := make([]*Group, len(order))
	for i, label := range order {
		sorted[i] = byLabel[label]
		sorted[i].settle()
	}
	sortEach(sorted)
	return sorted
}

// setGroups computes the statistics of each group and of Overall, the
// sum of them all.
func (a *Analysis) setGroups(sorted []*Group, minGroup int) {
	a.Overall.setWaits(sorted)
	selectRequests(&a.Overall, sorted)
	for _, g := range sorted {
		g.Stats = statsFor(g.sorted(), minGroup)
		a.Groups = append(a.Groups, *g)
		o := &a.Overall
		o.Raw = append(o.Raw, g.Raw...)
		o.Attempts += g.Attempts
		o.Refused += g.Refused
		o.Events += g.Events
		o.NoWait.None += g.NoWait.None
		o.NoWait.Invalid += g.NoWait.Invalid
		o.Late += g.Late
		o.Errors += g.Errors
	}
	a.Overall.Stats = statsFor(a.Overall.sorted(), minGroup)
	a.Overall.Shape = "mixed"
}

// totals are the counts over every group (overall) and those the Tally
// keeps only in total.
func (t *Tally) totals(overall *Group) Totals {
	return Totals{
		Attempts:     overall.Attempts,
		Total429:     overall.Total429(),
		Errors:       overall.Errors,
		Late:         overall.Late,
		MaxLateMS:    t.maxLateMS,
		Spillover:    t.spillover,
		ByStatus:     t.statuses.byStatus(),
		ByErrorClass: maps.Clone(t.errorClasses),
		NoWait:       overall.NoWait,
		WaitSources:  maps.Clone(t.sources),
		Dialects:     t.dialectCounts(),
	}
}

// setWaits gives o (Overall) the waits of every group: counted when each
// group's are, else listed (merged from the sorted lists).
func (o *Group) setWaits(groups []*Group) {
	listedAny := false
	for _, g := range groups {
		listedAny = listedAny || g.Waits != nil
	}
	if !listedAny {
		counts := map[float64]int{}
		for _, g := range groups {
			g.counted.addTo(counts)
		}
		if len(counts) > 0 {
			o.counted = countedFrom(counts)
		}
		return
	}
	total := 0
	var runs [][]float64
	for _, g := range groups {
		run := g.Waits
		if g.counted != nil {
			run = g.counted.list() // only past MaxCountedWaits in another group
		}
		if len(run) > 0 {
			runs, total = append(runs, run), total+len(run)
		}
	}
	if len(runs) == 1 {
		o.Waits = runs[0] // the one group's: an Analysis is read only
		return
	}
	o.Waits = mergeSorted(runs, total)
}

func statsFor(sorted sortedWaits, minGroup int) map[string]float64 {
	if sorted.len() < minGroup || sorted.len() == 0 {
		return nil
	}
	m := make(map[string]float64, len(Statistics))
	for _, s := range Statistics {
		m[s.Name] = s.compute(sorted)
	}
	return m
}

// GroupByLabel returns the group published as label, or nil.
func (a *Analysis) GroupByLabel(label string) *Group {
	if label == OverallLabel {
		return &a.Overall
	}
	for i := range a.Groups {
		if a.Groups[i].Label == label {
			return &a.Groups[i]
		}
	}
	return nil
}

func warningsFor(a *Analysis) []string {
	var w []string
	if a.Overall.Count() == 0 {
		w = append(w, "no 429 with a usable advised wait in the input; the report has zero counts")
	}
	if n := a.InvalidValues.Count; n > 0 {
		w = append(w, fmt.Sprintf("%d value(s) are not a usable wait (a number of ms from 0 to 10^12) and were counted as invalid (first at %s)", n, formatLineRefs(a.InvalidValues.First, a.inputs())))
	}
	if n := a.OtherStatus; n > 0 {
		w = append(w, fmt.Sprintf("%d foreign row(s) whose status is not 429 were skipped", n))
	}
	if n := a.UnreadableRows.Count; n > 0 {
		w = append(w, fmt.Sprintf("%d row(s) could not be parsed and were skipped (first at %s)", n, formatLineRefs(a.UnreadableRows.First, a.inputs())))
	}
	for _, ref := range a.TruncatedLines {
		w = append(w, fmt.Sprintf("an incomplete last line (an interrupted run) was skipped at %s", formatLineRefs([]LineRef{ref}, a.inputs())))
	}
	return w
}

func (a *Analysis) inputs() int { return a.ResultsFiles + a.ForeignFiles }

// formatLineRefs writes line references for a published text: "line 7,
// line 9" with one input, "input 2 line 7" with several. File names are
// left out on purpose: a path can name a host or a deployment.
func formatLineRefs(refs []LineRef, inputs int) string {
	s := ""
	for i, r := range refs {
		if i > 0 {
			s += ", "
		}
		if inputs > 1 {
			s += fmt.Sprintf("input %d line %d", r.Input, r.Line)
		} else {
			s += fmt.Sprintf("line %d", r.Line)
		}
	}
	return s
}
