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
package redisstate
