// Package report writes an analyze.Analysis as the published set: the
// percentile and events CSVs, summary.md, analysis.json and the ECDF,
// histogram (and, on request, timeline) charts; and, for a traffic
// command, the end-of-run summary (WriteRunSummary).
//
// It imports analyze, results, internal/num (every number it prints) and
// gonum.org/v1/plot only, never client, dispatch, sim or cmd. What it
// writes carries group labels and numbers, nothing else: no run ids, raw
// headers, hosts, file names or send times — except the opt-in timeline
// chart, which shows send times and is marked in the summary as outside
// the sanitized set.
package report
