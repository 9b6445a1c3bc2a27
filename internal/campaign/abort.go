package campaign

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/ptuprobe/ptuprobe/results"
)

// AbortWindow is how many of the latest completed attempts an Abort
// looks at; it decides only once that many completed.
const AbortWindow = 20

// ParseAbortShare reads the share of failures past which a run stops: a
// share (0.5) or a percentage (50%), from 0 to below 1; ok is false for
// anything else.
func ParseAbortShare(v string) (share float64, ok bool) {
	v, pct := strings.CutSuffix(strings.TrimSpace(v), "%")
	share, err := strconv.ParseFloat(v, 64)
	if pct {
		share /= 100
	}
	return share, err == nil && share >= 0 && share < 1
}

// Abort stops a run early, as k6's abortOnFail does, when the failures
// other than admission (no 2xx and no 429) pass a share of the last
// AbortWindow completed attempts: it calls stop once, with an
// *AbortedError. A request the retry owner gave up on unsent is no
// failure of the target and is not counted. A nil *Abort counts nothing.
// Add is safe for concurrent use.
type Abort struct {
	share float64
	given string
	stop  context.CancelCauseFunc

	mu     sync.Mutex
	failed [AbortWindow]bool
	n      int // attempts seen
	bad    int // failures in the window
	done   bool
}

// NewAbort returns an Abort at share that calls stop; given is how the
// share was asked for, for the error ("--abort-on-fail 50%").
func NewAbort(share float64, given string, stop context.CancelCauseFunc) *Abort {
	return &Abort{share: share, given: given, stop: stop}
}

// failedNotAdmission: no 2xx and no 429.
func failedNotAdmission(rec *results.Record) bool {
	ok := rec.Error == "" && rec.Status >= 200 && rec.Status <= 299
	return !ok && !(rec.Error == "" && rec.Status == 429)
}

// Add counts a completed attempt.
func (a *Abort) Add(rec *results.Record) {
	if a == nil || rec.NotSent() {
		return // a request its own policy shed is no failure of the target
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return
	}
	i := a.n % AbortWindow
	if a.n >= AbortWindow && a.failed[i] {
		a.bad--
	}
	a.failed[i] = failedNotAdmission(rec)
	if a.failed[i] {
		a.bad++
	}
	a.n++
	if a.n >= AbortWindow && float64(a.bad) > a.share*AbortWindow {
		a.done = true
		a.stop(&AbortedError{Bad: a.bad, Given: a.given})
	}
}

// AbortedError is why an Abort stopped a run: Bad of the last
// AbortWindow completed attempts failed, more than Given allows.
type AbortedError struct {
	Bad   int
	Given string
}

func (e *AbortedError) Error() string {
	return fmt.Sprintf("aborted: %d of the last %d completed attempts failed other than by a 429, more than %s", e.Bad, AbortWindow, e.Given)
}
