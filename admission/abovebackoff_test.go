package admission_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
)

// TestMaxAboveBackoff: with FloorAdvice and MaxAboveBackoff the wait is
// the advised wait held between the backoff and the backoff plus the
// bound (the AWS SDKs' 2026 x-amz-retry-after): under the backoff it is
// the backoff, within it the advice, above it the bound. Without the
// bound the advice above is slept whole.
func TestMaxAboveBackoff(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		advised, above, want string
	}{
		{"100", "5s", "500ms"},    // under the 500 ms backoff: the backoff
		{"2000", "5s", "2s"},      // within: the advice
		{"9000", "5s", "5.5s"},    // above: the backoff + 5 s
		{"9000", "0s", "9s"},      // no bound: FloorAdvice alone
		{"5500", "5s", "5.5s"},    // at the bound exactly
		{"5501", "5s", "5.5s"},    // just past it
		{"400", "100ms", "500ms"}, // the floor wins over a bound it cannot reach
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After-Ms", c.advised)
			w.WriteHeader(http.StatusTooManyRequests)
		}))
		above, _ := time.ParseDuration(c.above)
		clock := &stepClock{now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
		tr, err := admission.New(nil, admission.Policy{MaxAttempts: 2, Advice: admission.FloorAdvice,
			Backoff: admission.Exponential(time.Second, 20*time.Second), MaxAboveBackoff: above,
			ReturnLastResponse: true, Clock: clock, Rand: func() float64 { return 0.5 }})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		srv.Close()
		if len(clock.slept) != 1 || clock.slept[0].String() != c.want {
			t.Errorf("advised %s ms, bound %s: slept %v, want [%s]", c.advised, c.above, clock.slept, c.want)
		}
	}
}

// TestMaxAboveBackoffChecked: a negative bound, or one without
// FloorAdvice, is refused by New with the field's name.
func TestMaxAboveBackoffChecked(t *testing.T) {
	t.Parallel()
	for _, p := range []admission.Policy{
		{MaxAttempts: 2, Advice: admission.FloorAdvice, MaxAboveBackoff: -time.Second},
		{MaxAttempts: 2, MaxAboveBackoff: time.Second},
		{MaxAttempts: 2, Advice: admission.IgnoreAdvice, MaxAboveBackoff: time.Second},
	} {
		if _, err := admission.New(nil, p); err == nil || !strings.Contains(err.Error(), "MaxAboveBackoff") {
			t.Errorf("New(%+v) = %v, want an error naming MaxAboveBackoff", p, err)
		}
	}
}
