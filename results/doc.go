// Package results is the contract between the traffic engine and the
// analysis: Record (one row per attempt), a crash-safe append-mode CSV
// Writer and a streaming Reader that tolerates a truncated last line.
//
// It imports no other ptuprobe package; every other package may import it.
package results
