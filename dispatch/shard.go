package dispatch

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxShards bounds Shard.Count: no fleet means ten thousand workers, and
// a bound keeps an absurd count a refusal rather than a silent no-op.
const MaxShards = 10_000

// Shard is one worker's share of a plan that several workers send
// together: the arrivals whose index in the plan is ≡ Index (mod Count).
// Every worker computes the whole plan from the same settings (and seed),
// so the Count workers together send it exactly once, each arrival at its
// planned offset: a burst wave of Size still leaves at one instant, Size/Count
// from each worker. The zero Shard is the whole plan.
type Shard struct {
	Index, Count int
}

// Whole reports whether s is the whole plan (no shard, or one of one).
func (s Shard) Whole() bool { return s.Count <= 1 }

// Owns reports whether the arrival at index i of the plan is this
// worker's to send.
func (s Shard) Owns(i int) bool { return s.Count <= 1 || i%s.Count == s.Index }

// Share is how many of the first n arrivals of a plan this worker sends.
func (s Shard) Share(n int) int {
	if s.Count <= 1 || n <= 0 {
		return max(n, 0)
	}
	if s.Index >= n {
		return 0
	}
	return (n-s.Index-1)/s.Count + 1
}

// String is the shard as ParseShard reads it, "I/N", and as the results
// file's worker column records it; "" for the zero Shard.
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count)
}

// Validate reports a shard no worker can be: a count outside 1 to
// MaxShards, or an index outside 0 to Count−1. The zero Shard is valid.
func (s Shard) Validate() error {
	switch {
	case s == Shard{}:
		return nil
	case s.Count < 1 || s.Count > MaxShards:
		return fmt.Errorf("the count %d must be between 1 and %d", s.Count, MaxShards)
	case s.Index < 0 || s.Index >= s.Count:
		return fmt.Errorf("the index %d must be between 0 and %d (one less than the count)", s.Index, s.Count-1)
	}
	return nil
}

// ErrShardSyntax is returned by ParseShard for text that is not I/N.
var ErrShardSyntax = errors.New("want I/N: the worker's index I (from 0) and the number of workers N, e.g. 0/4")

// ParseShard reads "I/N": worker I (0 ≤ I < N) of N (1 ≤ N ≤ MaxShards),
// in decimal digits, nothing else. A caller that takes I from elsewhere
// (a Kubernetes Indexed Job's completion index) puts it before the slash.
func ParseShard(spec string) (Shard, error) {
	i, n, ok := strings.Cut(spec, "/")
	if !ok || !allDigits(i) || !allDigits(n) {
		return Shard{}, ErrShardSyntax
	}
	index, ierr := strconv.Atoi(i)
	count, nerr := strconv.Atoi(n)
	if nerr != nil || count < 1 || count > MaxShards {
		return Shard{}, fmt.Errorf("the count %s must be between 1 and %d", clip(n), MaxShards)
	}
	if ierr != nil || index >= count {
		return Shard{}, fmt.Errorf("the index %s must be between 0 and %d (one less than the count)", clip(i), count-1)
	}
	return Shard{Index: index, Count: count}, nil
}

// allDigits reports whether s is one or more decimal digits: no sign and
// no space, which Atoi would accept.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// clip bounds a number echoed in an error.
func clip(s string) string {
	if len(s) > 12 {
		return s[:12] + "…"
	}
	return s
}
