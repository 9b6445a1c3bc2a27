// Package metrics exposes a run's live counts to Prometheus: the traffic
// commands' attempts, 429s, retries, advised waits, send lateness, requests
// in flight and progress (Traffic), and the embedded simulator's admitted,
// refused and spilled counts, utilization and witness counts (Simulator),
// on an Endpoint that serves GET /metrics from a private registry.
//
// It is a reader, never a second bookkeeper: Traffic counts the Records
// the dispatch engine already hands to its Observe hook, and Simulator
// reads sim.Stats when scraped, so its numbers equal the results file's
// rows and the simulator's own /sim/stats.
//
// Labels are bounded and carry no secret: group (a results.ValidateGroup
// label; at most MaxGroups, more are "other"), status (the HTTP status
// code, 0 for no response), error (one of the results error classes) and,
// for the simulator, the header an advised wait was written in. No host,
// URL, deployment, key, request id or free text from a response is ever a
// label or a value.
//
// The Endpoint binds loopback unless an address names another host, and
// when the run ends waits (at most Config.Linger) for one last scrape, so a
// scraper that has been watching sees the final values; a run nobody
// scraped ends at once.
//
// Observe is the hot path, called once per attempt at thousands a second:
// it takes no lock and allocates nothing once a status's series exists
// (BenchmarkObserve, BenchmarkDispatch).
//
// # Live metrics
//
// `--metrics-addr` (burst, schedule, characterize, calibrate, serve) serves
// Prometheus metrics from `internal/metrics` on a private registry; the
// names, types and labels are in `docs/metrics.md`. The traffic metrics hook
// where the rows are made: `campaign.RunPlans` resolves a group's series once
// per plan (`metrics.Traffic.Meter`, the `campaign.Meter` cmd gives it:
// campaign itself links no Prometheus client), wraps the plan's `Sender` (requests
// sent and in flight) and chains the group's `Observe` after `Watch`'s on
// `dispatch.Options.Observe`, called once per completed Record
// (`campaign.Calibrate` does the same for each probe, through
// `calibrate.Config.Instrument`). So the
// counters are the results file's rows, and the hot path takes no lock and
// allocates nothing (`BenchmarkObserve`, `BenchmarkDispatch` in
// `internal/metrics`; `bench/metrics.sh` at 2,000/s). `serve`'s metrics are a
// collector over `sim.Stats`, read when scraped: the simulator's own counts,
// not a second tally. Labels are bounded (group, status code, error class,
// the simulator's advice field); no host, key, deployment or text from a
// response is one. The endpoint binds 127.0.0.1 when the address names no
// host and warns when it names a non-loopback one; when the run ends,
// `ptuprobe_run_finished` becomes 1 and, if anything has scraped, the
// command waits up to `--metrics-linger` (15 s) for one scrape that began
// after the end, so the scraper's last sample holds the final values.
// At most `metrics.MaxScrapesInFlight` (8) scrapes are gathered at once, one
// more is answered 503 (a scrape costs its encoding's memory while it is
// gathered), and the server's read, write and idle timeouts cut off a
// client that holds a connection without scraping.
// `cmd` maps the two flags (`cmd/metrics_flags.go`) and nothing else.
package metrics
