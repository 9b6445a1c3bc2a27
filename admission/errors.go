package admission

import (
	"fmt"
	"strconv"
	"time"
)

// GiveUpError ends a request the Transport gave up on: attempts exhausted,
// or a wait that fits neither the budget nor MaxWait with no fallback left.
// The last refusal's body has been closed. Read it with errors.As; LastWait
// lets a service shed load upstream with a retry-after of its own.
type GiveUpError struct {
	// LastWait is the last refusal's advised wait (what remained of the
	// shared cooldown for a cooldown refusal), -1 when none was usable.
	LastWait time.Duration
	// LastStatus is the last refusal's status, 0 when no attempt was sent.
	LastStatus int
	// Attempts is the number of attempts, the last one included (an
	// attempt refused locally by the shared cooldown counts).
	Attempts int
	// Reason says why, in the words of the last Decision.
	Reason Reason
}

func (e *GiveUpError) Error() string {
	attempts := "attempts"
	if e.Attempts == 1 {
		attempts = "attempt"
	}
	return fmt.Sprintf("admission: gave up after %d %s (last status %d): %s", e.Attempts, attempts, e.LastStatus, e.Reason)
}

// DoubleOwnerError refuses, before sending, a request that an SDK marked as
// its own retry (SDKRetryHeader other than 0): two retry owners multiply
// the attempts. Turn the SDK's retries off (see the package documentation),
// or set Policy.AllowSDKRetries to let such requests through and count them.
type DoubleOwnerError struct {
	// RetryCount is the SDK's retry number, -1 when the header holds no
	// plain number (a sign, a fraction, a value past int64): a retry
	// whose number is unknown.
	RetryCount int
}

func (e *DoubleOwnerError) Error() string {
	retry := "retry " + strconv.Itoa(e.RetryCount)
	if e.RetryCount < 0 {
		retry = "retry (its count is no plain number)"
	}
	return fmt.Sprintf("admission: the request is the SDK's %s (%s); turn the SDK's retries off so that one owner retries", retry, SDKRetryHeader)
}

// ReplayError refuses, before sending, a request whose body cannot be
// replayed for a retry: it has no GetBody and is larger than
// Policy.MaxReplayBody. Give the request a GetBody (http.NewRequest does
// for bytes and strings readers) or raise the limit.
type ReplayError struct {
	Limit int64 // Policy.MaxReplayBody, in bytes
}

func (e *ReplayError) Error() string {
	return fmt.Sprintf("admission: the request body has no GetBody and is over %d bytes (MaxReplayBody), so it cannot be replayed", e.Limit)
}
