// Package analyze turns recorded traffic into the numbers an operator
// publishes: it streams ptuprobe results files and foreign CSVs, keeps only
// the advised waits of 429s (so memory grows with the number of 429s, not
// rows), groups them (by source group, or by dialect: GroupedBy), and
// computes counts, Hyndman–Fan type 7 percentiles, ECDF steps, flags and
// --fail-if verdicts. Its Tally also counts a live run (Observe, Counts)
// for progress lines and the end-of-run summary, so a run and its later
// analysis count the same way; with CountedWaits it keeps a count per
// distinct wait instead of every wait, so a run of hours holds as little
// as a run of seconds, with the same statistics to the last bit (but for
// the latency and ttfb of each successful request, 16 bytes a request,
// which requests.go describes with the requests' outcomes). A ptuprobe results file is read in blocks
// on every core, each row counted as a sequential read counts it
// (blocks.go says how, and why the two agree).
//
// With OfferedLoad a Tally also keeps every row's intended time (16 bytes
// a row, up to MaxKeptArrivals rows of regular files, whose rows past it
// are read a second time instead), and its Analysis places each usable
// 429 against the load the client offered in the window before it —
// requests and tokens per second — and the utilization the target
// reported: Analysis.Overshoot, each group's waits described against each
// measure by Spearman's ρ and, where one fits, a Theil–Sen line
// (overshoot.go and trend.go say how and why).
// It describes the runs; it is not a model of the service.
//
// Streamed answers carry token-level timing (ttft_ms, tpot_ms, itl_p50_ms,
// itl_max_ms: docs/results.md); each group's Requests publish their
// percentiles beside latency and ttfb (requests.go), kept as the latencies
// are, 8 bytes a streamed answer each. With WithSLO a Tally counts the
// requests that meet an SLO — ParseSLO reads the one grammar of every
// command's --slo, "ttft=500ms,tpot=50ms,itl=200ms,e2e=10s" or a bare
// duration for e2e — and Analysis.Goodput publishes each group's share of
// its planned requests that met it: a refused, failed or unsent request
// counts against it (slo.go). Every Tally keeps a throughput timeline,
// second by second, of the tokens delivered, the 429s and the attempts
// offered (throughput.go, 24 bytes a second of run).
//
// Compare sets an Analysis beside a baseline run's (analyze --baseline):
// every figure's change, and whether it is beyond the runs' noise by a
// seeded bootstrap over the requests of both runs (baseline.go says how
// it draws a resample's percentile exactly without building the
// resample); --fail-if terms with a signed percent bound ("ttft_p99>+10%")
// gate on those changes.
//
// It imports results, internal/num, internal/valid and
// github.com/montanaflynn/stats only. It never imports report, client,
// dispatch, sim or cmd, and it keeps nothing from a row but group labels,
// numbers and line numbers, and the dialect and wait source of a 429 when
// they are names a version of ptuprobe writes (any other is counted as
// "other"): raw headers, run ids and file contents other than the value
// and group columns are dropped as they are read. (The overshoot picture
// tells a row's timeline by its run id, group, shape and worker, and
// publishes none of them.)
package analyze
