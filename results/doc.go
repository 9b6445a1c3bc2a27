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
//
// # The results file
//
// `docs/results.md` describes every column. One table of columns
// (`results/column.go`) drives the header, the writer and the reader, so a
// new column is one line plus tests, appended at the end (the last, `worker`,
// names the shard of a fleet run that sent the row). Writing:
// `results.Create` opens in append mode; a new file gets the header, an
// existing one must start with the same header (else
// `results.ErrHeaderMismatch`, and the file is left untouched); a last line
// cut short by a crash is dropped (`Writer.Repaired`), so it can never be read
// as a row; a pipe or device is written without read-back or fsync. Every row
// is written whole by one `write(2)` that holds only complete lines: rows
// that arrive together are group-committed (the first writer writes every
// pending row in one call while the others wait for it, after a commit
// window, Writer.SetCommitWindow, 1 ms for traffic, while rows come faster
// than that; `Write` returns once
// its row is in the file), so a `kill -9` loses at most the rows whose
// `Write` had not returned, never half a row (`cmd/limits_test.go`
// `TestKillNineLeavesWholeRows`); `Close` fsyncs. Reading:
// columns by header name (older files without trailing columns still read),
// a final line without a newline skipped and reported, a line over 1 MiB
// refused, every error with file and line. A group label obeys
// `results.ValidateGroup`, the one rule for writing and publishing it.
package results
