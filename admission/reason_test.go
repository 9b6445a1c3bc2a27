package admission

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// refuseEveryOther answers 429 with retry-after-ms 100 and then 200, in
// turn, without a network: what a Transport decides is all there is to
// measure.
type refuseEveryOther struct{ n int }

func (f *refuseEveryOther) RoundTrip(req *http.Request) (*http.Response, error) {
	f.n++
	resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: req}
	if f.n%2 == 1 {
		resp.StatusCode = 429
		resp.Header.Set("Retry-After-Ms", "100")
		resp.Body = io.NopCloser(strings.NewReader(`{"error":"busy"}`))
	}
	return resp, nil
}

// TestReasonsReadLate: each attempt's Reason, read only after the request
// and the next ones ended, holds its own words, in fmt's verbs as in
// String.
func TestReasonsReadLate(t *testing.T) {
	clock := &jumpClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	var ds []Decision
	p := Policy{MaxAttempts: 3, Budget: time.Minute, Jitter: 0.2, Clock: clock, Rand: func() float64 { return 0.5 },
		Observe: func(d Decision) { ds = append(ds, d) }}
	tr, err := New(&refuseEveryOther{}, p)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		req, _ := http.NewRequest("GET", "http://loopback.invalid/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	want := []string{
		"advised 100ms, jittered to 110ms, fits the 1m0s left of the budget; sleep",
		"status 200 is not a refusal this owner retries; done",
	}
	if len(ds) != 6 {
		t.Fatalf("%d decisions, want 6", len(ds))
	}
	for i, d := range ds {
		if got := d.Reason.String(); got != want[i%2] {
			t.Errorf("decision %d: %q, want %q", i+1, got, want[i%2])
		}
		if s, v := fmt.Sprint(d.Reason), fmt.Sprintf("%+v", d); s != want[i%2] || !strings.Contains(v, "Reason:"+want[i%2]+" ") {
			t.Errorf("decision %d in fmt: %q, %q", i+1, s, v)
		}
	}
	if (Reason{}).String() != "" {
		t.Error("the zero Reason is not empty")
	}
}

// BenchmarkRefusalDecision is a request refused once and then admitted,
// on a Clock that does not wait and a RoundTripper without a network:
// the Transport's own cost, its Reasons unread.
func BenchmarkRefusalDecision(b *testing.B) {
	clock := &jumpClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	tr, err := New(&refuseEveryOther{}, Policy{MaxAttempts: 3, Budget: time.Minute, Jitter: 0.2, Clock: clock})
	if err != nil {
		b.Fatal(err)
	}
	req, _ := http.NewRequest("GET", "http://loopback.invalid/", nil)
	b.ReportAllocs()
	for b.Loop() {
		resp, err := tr.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}
