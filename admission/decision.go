package admission

import (
	"context"
	"net/http"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// Action is what the Transport decided after an attempt. Its values are
// the results.Decision* constants, so a Decision can be written to a
// results file as it is.
type Action string

const (
	// ActionDone: the attempt's outcome is the request's (a response that
	// is no refusal, or an error); nothing more is sent.
	ActionDone Action = results.DecisionDone
	// ActionSleep: wait Decision.Slept, then send the next attempt.
	ActionSleep Action = results.DecisionSleep
	// ActionRedirect: send the next attempt to the fallback at once.
	ActionRedirect Action = results.DecisionRedirect
	// ActionGiveUp: stop; the request ends in a *GiveUpError (or the last
	// refusal, with ReturnLastResponse).
	ActionGiveUp Action = results.DecisionGiveUp
)

// Classes of Decision.Err.
const (
	// ClassTransport: no response came (connection refused, reset, TLS…).
	ClassTransport = "transport"
	// ClassTimeout: the request's context deadline passed.
	ClassTimeout = results.ClassTimeout
	// ClassCanceled: the request's context was canceled.
	ClassCanceled = results.ClassCanceled
	// ClassCooldown: not sent: the shared cooldown outlasts what the budget
	// (or MaxWait) allows, so the attempt was refused locally.
	ClassCooldown = results.ClassCooldown
	// ClassPaced: not sent: the Pace's next send slot does not come
	// within the budget, so the attempt was refused locally.
	ClassPaced = results.ClassPaced
	// ClassThrottled: not sent: the client-side throttling (Policy.Throttle)
	// rejected the attempt locally.
	ClassThrottled = results.ClassThrottled
	// ClassAdaptive: not sent: the adaptive rate's next token
	// (Policy.Adaptive) does not come within the budget.
	ClassAdaptive = results.ClassAdaptive
	// ClassFallback: not sent: Policy.Fallback returned an error.
	ClassFallback = "fallback"
)

// Decision is one attempt and what the Transport decided after it. It is
// safe to log as it is: it holds no URL, host, header value, key or body,
// and Reason is built from numbers and fixed words only.
type Decision struct {
	Attempt int // 1 for the first attempt
	Status  int // 0 when no response came (or the attempt was not sent)
	// Err is "" or one of the Class* error classes; never an error's message,
	// which may name the host.
	Err string
	// Wait is the advised wait of the response, -1 when none was usable
	// (for a cooldown refusal: what remained of the shared cooldown).
	Wait       time.Duration
	WaitSource string // as retryafter.Wait.Source: a results.Wait* constant
	// Held is how long the shared cooldown held this attempt before it
	// went.
	Held time.Duration
	// Slept is what the Transport waits after this attempt before the
	// next: the jittered advice or the Backoff for ActionSleep, 0 for the
	// other actions (a redirect goes at once).
	Slept    time.Duration
	Action   Action
	Reason   Reason // in plain words when read (String)
	Fallback bool   // the attempt went (or was meant to go) to the fallback
}

// Attempt is a Decision with what a caller that records each attempt
// itself needs: the response's header and the attempt's times. It is NOT
// safe to log as it is: Header holds whatever the server sent, Err may name
// the host.
type Attempt struct {
	Decision
	// Header is the response's header, nil when no response came. It is
	// the response's own map: read it, do not change it.
	Header http.Header
	// Planned is when the Transport meant to send the attempt: when
	// RoundTrip was called for the first; after the previous attempt's
	// Slept (at once after a redirect) for the others.
	Planned time.Time
	// Sent is when the attempt went, after any hold; zero if it was not
	// sent.
	Sent time.Time
	// Headers is when the response's headers arrived; zero if none did.
	Headers time.Time
	// Body is the start of a refusal's body (a status of Policy.Statuses),
	// at most retryafter.MaxBody bytes, as the Transport read it for the
	// advice it may hold (Gemini's RetryInfo); nil for any other response.
	// Like Header, it holds whatever the server sent.
	Body []byte
	// Done is when the attempt ended: its body drained and closed by the
	// Transport, or its error returned. It is zero when the response is
	// returned to the caller, who reads its body.
	Done time.Time
	// Err is the error that ended the attempt, if any.
	Err error
}

type attemptObserverKey struct{}

// WithAttemptObserver returns a context that makes a Transport call f with
// each attempt of a request sent with it, on the request's goroutine,
// after Policy.Observe and before the next attempt; the last call comes
// before RoundTrip returns.
func WithAttemptObserver(ctx context.Context, f func(Attempt)) context.Context {
	return context.WithValue(ctx, attemptObserverKey{}, f)
}

func attemptObserver(ctx context.Context) func(Attempt) {
	f, _ := ctx.Value(attemptObserverKey{}).(func(Attempt))
	return f
}
