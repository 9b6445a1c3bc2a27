// Package publish is the analyze pipeline behind `ptuprobe analyze` and the
// last step of `ptuprobe characterize`: open every input before reading
// any, stream them into one analyze.Tally, turn it into an Analysis, write
// the published set with report, and evaluate the thresholds. It holds the
// order of those steps; the work is in analyze and report.
//
// # Published outputs
//
// `analyze --out-dir` writes `retry_after_ms_percentiles.csv`,
// `retry_after_ms_events.csv`, the ECDF (PNG and SVG) and histogram charts,
// `summary.md`, `analysis.json` and `report.html`, and for ptuprobe results
// `retry_after_vs_load.png`/`.svg`: group labels and numbers only, labels
// neutralised for spreadsheets (CSV) and escaped (Markdown,
// HTML). The report is all or nothing: every file is written under a
// temporary name and all are renamed into place only once all are written; a
// cancel at any stage leaves an earlier report as it was — also while an
// input blocks: `publish` opens each input off the calling goroutine (opening
// a FIFO waits in the system call for a writer) and, on a cancel, expires
// the reads of pipes, FIFOs and terminals (`SetReadDeadline`; Linux, where
// the runtime polls them), so a signal ends analyze at once (exit 130)
// whatever it reads. Thresholds
// (`--fail-if`) are in `docs/thresholds.md`.
//
// Beside the advised waits, every report describes the requests themselves
// (`analyze.Requests`, analyze/requests.go): per group and overall, how many
// succeeded (2xx, no error class), were refused by admission (429), got
// another 4xx, a 5xx, or no response (transport errors), the type 7
// percentiles of `latency_ms` and `ttfb_ms` over the successful requests,
// and requests and output tokens per second over the group's span (per
// shape, first `sent_ms` to last `sent_ms + latency_ms`, the rows of one
// shape laid over one another from their starts as a fleet's workers share
// one; the shapes' spans added, as characterize sends one plan after the
// other). `analysis.json` holds them as
// `"requests": {"known": true, "overall": {…}, "groups": {LABEL: {…}}}` —
// `{"known": false, "note": …}` when the inputs are foreign CSVs alone,
// which record 429 events, not requests; summary.md, report.html and
// analyze's printed summary show them as one table (`requestsTable`), and
// `--fail-if` gates on them (docs/thresholds.md has every name and the
// definitions). The latencies of the successful requests are kept, 16 bytes
// a request, until the Analysis, which selects the order statistics the
// published percentiles read (quickselect in place: exact, not sorted).
//
// Streamed answers add token-level figures (issue 37): the percentiles of
// `ttft_ms`, `tpot_ms` and each answer's `itl_p50_ms`, the largest
// `itl_max_ms`, and each request's own output rate as a mean (8 bytes a
// streamed answer for each of the three percentile kinds; the mean keeps
// nothing). `--slo` (`analyze.ParseSLO`, one grammar for every command)
// counts the goodput per group: the planned requests answered 2xx within
// every term, the refused, failed and unsent counting against it
// (`"goodput"` in analysis.json, Overall first). Every Tally keeps a
// throughput timeline (tokens delivered, 429s, attempts offered per second,
// 24 bytes a second, bounded at a day) for report.html's achieved tokens per
// minute. `analyze --baseline` analyzes a previous run the same way and
// `analyze.Compare` sets every figure beside it, with a seeded bootstrap of
// each change (exact order-statistic draws: one selection a kind of value
// and run), for summary.md, report.html, analysis.json (`"baseline"`) and
// `--fail-if` change terms (`'ttft_p99>+10%'`).
//
// A foreign CSV is never misread silently: its value column is in ms unless
// `--value-unit s` (`ForeignColumns.Unit`) says seconds, and one named like
// seconds (`*_s`, `*_seconds`) read without the flag gets a warning on
// stderr naming it; a status column (`--status-column`, else a column named
// `status`, with a note on stderr) keeps only its 429 rows as events, the
// rest counted and skipped; a column read (value, group or status) whose
// name another column has too is read from the first, with a warning naming
// them all; a quoted field that runs on over rows (a stray quote) refuses
// the file, naming its lines. The notes name files and columns, so they are
// `Analysis.ReadNotes`, for the terminal, and are not published.
//
// `report.html` is every table, chart and text of the report on one page
// (`report.WriteHTML`). Its tables and texts are built once, as `report.Text`
// spans (`percentileTable`, `groupCountsTable`, `totalsItems`…), and rendered
// both as `summary.md`'s Markdown and as the page's HTML, so a number is
// formatted by one function for both; a numeric cell carries the CSV's value
// in `data-value`. The page is a `report.Page` — sections of paragraphs,
// lists, tables and figures — written by `report.WritePage` with
// `html/template` (every text escaped, group labels included): its style is
// inline, each chart is inline SVG drawn by the same chart function as the
// files, twice (for a wide screen and for a phone; CSS shows the one that
// fits), and it holds no script and refers to nothing outside itself.
// A table keeps every column reachable at any width: on a phone one of more
// than three columns scrolls in its own box, under a line that says so,
// with shaded edges where columns are hidden and its first column (the
// group) held in place; from ten columns it is set smaller, its text cells
// wrapping, so that the policy tables fit 1280 px (`tableClass`).
// `scripts/html-check.sh` proves both in headless Chromium from the boxes
// it lays out (`measure.js` in a frame of 390 and of 1280 px).
// `htmlSections` in `report/html.go` lists the page's sections in order: a
// new table or chart is one more entry. The template writes well-formed XML
// too, so tests read a page with `encoding/xml` (`internal/pagecheck`), and
// `scripts/html-check.sh` reads it back from headless Chromium's DOM.
// The settings section names the flags given to the command (`cmd`'s
// `reportSettings`): numbers, durations, switches and a few checked words
// (`--rate`, `--phase` without its name, `--policy`…) with their values; any
// other flag — endpoint, URL, deployment, model, header, body, label,
// threshold, path, address — by name only. `ptuprobe policies` writes its own
// `report.html` (`policylab`'s `writeHTML`) on the same `report.Page`.
//
// Advised wait against offered load (the overshoot picture,
// `analyze/overshoot.go`, `trend.go`; `report/overshoot*.go`). `publish`
// gives the Tally `analyze.OfferedLoad(--load-window)`, so it keeps, per
// row of ptuprobe results, its intended time and token budget (16 bytes a
// row; a live Tally does not) — up to `analyze.MaxKeptArrivals` (2 M) rows
// of regular files: past it no more are kept, and the analysis reads the
// rest of those files (from the block after the last kept) a second time on
// every core (`analyze/reread.go`, `publish` hands
// over each open regular file as `Input.At`), adding each row to the windows
// of its timeline's 429s with a difference array — the same integer sums,
// so the same Analysis, with memory that grows with the 429s, not the file
// (a pipe's rows are kept whatever their number). `publish` analyzes with
// `Tally.FinalAnalysis`, which lets the Tally's rows go as it is done with
// them, under a soft memory limit (`internal/publish/memory.go`: half the
// inputs' size, at least 64 MiB, raised to follow the live heap), so the
// heap stays near the data instead of twice it. A *timeline* is the rows on one clock of
// `intended_ms`: one `run_id`, group and shape, or a fleet's workers (`I/N`)
// together. Each usable 429 is placed against what its timeline intended in
// (t − window, t] — every status and attempt sent, itself and its burst
// wave included (a row never sent offered no load) — as requests/s and as tokens/s (`prompt_tokens + max_tokens`,
// a refused request counting its `prompt_tokens_sent`, or in a file without
// that column its run's mean prompt), with the
// `utilization_pct` it carried. Rows come in completion order: a block's
// worker cuts its rows per timeline and sorts them (`sealLoad`), the blocks
// merge in file order, and a block that reaches back into the ones before
// is merged into their tail at the analysis, so a window spans blocks and
// files whole and the result is the row-by-row read's. Per group,
// `Analysis.Overshoot` holds Spearman's ρ (average ranks for ties, from a
// radix sort of the values' bits: `analyze/radix.go`) of the
// waits against each measure and a Theil–Sen line where |ρ| ≥ 0.5 (robust
// to the long tail, where least squares would follow the few long waits);
// `summary.md` words it as what was observed (`overshootBlocks`, which
// `report.html` shows too, as its "overshoot" section with the chart),
// `analysis.json` holds the numbers, the chart plots waits against
// requests/s. Foreign CSVs carry no
// intended times: no picture, said once. On the embedded simulator the
// method recovers the drain rate (`TestOvershootRecoversDrainRate`): the
// model's waits are bounded by one request's overshoot drained at D, so
// they rise only a little with offered load (ρ ≈ 0.27, no line), and their
// mean, c/(2D) − 1/(2λ), gives D within 5%; the reported utilization gives
// it exactly.
package publish
