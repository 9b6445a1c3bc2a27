// Package redisstate keeps the state that admission's retry owners share
// — the shared cooldown, Slots and a Pace — in Redis, so that every process
// of a fleet that names the same deployment shares one view of it: an
// admission.Coordinator (Policy.Coordinator).
//
// # One round trip per decision
//
// Each decision is one Lua script, sent by EVALSHA (go-redis' Script: an
// EVAL once, when a restarted Redis has lost the script): a cooldown read
// or extension, a slot taken, a pace step. The pace script is the same
// AIMD arithmetic as admission's in-process Pace, on microseconds since
// the Unix epoch, so the fleet paces at one rate: its refusals cut it,
// its admitted answers grow it, its sends space out one after the other.
// Times are the callers' clocks: a fleet's clocks must agree to well
// under a slot's width (NTP does). A refusal cuts the rate once per
// congestion event however they disagree: its send time is its process's
// clock, and the count of cuts its slot was taken under is the fleet's.
// The script and admission's Go take the same steps to the microsecond
// (a test compares every answer of a long sequence through both).
//
// # Keys
//
// Every key is ptuprobe:{HASH}:cooldown, :slots or :pace, where HASH is
// the first 128 bits of the SHA-256 of the deployment's name (in hex): no
// name, URL or key is in Redis. The braces keep a deployment's keys in one
// slot of a Redis Cluster. Each key expires (PEXPIRE): the cooldown a
// second after its end, the slots a second after the next free one, the
// pace Options.PaceTTL after its last step.
//
// # Faults
//
// Each call has its own deadline (Options.CallTimeout, 50 ms), within the
// request's budget, and go-redis does not retry it. A call that fails —
// Redis down, slow, lost mid-run, a script error, a reply larger than the
// scripts answer (ErrReply: Open's connections refuse it before go-redis
// allocates what it announces), an answer more than MaxAhead ahead —
// returns the error, and
// admission takes that decision on the process's own state; the
// Coordinator counts it (Fallbacks), calls Options.Warn once per outage,
// and for Options.Retry (1 s) does not call Redis at all, so an outage
// costs one deadline per Retry, not one per decision. The first call after
// that tries again; when Redis answers, the fleet's state is shared again
// (a restarted Redis without persistence starts it afresh). A decision
// that waits past its deadline for one of the client's connections (at
// least 64, so a burst refused together seldom does) falls back too, and
// is no outage.
//
// # Before the first decision
//
// Check asks once what a decision's connection would meet: a password
// refused (ErrAuth), or a server that answers but cannot keep the state
// as the URL names it (ErrUnusable: a database it does not have, rediss://
// to a Redis without TLS, redis:// to one with TLS, a reply no Redis
// sends). Neither passes with time; a Redis that does not answer may.
//
// # Shared across processes
//
// Shared across processes. The state owners share — the shared
// cooldown, `Slots`' next free slot, a `Pace`'s learned rate and send slots
// — is in process unless `Policy.Coordinator` keeps it elsewhere
// (`admission/coordinate.go`: three methods, one per kind of state; a
// `PaceStep` is one step of the `Pace`'s AIMD, whose arithmetic is
// `paceState` in `pace.go`, on whole microseconds). The in-process state
// stays and is every decision's fallback: a Coordinator call that fails
// leaves that decision to it, and a call runs under the request's budget.
// `MemoryCoordinator` (`memory.go`) is the Coordinator in one process: the
// in-process state's own code (the cooldown, `Slots`' arithmetic,
// `paceState`) behind the interface, for Transports that share state in a
// process and for a fleet simulated in one, with what sharing costs made
// explicit: a `Delay` per call, half before the state is reached and half
// after, slept on a `Clock`, a `Fail` hook per call, and the call's context
// still its bound. The Go and the Lua take the same steps:
// `redisstate/steps_test.go` drives long seeded sequences of every call
// through both and compares every answer and, after each pace step, the
// pace's state (a read-only probe, the rate to the bit), and its fuzz target
// does so for any seed and settings. A refusal cuts a shared pace once per
// congestion event by the count of cuts its slot was taken under as well as
// by its send time, which is another process's clock. `admission/redisstate` is
// the Coordinator on Redis (go-redis): one Lua script by EVALSHA per
// decision, keys `ptuprobe:{HASH}:…` (the first 128 bits of the SHA-256 of
// the deployment's name), each expiring; a deadline per call (50 ms,
// `--coordinate-timeout`), no go-redis retries, and after a failure no call
// for a second, so an outage costs a deadline a second, not one per
// decision; a warning once per outage through a callback, and a count of
// fallbacks. What a server may answer is bounded before go-redis reads it
// (`resp.go`: its dialer's connections follow the RESP stream and fail the
// read of a reply over 64 KiB, a header announcing more than 1,024 elements
// or a 4 KiB string, or nesting past 8 — go-redis allocates what a header
// announces), and an answer more than `MaxAhead` (24 h) ahead is a fault
// too: either is a failed call, and the decision falls back. The Transport
// holds a shared send slot to the request's budget as it does its own
// (`Pace.apply`), and takes at most 16 slots for one attempt. `Check`
// (`check.go`) is the start-up check: one PING as a connection starts
// (TLS, password, database), which tells a Redis that refuses (`ErrAuth`,
// `ErrUnusable`: a database it lacks, rediss:// to a plaintext Redis —
// a plaintext PING then answers — or redis:// to a TLS one, a reply no
// Redis sends) from one that does not answer. It is its own package
// so that `admission` keeps to the standard library, and public because any
// fleet of `admission` owners may share a deployment. Its tests run a real
// `redis-server` (`internal/redisserver`: a loopback port, a temporary
// directory, no persistence; killed and restarted mid-test; skipped where it
// is not installed, and `.ci/run` installs Debian's).
package redisstate
