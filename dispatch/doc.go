// Package dispatch is the one engine behind every traffic shape: it takes
// arrivals (an intended offset from the run start and a wave) from a Pacer,
// sends each at its intended time on an absolute schedule, bounds the
// requests in flight, and writes one results.Record per attempt.
//
// A shape package (burst, schedule) only decides when; dispatch decides
// nothing about timing but honours it. dispatch imports results only; the
// Sender (target) and the Pacer are interfaces satisfied structurally, so
// it depends on neither.
//
// Several workers send one plan together with the same Options.Start (the
// zero of every offset, on each machine's clock) and each its own
// Options.Shard: every worker reads the whole plan and sends the arrivals
// whose index is its own mod the number of workers, keeping each
// arrival's index as its seq and its offset as its time.
//
// # The dispatch engine
//
// `dispatch.Run(ctx, pacer, sender, sink, options)` is one engine type in
// three parts:
//   - the pacing loop: arrival *i* is sent at `start + offset(i)`; a late
//     send never shifts the ones after it; an arrival waits for the next, to
//     go with it on one wake, only when that one is due within `PaceWindow`
//     (`--pace-window`, default 500 µs), and only until its time, each
//     stamped with its own `sent_ms`: bunched arrivals (within half the mean
//     spacing of the last ~32: Poisson) share wakes, evenly spaced ones go
//     two at their time and the third with the next, after it, a spacing late (fewer than half late,
//     so the median lateness stays near an on-time send's, on two wakes in
//     three: at 2,000/s over HTTPS 0.84–0.86× the CPU of a wake per
//     arrival, lateness p99 about a spacing; bench/README.md, round 14);
//     a lone arrival is never held
//     (`--pace-fixed` makes the window fixed: evenly spaced arrivals within
//     it go in pairs, on half the wakes, for less CPU still;
//     bench/README.md measures the trade); the sender hands an arrival
//     to an idle worker first, so the worker pool stays as small as the
//     concurrency the target really needs, and yields its thread to that
//     worker only while fewer than 256 requests are in progress (with
//     thousands of streams open, a yield waited behind every runnable
//     goroutine); caps `MaxRequests` and
//     `MaxDuration` (reported as a typed `Cap`); a row that cannot be written
//     stops the pacing at once;
//   - one request per worker: the `Sender` performs the whole request —
//     every attempt its retry owner makes — and hands each attempt's Record
//     back, as a row (same `seq`, next `attempt`), built when the attempt
//     ends from the run's shared `Request.Row` and the request's few plan
//     fields: an open stream holds no Record. dispatch has no retry loop
//     of its own: ptuprobe's retries are the `admission` library's, inside
//     the client (`--max-attempts`, and every policy of `ptuprobe policies`).
//     The Sender is told when the run is canceled, and starts no retry after;
//   - the wave barrier: with `WaitWave`, wave *w* starts `WaveGap` after
//     wave *w−1* completed.
//
// Fleets. `Options.Start` is the zero of the plan's offsets (default:
// when `Run` is called): a start ahead is a wait that a cancel ends, one past
// sends what is due at once, recorded late. `Options.Shard` (`--shard I/N`,
// `dispatch.ParseShard`) is a worker's share: the pacing loop reads every
// arrival of the plan, numbers it, and sends only those whose index is
// ≡ I (mod N), with that index as `seq` and the arrival's own offset, each
// row naming the shard (`worker`). N processes with one `Start` thus send
// exactly the plan one process would, each wave at one instant. `MaxRequests`
// is an index of the plan, not a count of this worker's sends, so every
// shard stops where the whole plan would.
//
// `MaxInFlight` bounds the requests in progress, a request's retry waits
// included, and so the worker goroutines: a worker holds one request at a
// time and is reused for the next. An arrival that waits for a worker is
// recorded late (`sent_ms` is stamped as it leaves), never dropped. On a
// cancel, sending stops at once and in-flight requests get `Grace` (`--grace`,
// default 1 s, so a run exits within about a second of Ctrl-C) to complete or be recorded as `canceled`; `Run` returns only
// when every sent request has been written.
//
// Memory is flat in run length. Nothing of a run is kept per request:
// the results writer holds the rows completed since its last write, and the
// progress lines and end-of-run summary read `analyze.Tally`s made with
// `CountedWaits`, which keep a count per distinct advised wait (whole
// milliseconds from a PTU deployment: a few thousand values at most) and
// compute the same statistics, bit for bit, as from every wait. Past
// `MaxCountedWaits` distinct values a group falls back to listing its waits.
// `bench/rss.sh` measures it (`bench/README.md`).
//
// Memory per open stream. A streamed answer holds its connection, three
// goroutines (the worker reading the body, net/http's read and write loops
// of an HTTP/1.1 connection) and what the client keeps of the body. The
// client reads a body straight into its kept tail (`client/body.go`: no copy
// buffer held for the stream's life) and gives each connection a 2 KiB read
// and 1 KiB write buffer (`client.ReadBufferSize`, `WriteBufferSize`;
// net/http's default is 4 KiB each). What is left is mostly net/http's: the
// three goroutines' stacks, some 16–22 KiB together, and the connection's
// and request's own structures (over HTTP/2 the read and write loops are
// shared, but each request runs on a goroutine of net/http's beside the
// worker: two a stream). `bench/streams.sh` measures it.
//
// New HTTP/2 connections one at a time. net/http's Transport dials a
// connection for every request that finds each HTTP/2 connection at the
// server's limit of streams, all at once, and closes all but the first that
// completes: a server that stalls for 100 ms at 5,000 requests a second
// was dialed 300–600 TLS connections, whose handshakes made the stall a
// third of a second on a 2-core machine (`bench/stall.sh`). The client makes
// its own TLS connections to an https target it reaches directly
// (`client/dialgate.go`, the Transport's `DialTLSContext`): to an address
// that speaks HTTP/2 one dial goes at a time, and a dial queued behind one
// that made a connection the Transport has since handed its request
// (`httptrace`'s `GetConn` and `GotConn` tell) makes none. Through a proxy,
// and to an address that speaks HTTP/1.1, dials go as net/http makes them.
package dispatch
