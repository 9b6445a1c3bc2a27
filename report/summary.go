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
// flags, 429s per group, totals and notes on the input.
func WriteSummary(w io.Writer, a *analyze.Analysis, opts Options) error {
	var b strings.Builder
	b.WriteString("# Advised waits after 429 — summary\n\n")
	b.WriteString("Descriptive of the runs analyzed here; not a guarantee of what a deployment will advise. ")
	b.WriteString("`count` is the number of 429s with a usable advised wait (the n behind the percentiles); ")
	b.WriteString("percentiles are linear interpolation between closest ranks (Hyndman–Fan type 7).\n\n")
	if err := WriteTable(&b, a, opts.columns()); err != nil {
		return err
	}
	if withheld := belowMinGroup(a); len(withheld) > 0 {
		fmt.Fprintf(&b, "\nPercentiles withheld (fewer than %d usable waits, the minimum group size): %s.\n", a.MinGroup, strings.Join(withheld, ", "))
	}

	b.WriteString("\n## Reading\n\n")
	b.WriteString(reading(a, mdText) + "\n")

	b.WriteString("\n## Flags\n\n")
	fmt.Fprintf(&b, "`%s`: a group with fewer than %d usable waits. `%s`: one group holds at least %s of all usable waits, so Overall mostly describes it.\n\n",
		analyze.FlagSparse, analyze.SparseBelow, analyze.FlagImbalanced, Percent(analyze.ImbalancedShare))
	if len(a.Flags) == 0 {
		b.WriteString("None.\n")
	}
	for _, f := range a.Flags {
		fmt.Fprintf(&b, "- `%s` — %s: %s\n", f.Name, mdText(f.Group), f.Detail)
	}

	b.WriteString("\n## 429s per group\n\n")
	writeGroupCounts(&b, a)

	b.WriteString("\n## Advised wait against offered load\n\n")
	writeOvershoot(&b, a)

	b.WriteString("\n## Where the waits came from\n\n")
	writeAdviceOrigins(&b, a)

	b.WriteString("\n## Totals\n\n")
	writeTotals(&b, a)

	if notes := inputNotes(a); len(notes) > 0 {
		b.WriteString("\n## Input\n\n")
		for _, n := range notes {
			b.WriteString("- " + n + "\n")
		}
	}
	if opts.Timeline && a.ResultsFiles > 0 {
		b.WriteString("\n## Not part of the sanitized set\n\n")
		fmt.Fprintf(&b, "`%s` plots each advised wait against its send time. It shows timing, so it is not part of the sanitized set: review it before publishing it.\n", TimelineFile)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func belowMinGroup(a *analyze.Analysis) []string {
	var out []string
	for _, g := range rows(a) {
		if g.BelowMinGroup() {
			out = append(out, fmt.Sprintf("%s (n = %d)", mdText(g.Label), g.Count()))
		}
	}
	return out
}

func writeGroupCounts(b *strings.Builder, a *analyze.Analysis) {
	b.WriteString("| source group | attempts | 429s | share of attempts | usable wait | no wait (`none`) | no wait (`invalid`) | late sends |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, g := range rows(a) {
		attempts, share := "—", "—"
		if s, ok := g.Share429(); ok {
			attempts, share = Grouped(float64(g.Attempts)), Percent(s)
		}
		late := "—"
		if g.Attempts > 0 {
			late = Grouped(float64(g.Late))
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", mdText(g.Label), attempts,
			Grouped(float64(g.Total429())), share, Grouped(float64(g.Count())),
			Grouped(float64(g.NoWait.None)), Grouped(float64(g.NoWait.Invalid)), late)
	}
	fmt.Fprintf(b, "\nA late send went out more than %d ms after its intended time. Attempts, shares and late sends exist only for ptuprobe results; a foreign CSV records 429s only.\n", analyze.LateAfterMS)
}

// writeAdviceOrigins writes the 429s per dialect and per wait source.
func writeAdviceOrigins(b *strings.Builder, a *analyze.Analysis) {
	t := a.Totals
	switch {
	case a.ResultsFiles == 0:
		b.WriteString("— (a foreign CSV records no dialect and no wait source).\n")
		return
	case len(t.Dialects) == 0:
		b.WriteString("No 429 in the ptuprobe results.\n")
		return
	}
	b.WriteString("The 429s of the ptuprobe results by the dialect their response spoke (whose rate-limit fields, or error body) and by where the advised wait came from (`wait_source`; `go doc ./retryafter` has each source and their precedence).\n\n")
	b.WriteString("| dialect | 429s | usable wait | wait sources |\n|---|---|---|---|\n")
	for _, d := range t.Dialects {
		var parts []string
		for _, src := range sourceOrder(d.Sources) {
			parts = append(parts, fmt.Sprintf("`%s` %s", src, Grouped(float64(d.Sources[src]))))
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", mdText(d.Dialect), Grouped(float64(d.Total429)), Grouped(float64(d.Usable)), strings.Join(parts, ", "))
	}
	b.WriteString("\n| wait source | 429s |\n|---|---|\n")
	for _, src := range sourceOrder(t.WaitSources) {
		fmt.Fprintf(b, "| `%s` | %s |\n", src, Grouped(float64(t.WaitSources[src])))
	}
	var notes []string
	for _, d := range t.Dialects {
		switch d.Dialect {
		case analyze.DialectUnknown:
			notes = append(notes, fmt.Sprintf("`%s`: a file written before ptuprobe recorded the dialect.", analyze.DialectUnknown))
		case analyze.DialectOther:
			notes = append(notes, fmt.Sprintf("`%s` dialect: a name no version of ptuprobe writes (a hand-edited file).", analyze.DialectOther))
		}
	}
	if t.WaitSources[analyze.SourceOther] > 0 {
		notes = append(notes, fmt.Sprintf("`%s` wait source: a name no version of ptuprobe writes.", analyze.SourceOther))
	}
	if len(notes) > 0 {
		b.WriteString("\n" + strings.Join(notes, " ") + "\n")
	}
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

func writeTotals(b *strings.Builder, a *analyze.Analysis) {
	t := a.Totals
	attempts := Grouped(float64(t.Attempts))
	if a.ResultsFiles == 0 {
		attempts = "— (a foreign CSV records 429s only)"
	}
	fmt.Fprintf(b, "- Attempts: %s\n- 429s: %s (%s with a usable wait; without one: %s `none`, %s `invalid`)\n- Errors (an error class or no response): %s\n- Late sends: %s\n",
		attempts, Grouped(float64(t.Total429)), Grouped(float64(a.Overall.Count())),
		Grouped(float64(t.NoWait.None)), Grouped(float64(t.NoWait.Invalid)),
		Grouped(float64(t.Errors)), Grouped(float64(t.Late)))
	if len(t.ByStatus) > 0 {
		b.WriteString("\n| HTTP status | attempts |\n|---|---|\n")
		statuses := make([]int, 0, len(t.ByStatus))
		for s := range t.ByStatus {
			statuses = append(statuses, s)
		}
		sort.Ints(statuses)
		for _, s := range statuses {
			name := strconv.Itoa(s)
			if s == 0 {
				name = "0 (no response)"
			}
			fmt.Fprintf(b, "| %s | %s |\n", name, Grouped(float64(t.ByStatus[s])))
		}
	}
	if len(t.ByErrorClass) > 0 {
		b.WriteString("\n| error class | attempts |\n|---|---|\n")
		for _, c := range sortedKeys(t.ByErrorClass) {
			fmt.Fprintf(b, "| %s | %s |\n", c, Grouped(float64(t.ByErrorClass[c])))
		}
	}
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
