package report

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/results"
)

// WriteSummary writes summary.md: the percentile table, the reading, the
// flags, 429s per group, totals and notes on the input. report.html shows
// the same texts and tables (summaryIntro, groupCountsTable …).
func WriteSummary(w io.Writer, a *analyze.Analysis, opts Options) error {
	var b strings.Builder
	b.WriteString("# Advised waits after 429 — summary\n\n")
	b.WriteString(summaryIntro.markdown() + "\n\n")
	if err := WriteTable(&b, a, opts.columns()); err != nil {
		return err
	}
	if withheld, ok := withheldNote(a); ok {
		b.WriteString("\n" + withheld.markdown() + "\n")
	}

	b.WriteString("\n## Requests: success, latency, throughput\n\n")
	for i, blk := range requestsBlocks(a) {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(blk.markdown())
	}

	writeDeliveredSections(&b, a)

	b.WriteString("\n## Reading\n\n")
	b.WriteString(reading(a, mdText) + "\n")

	b.WriteString("\n## Flags\n\n")
	b.WriteString(flagsIntro().markdown() + "\n\n")
	if len(a.Flags) == 0 {
		b.WriteString("None.\n")
	}
	for _, f := range flagItems(a) {
		b.WriteString("- " + f.markdown() + "\n")
	}

	b.WriteString("\n## 429s per group\n\n")
	b.WriteString(groupCountsTable(a).markdown())
	b.WriteString("\n" + groupCountsNote().markdown() + "\n")

	b.WriteString("\n## Advised wait against offered load\n\n")
	writeOvershoot(&b, a)

	b.WriteString("\n## Where the waits came from\n\n")
	for i, blk := range adviceOrigins(a) {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(blk.markdown())
	}

	b.WriteString("\n## Totals\n\n")
	for _, item := range totalsItems(a) {
		b.WriteString("- " + item.markdown() + "\n")
	}
	for _, t := range totalsTables(a) {
		b.WriteString("\n" + t.markdown())
	}

	if notes := inputNotes(a); len(notes) > 0 {
		b.WriteString("\n## Input\n\n")
		for _, n := range notes {
			b.WriteString("- " + n + "\n")
		}
	}
	if note, ok := timelineNote(a, opts); ok {
		b.WriteString("\n## Not part of the sanitized set\n\n")
		b.WriteString(note.markdown() + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeDeliveredSections writes the comparison with a baseline run, the
// goodput and the token table, each when the analysis has it.
func writeDeliveredSections(b *strings.Builder, a *analyze.Analysis) {
	section := func(heading string, blocks []Block) {
		b.WriteString("\n## " + heading + "\n\n")
		for i, blk := range blocks {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString(blk.markdown())
		}
	}
	if a.Baseline != nil {
		section("Run over run: against the baseline", baselineBlocks(a))
	}
	if a.Goodput() != nil {
		section("Goodput under the SLO", goodputBlocks(a))
	}
	if hasTokens(a) {
		section("Tokens: time to first token, per output token, between tokens", tokensBlocks(a))
	}
}

// summaryIntro says what the tables are and are not.
var summaryIntro = cat(
	Plain("Descriptive of the runs analyzed here; not a guarantee of what a deployment will advise. "),
	Code("count"),
	Plain(" is the number of 429s with a usable advised wait (the n behind the percentiles); percentiles are linear interpolation between closest ranks (Hyndman–Fan type 7)."),
)

// withheldNote names the groups whose percentiles are withheld; ok is
// false when there are none.
func withheldNote(a *analyze.Analysis) (t Text, ok bool) {
	for _, g := range rows(a) {
		if !g.BelowMinGroup() {
			continue
		}
		if ok {
			t = append(t, Span{Text: ", "})
		}
		t = cat(t, labelText(g.Label), Plain(fmt.Sprintf(" (n = %d)", g.Count())))
		ok = true
	}
	if !ok {
		return nil, false
	}
	intro := Plain(fmt.Sprintf("Percentiles withheld (fewer than %d usable waits, the minimum group size): ", a.MinGroup))
	return cat(intro, t, Plain(".")), true
}

// flagsIntro explains the flags.
func flagsIntro() Text {
	return cat(
		Code(analyze.FlagSparse),
		Plain(fmt.Sprintf(": a group with fewer than %d usable waits. ", analyze.SparseBelow)),
		Code(analyze.FlagImbalanced),
		Plain(fmt.Sprintf(": one group holds at least %s of all usable waits, so Overall mostly describes it.", Percent(analyze.ImbalancedShare))),
	)
}

// flagItems is one text per flag raised: the flag, its group, the detail.
func flagItems(a *analyze.Analysis) []Text {
	var out []Text
	for _, f := range a.Flags {
		out = append(out, cat(Code(f.Name), Plain(" — "), labelText(f.Group), Plain(": "+f.Detail)))
	}
	return out
}

// groupCountsTable is the 429s per group: attempts, 429s and their share,
// usable waits, 429s without one by reason, late sends.
func groupCountsTable(a *analyze.Analysis) *Table {
	t := &Table{ID: "group-table", Head: []Text{
		Plain("source group"), Plain("attempts"), Plain("429s"), Plain("share of attempts"), Plain("usable wait"),
		cat(Plain("no wait ("), Code(results.WaitNone), Plain(")")),
		cat(Plain("no wait ("), Code(results.WaitInvalid), Plain(")")),
		Plain("late sends"),
	}}
	for _, g := range rows(a) {
		attempts, share := missing, missing
		if s, ok := g.Share429(); ok {
			attempts, share = countText(g.Attempts), shareText(s)
		}
		late := missing
		if g.Attempts > 0 {
			late = countText(g.Late)
		}
		t.Rows = append(t.Rows, []Text{labelText(g.Label), attempts,
			countText(g.Total429()), share, countText(g.Count()),
			countText(g.NoWait.None), countText(g.NoWait.Invalid), late})
	}
	return t
}

// groupCountsNote explains late sends and the columns a foreign CSV lacks.
func groupCountsNote() Text {
	return Plain(fmt.Sprintf("A late send went out more than %d ms after its intended time. Attempts, shares and late sends exist only for ptuprobe results; a foreign CSV records 429s only.", analyze.LateAfterMS))
}

// adviceOrigins are the 429s per dialect and per wait source, with the
// texts around them.
func adviceOrigins(a *analyze.Analysis) []Block {
	t := a.Totals
	switch {
	case a.ResultsFiles == 0:
		return []Block{{Para: Plain("— (a foreign CSV records no dialect and no wait source).")}}
	case len(t.Dialects) == 0:
		return []Block{{Para: Plain("No 429 in the ptuprobe results.")}}
	}
	out := []Block{{Para: cat(
		Plain("The 429s of the ptuprobe results by the dialect their response spoke (whose rate-limit fields, or error body) and by where the advised wait came from ("),
		Code("wait_source"), Plain("; "), Code("go doc ./retryafter"), Plain(" has each source and their precedence)."),
	)}}
	dialects := &Table{ID: "dialect-table", Head: []Text{Plain("dialect"), Plain("429s"), Plain("usable wait"), Plain("wait sources")}}
	for _, d := range t.Dialects {
		var sources Text
		for i, src := range sourceOrder(d.Sources) {
			if i > 0 {
				sources = append(sources, Span{Text: ", "})
			}
			sources = cat(sources, Code(src), Plain(" "+Grouped(float64(d.Sources[src]))))
		}
		dialects.Rows = append(dialects.Rows, []Text{labelText(d.Dialect), countText(d.Total429), countText(d.Usable), sources})
	}
	sources := &Table{ID: "wait-source-table", Head: []Text{Plain("wait source"), Plain("429s")}}
	for _, src := range sourceOrder(t.WaitSources) {
		sources.Rows = append(sources.Rows, []Text{Code(src), countText(t.WaitSources[src])})
	}
	out = append(out, Block{Table: dialects}, Block{Table: sources})
	var notes Text
	note := func(t Text) {
		if len(notes) > 0 {
			notes = append(notes, Span{Text: " "})
		}
		notes = cat(notes, t)
	}
	for _, d := range t.Dialects {
		switch d.Dialect {
		case analyze.DialectUnknown:
			note(cat(Code(analyze.DialectUnknown), Plain(": a file written before ptuprobe recorded the dialect.")))
		case analyze.DialectOther:
			note(cat(Code(analyze.DialectOther), Plain(" dialect: a name no version of ptuprobe writes (a hand-edited file).")))
		}
	}
	if t.WaitSources[analyze.SourceOther] > 0 {
		note(cat(Code(analyze.SourceOther), Plain(" wait source: a name no version of ptuprobe writes.")))
	}
	if len(notes) > 0 {
		out = append(out, Block{Para: notes})
	}
	return out
}

// sourceOrder lists the wait sources counted in m in the order of
// precedence (results.WaitSources), then other.
func sourceOrder(m map[string]int) []string {
	var out []string
	for _, src := range append(slices.Clone(results.WaitSources), analyze.SourceOther) {
		if m[src] > 0 {
			out = append(out, src)
		}
	}
	return out
}

// totalsItems are the totals over every input.
func totalsItems(a *analyze.Analysis) []Text {
	t := a.Totals
	attempts := countText(t.Attempts)
	if a.ResultsFiles == 0 {
		attempts = Plain("— (a foreign CSV records 429s only)")
	}
	return []Text{
		cat(Plain("Attempts: "), attempts),
		cat(Plain("429s: "), countText(t.Total429), Plain(" ("), countText(a.Overall.Count()),
			Plain(" with a usable wait; without one: "), countText(t.NoWait.None), Plain(" "), Code(results.WaitNone),
			Plain(", "), countText(t.NoWait.Invalid), Plain(" "), Code(results.WaitInvalid), Plain(")")),
		cat(Plain("Errors (an error class or no response): "), countText(t.Errors)),
		cat(Plain("Late sends: "), countText(t.Late)),
	}
}

// totalsTables are the attempts by HTTP status and by error class, each
// when there is one.
func totalsTables(a *analyze.Analysis) []*Table {
	t := a.Totals
	var out []*Table
	if len(t.ByStatus) > 0 {
		statuses := &Table{ID: "status-table", Head: []Text{Plain("HTTP status"), Plain("attempts")}}
		codes := make([]int, 0, len(t.ByStatus))
		for s := range t.ByStatus {
			codes = append(codes, s)
		}
		sort.Ints(codes)
		for _, s := range codes {
			name := strconv.Itoa(s)
			if s == 0 {
				name = "0 (no response)"
			}
			statuses.Rows = append(statuses.Rows, []Text{Plain(name), countText(t.ByStatus[s])})
		}
		out = append(out, statuses)
	}
	if len(t.ByErrorClass) > 0 {
		classes := &Table{ID: "error-class-table", Head: []Text{Plain("error class"), Plain("attempts")}}
		for _, c := range sortedKeys(t.ByErrorClass) {
			classes.Rows = append(classes.Rows, []Text{Plain(c), countText(t.ByErrorClass[c])})
		}
		out = append(out, classes)
	}
	return out
}

// timelineNote says that the timeline chart is outside the sanitized set;
// ok is false when there is no timeline.
func timelineNote(a *analyze.Analysis, opts Options) (Text, bool) {
	if !opts.Timeline || a.ResultsFiles == 0 {
		return nil, false
	}
	return cat(Code(TimelineFile), Plain(" plots each advised wait against its send time. It shows timing, so it is not part of the sanitized set: review it before publishing it.")), true
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func inputNotes(a *analyze.Analysis) []string {
	var notes []string
	if a.ResultsFiles+a.ForeignFiles > 1 {
		notes = append(notes, fmt.Sprintf("%d inputs merged (%d ptuprobe results, %d foreign CSV).", a.ResultsFiles+a.ForeignFiles, a.ResultsFiles, a.ForeignFiles))
	}
	for _, w := range a.Warnings {
		notes = append(notes, "Warning: "+w+".")
	}
	return notes
}
