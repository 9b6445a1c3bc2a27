package analyze

import (
	"fmt"
	"strconv"
	"strings"
)

// GroupByWorker groups rows by their worker column: which shard of a fleet
// run sent them (`--shard I/N`), one group per worker, labelled
// "worker I/N" with I zero-padded so that labels sort in index order. A
// row of a run that was not sharded, or of a file written before the
// column existed, is in WorkerNone.
const GroupByWorker GroupBy = "worker"

// Names under which a worker cell is counted when it names no shard.
const (
	// WorkerNone: one process sent the whole plan (no worker recorded).
	WorkerNone = "unsharded"
	// WorkerOther: the cell is not I/N as ptuprobe writes it (a
	// hand-edited file); it is never published as it is.
	WorkerOther = "worker other"
)

// maxShards is dispatch.MaxShards, the most workers ptuprobe records
// (analyze may not import dispatch).
const maxShards = 10_000

// workerOf is the group a worker cell is counted under.
func workerOf(cell string) string {
	if cell == "" {
		return WorkerNone
	}
	i, n, _ := strings.Cut(cell, "/")
	if !digitsOnly(i) || !digitsOnly(n) {
		return WorkerOther
	}
	index, ierr := strconv.Atoi(i)
	count, nerr := strconv.Atoi(n)
	if ierr != nil || nerr != nil || count < 1 || count > maxShards || index >= count {
		return WorkerOther
	}
	return fmt.Sprintf("worker %0*d/%d", len(strconv.Itoa(count-1)), index, count)
}

func digitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
