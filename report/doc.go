// Package report writes an analyze.Analysis as the published set: the
// percentile and events CSVs, summary.md, analysis.json, the ECDF,
// histogram (and, on request, timeline) charts, for ptuprobe results the
// chart of advised wait against offered load (WriteOvershoot, from
// Analysis.Overshoot; its texts and table are overshootBlocks), and
// report.html, all of it on one page; and, for a traffic command, the
// end-of-run summary (WriteRunSummary).
//
// report.html (WriteHTML) is a Page written by WritePage: one
// self-contained file, its style inline and its charts inline SVG, with
// no script and nothing loaded from anywhere, escaped by html/template.
// Its tables and texts are the summary's own (Text spans rendered as
// Markdown or as HTML), so every number is formatted once. Its sections
// are listed in htmlSections; the policy lab builds its page from the
// same parts (Page, Table, PolicyECDFFigure, SettingsSection).
//
// It imports analyze, results, internal/num (every number it prints) and
// gonum.org/v1/plot only, never client, dispatch, sim or cmd. What it
// writes carries group labels and numbers, nothing else: no run ids, raw
// headers, hosts, file names or send times — except the opt-in timeline
// chart, which shows send times and is marked in the summary as outside
// the sanitized set. (The overshoot chart shows loads, requests and
// tokens offered per second, never when; the throughput timeline of
// report.html, throughputSection, shows sums per second of each plan's
// clock — tokens delivered, 429s, attempts offered — never one request's
// send time.) Beside the requests it writes the token table of streamed
// answers (tokens.go), the goodput under an SLO and the comparison with a
// baseline run (baseline.go), in summary.md, analysis.json, report.html
// and, for analyze, on the terminal. report.html adds the flags the command was given,
// whose values the caller withholds where they could name the target.
package report
