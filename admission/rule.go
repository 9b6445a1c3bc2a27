package admission

import (
	"net/http"
	"time"
)

// Rule is a user's own retry rule, Policy.Rule: for a refusal the Policy
// would retry after a wait, it returns the wait before the retry (a
// negative one counts as 0), or retry false to retry no more: the
// request redirects to the fallback or gives up by the usual rule. It is
// go-retryablehttp's CheckRetry and Backoff in one, for refusals: unlike
// Backoff, it sees the response. What it chooses is still held to the
// budget (a wait that does not fit goes elsewhere), to MaxAttempts and to
// the Gates, and it is not stretched by Jitter nor moved to a Slot.
// It is called on the request's goroutine: it must be safe for concurrent
// use.
type Rule func(Refusal) (wait time.Duration, retry bool)

// Refusal is what a Rule sees of a refused attempt.
type Refusal struct {
	// Attempt numbers the refused attempt, 1 for the first; Fallback: it
	// went to the fallback.
	Attempt  int
	Fallback bool
	Status   int
	// Header is the response's own header and Body the start of its body
	// (at most retryafter.MaxBody bytes): read them, do not change them.
	// They hold whatever the server sent, so they are not safe to log.
	Header http.Header
	Body   []byte
	// Advised is the advised wait, -1 when none was usable; Source names
	// where it came from (as Decision.WaitSource).
	Advised time.Duration
	Source  string
	// Wait is what the Policy would wait: the advice (jittered, moved to
	// a Slot) or the Backoff, as the Policy says.
	Wait time.Duration
	// Left is what is left of the budget, -1 when there is none.
	Left time.Duration
}

// ruled applies the Policy's Rule to a refusal of attempt a whose wait
// the Policy made wait, with left of the budget (-1: none): the wait to
// use, and false when the Rule declines the retry. why gains what the
// Rule did.
func (r *request) ruled(a *Attempt, wait, left time.Duration, why *words) (time.Duration, bool) {
	rule := r.t.p.Rule
	if rule == nil {
		return wait, true
	}
	chosen, retry := rule(Refusal{Attempt: a.Attempt, Fallback: a.Fallback, Status: a.Status, Header: a.Header, Body: a.Body,
		Advised: a.Wait, Source: a.WaitSource, Wait: wait, Left: left})
	switch {
	case !retry:
		*why = why.say("; the Rule declines the retry")
		return 0, false
	case chosen != wait:
		chosen = max(chosen, 0)
		*why = why.say("; the Rule chose ").show(chosen)
	}
	return chosen, true
}
