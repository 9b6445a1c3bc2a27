package admission_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
)

// breaker is a Gate of one's own: a circuit breaker that opens after two
// refusals in a row and refuses every attempt locally until an answer
// that is no refusal would close it. A new algorithm is one such type.
type breaker struct {
	mu     sync.Mutex
	streak int
}

func (b *breaker) Admit(admission.Ask) admission.Admission {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.streak >= 2 {
		return admission.Admission{Refused: true, Why: "the breaker is open after " + strconv.Itoa(b.streak) + " refusals in a row", By: "the breaker"}
	}
	return admission.Admission{}
}

func (b *breaker) Retry(admission.Ask) (bool, string) { return true, "" }

func (b *breaker) Learn(a admission.Answer) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !a.Refused {
		b.streak = 0
		return ""
	}
	b.streak++
	return "; the breaker counts " + strconv.Itoa(b.streak)
}

// A Gate of one's own in Policy.Gates: the breaker lets two refused
// attempts go and refuses the third locally (Decision.Err ClassGated), so
// the request gives up without sending it.
func ExampleGate() {
	srv := refusingAll()
	defer srv.Close()

	p := admission.Policy{MaxAttempts: 5, Gates: []admission.Gate{&breaker{}}}
	p.Observe = func(d admission.Decision) {
		if d.Err != "" {
			fmt.Println("attempt", d.Attempt, "not sent:", d.Err, d.Action)
			return
		}
		fmt.Println("attempt", d.Attempt, d.Status, d.Action)
	}
	t, err := admission.New(nil, p)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = (&http.Client{Transport: t}).Get(srv.URL)
	var gaveUp *admission.GiveUpError
	fmt.Println(errors.As(err, &gaveUp))
	// Output:
	// attempt 1 429 sleep
	// attempt 2 429 sleep
	// attempt 3 not sent: gated give-up
	// true
}

// A rule of one's own without a release: Policy.Rule sees each refusal
// with its response. This one honours the OpenAI SDKs' x-should-retry:
// false, and otherwise waits what a custom header says where the server
// gives no standard advice (the Policy alone would back off).
func ExampleRule() {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			w.Header().Set("X-Gateway-Wait-Ms", "30")
			w.WriteHeader(http.StatusTooManyRequests)
		case 2:
			w.Header().Set("X-Should-Retry", "false")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			fmt.Fprint(w, "ok")
		}
	}))
	defer srv.Close()

	p := admission.DefaultPolicy()
	p.Rule = func(r admission.Refusal) (time.Duration, bool) {
		if r.Header.Get("X-Should-Retry") == "false" {
			return 0, false
		}
		if ms, err := strconv.Atoi(r.Header.Get("X-Gateway-Wait-Ms")); err == nil && r.Advised < 0 {
			return time.Duration(ms) * time.Millisecond, true
		}
		return r.Wait, true
	}
	p.Observe = func(d admission.Decision) { fmt.Println("attempt", d.Attempt, d.Status, d.Action, d.Slept) }
	t, _ := admission.New(nil, p)
	_, err := (&http.Client{Transport: t}).Get(srv.URL)
	var gaveUp *admission.GiveUpError
	fmt.Println(errors.As(err, &gaveUp))
	// Output:
	// attempt 1 429 sleep 30ms
	// attempt 2 429 give-up 0s
	// true
}
