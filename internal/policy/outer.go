package policy

import "time"

// Outer is an application's own retry loop around a retry owner: stacked
// owners, as an application that retries an SDK call that retries. It
// calls the owner up to Calls times (0 or 1: once), Delay apart, while
// the call's final answer is a refusal.
type Outer struct {
	Calls int
	Delay time.Duration
}

// Outer is s's application loop: stacked's 4 calls 1 s apart; one call
// for every other built-in.
func (s Spec) Outer() Outer { return Outer{Calls: s.AppAttempts, Delay: s.AppDelay} }

// Run is the loop, the one both the lab's virtual clients and the
// traffic commands' clients run: call n (from 1) reports whether its
// final answer was a refusal to retry; pause waits Delay before the next
// call and reports whether to go on (false: a stop came).
func (o Outer) Run(call func(n int) (again bool), pause func(time.Duration) bool) {
	for n := 1; call(n) && n < o.Calls; n++ {
		if !pause(o.Delay) {
			return
		}
	}
}
