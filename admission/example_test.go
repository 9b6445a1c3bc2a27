package admission_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
)

// refusingOnce answers 429 with a 20 ms advised wait to its first request
// and 200 to the others.
func refusingOnce() *httptest.Server {
	var n atomic.Int32
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After-Ms", "20")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		fmt.Fprint(w, "ok")
	}))
}

// A client whose Transport owns the retries by the recommended policy: the
// 429 is waited out (20 ms advised, up to 24 ms with the jitter) and the
// request sent again; every attempt is a Decision.
func Example() {
	srv := refusingOnce()
	defer srv.Close()

	p := admission.DefaultPolicy()
	p.Observe = func(d admission.Decision) {
		fmt.Println("attempt", d.Attempt, d.Status, d.WaitSource, d.Action)
	}
	t, err := admission.New(nil, p)
	if err != nil {
		fmt.Println(err)
		return
	}
	client := &http.Client{Transport: t}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body))
	// Output:
	// attempt 1 429 retry-after-ms sleep
	// attempt 2 200 none done
	// 200 ok
}

// The budget rule: the primary deployment advises 45 s, which does not fit
// the 12 s budget, so the request goes to the fallback (a standard
// deployment) at once instead of sleeping.
func ExamplePolicy_budget() {
	primary := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "45")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer primary.Close()
	standard := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "answered by the standard deployment")
	}))
	defer standard.Close()
	standardURL, _ := url.Parse(standard.URL)

	p := admission.DefaultPolicy()
	p.Budget = 12 * time.Second
	p.Fallback = func(r *http.Request) (*http.Request, error) {
		r.URL.Scheme, r.URL.Host, r.Host = standardURL.Scheme, standardURL.Host, ""
		return r, nil
	}
	p.Observe = func(d admission.Decision) {
		fmt.Printf("attempt %d: status %d, advised %v, fallback %v: %s\n", d.Attempt, d.Status, max(d.Wait, 0), d.Fallback, d.Action)
	}
	t, _ := admission.New(nil, p)
	resp, err := (&http.Client{Transport: t}).Get(primary.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(string(body))
	// Output:
	// attempt 1: status 429, advised 45s, fallback false: redirect
	// attempt 2: status 200, advised 0s, fallback true: done
	// answered by the standard deployment
}

// A service in front of the deployment gives up rather than hold its own
// caller for two minutes, and sheds the load upstream with the wait the
// deployment advised.
func ExampleGiveUpError() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()

	p := admission.DefaultPolicy()
	p.MaxWait = time.Minute
	t, _ := admission.New(nil, p)
	_, err := (&http.Client{Transport: t}).Get(srv.URL)

	var g *admission.GiveUpError
	if errors.As(err, &g) {
		fmt.Println("status:", g.LastStatus)
		fmt.Println("attempts:", g.Attempts)
		fmt.Println("reason:", g.Reason)
		// What the service would answer its own caller.
		upstream := http.Header{}
		upstream.Set("Retry-After", strconv.Itoa(int(g.LastWait.Seconds())))
		fmt.Println("503 with Retry-After:", upstream.Get("Retry-After"))
	}
	// Output:
	// status: 429
	// attempts: 1
	// reason: advised 2m0s is over MaxWait 1m0s; no fallback; give up
	// 503 with Retry-After: 120
}

// A caller that records every attempt itself (ptuprobe writes one row per
// attempt) gets each one with the response's header and its times. The
// last attempt's body is the caller's to read, so its Done is zero.
func ExampleWithAttemptObserver() {
	srv := refusingOnce()
	defer srv.Close()

	t, _ := admission.New(nil, admission.DefaultPolicy())
	ctx := admission.WithAttemptObserver(context.Background(), func(a admission.Attempt) {
		fmt.Printf("attempt %d: %d, retry-after-ms %q, sent after planned: %v, body closed: %v\n",
			a.Attempt, a.Status, a.Header.Get("Retry-After-Ms"), !a.Sent.Before(a.Planned), !a.Done.IsZero())
	})
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	resp, err := (&http.Client{Transport: t}).Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	// Output:
	// attempt 1: 429, retry-after-ms "20", sent after planned: true, body closed: true
	// attempt 2: 200, retry-after-ms "", sent after planned: true, body closed: false
}

// ExampleDefaultPolicy is the recommended policy, whose fields a caller
// changes before New: here a tighter latency budget.
func ExampleDefaultPolicy() {
	p := admission.DefaultPolicy()
	p.Budget = 10 * time.Second
	fmt.Println(p.MaxAttempts, p.Budget, p.Jitter)
	// Output:
	// 3 10s 0.2
}

// Two Transports (two services of one process) share their cooldown
// through a MemoryCoordinator, each call to it costing a millisecond, the
// round trip a Redis would: the first is refused with a 2 s advised wait,
// and the second, whose budget is 1 s, gives up at once without sending.
func ExampleMemoryCoordinator() {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Retry-After-Ms", "2000")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()

	shared, err := admission.NewMemoryCoordinator(admission.MemoryOptions{Delay: time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	get := func(budget time.Duration) error {
		p := admission.DefaultPolicy()
		p.SharedCooldown, p.Coordinator, p.MaxAttempts, p.Budget = true, shared, 1, budget
		t, err := admission.New(nil, p)
		if err != nil {
			return err
		}
		resp, err := (&http.Client{Transport: t}).Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	var g *admission.GiveUpError
	err = get(time.Minute)
	fmt.Println("first gave up:", errors.As(err, &g), "status", g.LastStatus, "requests sent:", requests.Load())
	err = get(time.Second)
	fmt.Println("second gave up:", errors.As(err, &g), "requests sent:", requests.Load())
	fmt.Println("calls to the store:", shared.Calls())
	// Output:
	// first gave up: true status 429 requests sent: 1
	// second gave up: true requests sent: 1
	// calls to the store: 3
}
