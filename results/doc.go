// Package results is the contract between the traffic engine and the
// analysis: Record (one row per attempt), a crash-safe append-mode CSV
// Writer, a streaming Reader that tolerates a truncated last line and caps
// a line at MaxLine, ReadTimelines (the one reader of a recorded run's
// timeline: its rows grouped by run, shape and group, for fit's replay,
// the policy lab's and internal/trace's arrivals), and ValidateGroup, the
// one rule for a group label.
//
// One table of columns (column.go) drives the header, the writer and the
// reader. Every column, its type, unit and meaning, and how the file is
// written and read, are described in docs/results.md at the root of the
// repository.
//
// It imports no other ptuprobe package but internal/num (the one number
// formatter) and internal/valid (the one form of a validation error);
// every other package may import it.
package results
