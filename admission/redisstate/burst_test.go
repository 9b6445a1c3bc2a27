package redisstate

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/internal/redisserver"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
)

// skewed is the runtime clock moved by an offset: the clock of a process
// on another host, which NTP keeps some milliseconds from the others.
type skewed time.Duration

func (s skewed) Now() time.Time { return time.Now().Add(time.Duration(s)) }

func (s skewed) Sleep(ctx context.Context, d time.Duration) error { return sleep.For(ctx, d) }

// together refuses a burst of n together: each of its first n requests
// waits until all n have come, then all are refused advising 50 ms, the
// one with Key 0 first, the others once first is closed.
func together(n int64, first <-chan struct{}) http.Handler {
	var seen atomic.Int64
	all := make(chan struct{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen.Add(1) == n {
			close(all)
		}
		for _, ch := range []<-chan struct{}{all, first} {
			select {
			case <-ch:
			case <-r.Context().Done():
				return
			}
			if r.Header.Get("Key") == "0" {
				break
			}
		}
		w.Header().Set("Retry-After-Ms", "50")
		w.WriteHeader(http.StatusTooManyRequests)
	})
}

// TestBurstCutsTheSharedPaceOnce: 16 Transports — 16 processes, each
// with a Pace of its own — share one pace through a Coordinator, in
// memory and in Redis. They send a burst together and it is refused
// together: one congestion event, so the shared rate is cut once, not
// 16 times (0.75^16 of it, 1%). So it must be when their clocks disagree
// by more than a refusal takes to come back (here 100 ms apart, and the
// one whose clock is behind all others' is answered first): the others'
// refusals then come "after" its cut by their clocks, and only the count
// of cuts their slots were taken under tells that they were sent before
// it.
func TestBurstCutsTheSharedPaceOnce(t *testing.T) {
	t.Parallel()
	skews := []time.Duration{0, 100 * time.Millisecond}
	t.Run("memory", func(t *testing.T) {
		t.Parallel()
		for _, skew := range skews {
			mem, err := admission.NewMemoryCoordinator(admission.MemoryOptions{})
			if err != nil {
				t.Fatal(err)
			}
			burst(t, skew, func() admission.Coordinator { return mem }) // one store, as one Redis
		}
	})
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		srv := redisserver.Start(t)
		for _, skew := range skews {
			name := fmt.Sprint("burst, clocks apart by ", skew)
			burst(t, skew, func() admission.Coordinator { return open(t, srv, Options{Deployment: name, CallTimeout: heard}) })
		}
	})
}

// burst sends 16 requests together, each from a Transport of its own
// with a Pace of its own through a Coordinator of coordinator's (on one
// state), on clocks skew apart, to a server that refuses them together,
// and checks that the shared rate was cut once.
func burst(t *testing.T, skew time.Duration, coordinator func() admission.Coordinator) {
	t.Helper()
	const n = 16
	first := make(chan struct{})
	ts := httptest.NewServer(together(n, first))
	defer ts.Close()
	var wg sync.WaitGroup
	var sent atomic.Int64
	var once sync.Once
	for i := range n {
		pace, err := admission.NewPace(admission.DefaultPaceConfig())
		if err != nil {
			t.Fatal(err)
		}
		p := admission.DefaultPolicy()
		p.Pace, p.Coordinator, p.MaxAttempts = pace, coordinator(), 1
		p.Clock = skewed(time.Duration(i) * skew)
		p.Observe = func(d admission.Decision) {
			if d.Status != 0 {
				sent.Add(1)
			}
			if i == 0 { // its refusal has been stepped: the rest may come
				once.Do(func() { close(first) })
			}
		}
		tr, err := admission.New(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL, nil)
			req.Header.Set("Key", strconv.Itoa(i))
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
				t.Error("a request of the burst was not refused")
			}
		})
	}
	wg.Wait()
	// A reserve an hour ago with that as its deadline takes no slot and
	// answers the count of cuts.
	ago := time.Now().Add(-time.Hour)
	probe := admission.PaceStep{Op: admission.PaceReserve, Now: ago, Deadline: ago, Config: admission.DefaultPaceConfig()}
	r, err := coordinator().Pace(context.Background(), probe)
	if err != nil {
		t.Fatal(err)
	}
	if sent.Load() != n || r.Gen != 1 {
		t.Errorf("clocks %v apart: %d of %d sent and refused together, the shared rate cut %d times; want once", skew, sent.Load(), n, r.Gen)
	}
}
