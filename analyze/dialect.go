package analyze

import (
	"fmt"
	"maps"
	"slices"

	"github.com/ptuprobe/ptuprobe/results"
)

// GroupBy names the column the rows of a ptuprobe results file are grouped
// by. A foreign CSV is grouped by its own group column (ForeignColumns),
// whatever GroupBy says: name a dialect column there to group one by
// dialect.
type GroupBy string

const (
	// GroupByGroup groups rows by their group column: the source groups
	// (the default; "" means it too).
	GroupByGroup GroupBy = "group"
	// GroupByDialect groups rows by their dialect column: whose rate-limit
	// fields the responses spoke. A row of a file written before the column
	// existed is in DialectUnknown.
	GroupByDialect GroupBy = "dialect"
)

// Names under which a dialect cell is counted when it is no dialect of
// results.Dialects.
const (
	// DialectUnknown: the row has no dialect (a file written before the
	// dialect column, or an attempt without a response).
	DialectUnknown = "unknown"
	// DialectOther: the cell holds a name no version of ptuprobe writes (a
	// hand-edited file); it is never published as it is.
	DialectOther = "other"
	// SourceOther is the same for a wait_source cell.
	SourceOther = "other"
)

// ParseGroupBy reads a GroupBy ("group", "dialect" or "worker"; "" is
// "group").
func ParseGroupBy(s string) (GroupBy, error) {
	switch GroupBy(s) {
	case "", GroupByGroup:
		return GroupByGroup, nil
	case GroupByDialect:
		return GroupByDialect, nil
	case GroupByWorker:
		return GroupByWorker, nil
	}
	return "", fmt.Errorf("%q is not a column to group by: want %s, %s or %s", clip(s, 32), GroupByGroup, GroupByDialect, GroupByWorker)
}

// TallyOption sets up a Tally.
type TallyOption func(*Tally)

// GroupedBy makes a Tally group the rows of ptuprobe results by g.
func GroupedBy(g GroupBy) TallyOption {
	return func(t *Tally) { t.groupBy = g }
}

// MaxCountedWaits is how many distinct advised waits a group of a
// CountedWaits Tally counts; past it the group keeps its waits one by one.
const MaxCountedWaits = 1 << 16

// CountedWaits makes a Tally keep each group's advised waits as a count
// per distinct value instead of one by one, for a long live run: its
// memory then grows with the distinct waits (PTU deployments advise
// whole milliseconds, so a few thousand at most), not with the run. Past
// MaxCountedWaits distinct values a group falls back to keeping its waits
// one by one. Its Analysis has the same counts and Stats, to the last
// bit, as a Tally without the option; only the groups' Waits, which
// charts and the events file need, are nil.
func CountedWaits() TallyOption {
	return func(t *Tally) { t.counted = true }
}

// DialectCount is what the 429s of one dialect advised: how many there
// were, how many had a usable wait, and how many per wait source.
type DialectCount struct {
	Dialect  string         `json:"dialect"`
	Total429 int            `json:"total_429"`
	Usable   int            `json:"usable_wait"`
	Sources  map[string]int `json:"wait_sources"`
}

// dialectOf is the name a dialect cell is counted under.
func dialectOf(cell string) string {
	switch {
	case cell == "":
		return DialectUnknown
	case slices.Contains(results.Dialects, cell):
		return cell
	}
	return DialectOther
}

// sourceOf is the name a wait_source cell is counted under; an empty cell
// is "none", as the reader of NoWait counts it.
func sourceOf(cell string) string {
	switch {
	case cell == "":
		return results.WaitNone
	case slices.Contains(results.WaitSources, cell):
		return cell
	}
	return SourceOther
}

// pendingAdvice is 429s counted by their dialect and wait_source cells
// (as read) before the maps hold them (flushAdvice): 429s come in runs of
// a few pairs of cells, and naming the pair and counting it in three maps
// cost more than the rest of counting a 429.
type pendingAdvice struct {
	dialect, source string
	total, usable   int
}

// countAdvice counts one ptuprobe 429 by dialect and wait source; t.mu is
// held.
func (t *Tally) countAdvice(rec *results.Record, usable bool) {
	u := 0
	if usable {
		u = 1
	}
	for i := range t.advice {
		switch p := &t.advice[i]; {
		case p.total == 0:
			*p = pendingAdvice{rec.Dialect, rec.WaitSource, 1, u}
			return
		case p.dialect == rec.Dialect && p.source == rec.WaitSource:
			p.total++
			p.usable += u
			return
		}
	}
	t.flushAdvice()
	t.advice[0] = pendingAdvice{rec.Dialect, rec.WaitSource, 1, u}
}

// flushAdvice counts the pending 429s into the maps of dialects and wait
// sources, under the names they are counted by.
func (t *Tally) flushAdvice() {
	for i := range t.advice {
		p := &t.advice[i]
		if p.total == 0 {
			break
		}
		d := dialectOf(p.dialect)
		c := t.dialects[d]
		if c == nil {
			c = &DialectCount{Dialect: d, Sources: map[string]int{}}
			t.dialects[d] = c
		}
		c.Total429 += p.total
		c.Usable += p.usable
		s := sourceOf(p.source)
		c.Sources[s] += p.total
		t.sources[s] += p.total
		*p = pendingAdvice{}
	}
}

// dialectCounts copies the counts, in the order of results.Dialects, then
// unknown and other.
func (t *Tally) dialectCounts() []DialectCount {
	order := append(slices.Clone(results.Dialects), DialectUnknown, DialectOther)
	var out []DialectCount
	for _, d := range order {
		if c := t.dialects[d]; c != nil {
			cp := *c
			cp.Sources = maps.Clone(c.Sources)
			out = append(out, cp)
		}
	}
	return out
}
