package admission_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
)

// refusingAll answers every request 429, advising 1 ms.
func refusingAll() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After-Ms", "1")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
}

// A client whose backend refuses everything: its throttling sends the
// first two requests (p = 0, then 1/2, which a draw of 0.5 passes) and
// rejects the rest locally, p = n/(n+1), while nothing is accepted.
func ExampleThrottle() {
	srv := refusingAll()
	defer srv.Close()

	th, err := admission.NewThrottle(admission.DefaultThrottleConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	p := admission.Policy{Throttle: th, Rand: func() float64 { return 0.5 }}
	p.Observe = func(d admission.Decision) {
		if d.Err == admission.ClassThrottled {
			fmt.Println("not sent: throttled")
			return
		}
		fmt.Println("sent:", d.Status)
	}
	t, _ := admission.New(nil, p)
	for range 4 {
		if resp, err := (&http.Client{Transport: t}).Get(srv.URL); err == nil {
			resp.Body.Close()
		}
	}
	requests, accepts := th.Counts(time.Now())
	fmt.Println(requests, "requests,", accepts, "accepts")
	// Output:
	// sent: 429
	// sent: 429
	// not sent: throttled
	// not sent: throttled
	// 4 requests, 0 accepts
}

// A retry quota of 10 tokens, two retries' worth: the first request
// spends them, the next is sent once and gives up with its refusal.
func ExampleRetryQuota() {
	srv := refusingAll()
	defer srv.Close()

	cfg := admission.StandardRetryQuota()
	cfg.Capacity = 10
	q, err := admission.NewRetryQuota(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	p := admission.DefaultPolicy()
	p.RetryQuota, p.ReturnLastResponse = q, true
	attempts := 0
	p.Observe = func(admission.Decision) { attempts++ }
	t, _ := admission.New(nil, p)
	for i := range 2 {
		attempts = 0
		resp, err := (&http.Client{Transport: t}).Get(srv.URL)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Printf("request %d: attempts %d, status %d, %v tokens left\n", i+1, attempts, resp.StatusCode, q.Tokens())
	}
	// Output:
	// request 1: attempts 3, status 429, 0 tokens left
	// request 2: attempts 1, status 429, 0 tokens left
}

// An Adaptive limiter does nothing until its client's first throttle,
// then sends every attempt through its token bucket.
func ExampleAdaptive() {
	srv := refusingAll()
	defer srv.Close()

	a, err := admission.NewAdaptive(admission.DefaultAdaptiveConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	t, _ := admission.New(nil, admission.Policy{Adaptive: a})
	fmt.Println("limiting before:", a.Rate() > 0)
	if resp, err := (&http.Client{Transport: t}).Get(srv.URL); err == nil {
		resp.Body.Close()
	}
	fmt.Println("limiting after a throttle:", a.Rate() > 0)
	// Output:
	// limiting before: false
	// limiting after a throttle: true
}

// Decorrelated jitter's waits, at a draw of 0.5 each: U[base, 3 × the
// previous wait), at most the cap.
func ExampleDecorrelated() {
	backoff := admission.Decorrelated(100*time.Millisecond, time.Second)
	wait := time.Duration(0)
	for retry := 1; retry <= 5; retry++ {
		wait = backoff(retry, wait, func() float64 { return 0.5 })
		fmt.Println(retry, wait)
	}
	// Output:
	// 1 200ms
	// 2 350ms
	// 3 575ms
	// 4 912.5ms
	// 5 1s
}

// A Pace with a utilization target starts pacing on an admitted answer
// that reports the deployment at 95%, before any refusal: its rate is cut
// by 90/95 from what it was sending.
func ExamplePaceConfig_utilization() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Azure-Openai-Deployment-Utilization", "95.0%")
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()

	cfg := admission.DefaultPaceConfig()
	cfg.Utilization = admission.DefaultPaceUtilization
	pace, err := admission.NewPace(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	p := admission.DefaultPolicy()
	p.Pace = pace
	t, _ := admission.New(nil, p)
	resp, err := (&http.Client{Transport: t}).Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Printf("status %d, pacing at %.3f requests/s\n", resp.StatusCode, pace.Rate())
	// Output:
	// status 200, pacing at 0.947 requests/s
}

// stepClock is a Clock whose sleeps pass at once and are written down.
type stepClock struct {
	now   time.Time
	slept []time.Duration
}

func (c *stepClock) Now() time.Time { return c.now }

func (c *stepClock) Sleep(_ context.Context, d time.Duration) error {
	c.now = c.now.Add(d)
	c.slept = append(c.slept, d)
	return nil
}

// The AWS SDKs' standard retry mode since its 2026 update, against a
// server that advises 10 s: three attempts, the 500-token quota, a
// throttle's full-jitter backoff from 1 s (cap 20 s), and the advised
// wait honoured between that backoff and 5 s above it. At a draw of 0.5
// the backoffs are 500 ms and 1 s, so the 10 s advised is cut to 5.5 s
// and 6 s.
func ExamplePolicy_maxAboveBackoff() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After-Ms", "10000")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()

	q, _ := admission.NewRetryQuota(admission.StandardRetryQuota())
	clock := &stepClock{now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	t, err := admission.New(nil, admission.Policy{
		MaxAttempts:        3,
		Advice:             admission.FloorAdvice,
		Backoff:            admission.Exponential(time.Second, 20*time.Second),
		MaxAboveBackoff:    5 * time.Second,
		RetryQuota:         q,
		ReturnLastResponse: true,
		Clock:              clock,
		Rand:               func() float64 { return 0.5 },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := (&http.Client{Transport: t}).Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println("status", resp.StatusCode, "after waits", clock.slept, "with", q.Tokens(), "tokens left")
	// Output:
	// status 429 after waits [5.5s 6s] with 490 tokens left
}
