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
package metrics
