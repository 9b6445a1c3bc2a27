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
package dispatch
