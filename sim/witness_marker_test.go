package sim

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/memnet"
)

// workerFleet plays workers callers that each send calls requests with
// one and the same body, on the runtime clock of a synctest bubble:
// every call retries its 429s after exactly the advised retry-after-ms,
// as a correct client does, numbering its attempts in
// X-Stainless-Retry-Count, and, when marker is set, sending a value of
// its own in that header on every attempt of the call.
func workerFleet(t *testing.T, marker string, workers, calls int) Stats {
	t.Helper()
	var st Stats
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.PTU = 0.6 // D = 10 tokens/s, C = 10: a call (11 tokens) at a time
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ln := memnet.Listen()
		srv := &http.Server{Handler: s}
		go srv.Serve(ln)
		defer srv.Close()
		hc := &http.Client{Transport: &http.Transport{DialContext: ln.DialContext}}
		defer hc.CloseIdleConnections()
		body := chatBody(40, 1)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for c := range calls {
					id := "call-" + strconv.Itoa(w) + "-" + strconv.Itoa(c)
					for attempt := 0; ; attempt++ {
						req, _ := http.NewRequest(http.MethodPost, "http://sim.invalid"+azurePath, strings.NewReader(body))
						req.Header.Set("api-key", "k1")
						req.Header.Set(sdkRetryHeader, strconv.Itoa(attempt))
						if marker != "" {
							req.Header.Set(marker, id)
						}
						resp, err := hc.Do(req)
						if err != nil {
							t.Error(err)
							return
						}
						resp.Body.Close()
						if resp.StatusCode != http.StatusTooManyRequests {
							break
						}
						ms, _ := strconv.Atoi(resp.Header.Get("Retry-After-Ms"))
						time.Sleep(time.Duration(ms) * time.Millisecond)
					}
				}
			})
		}
		wg.Wait()
		st = s.Stats()
	})
	return st
}

// TestWitnessTellsMarkedCallsApart: eight workers send the same body,
// each call retried after exactly its advised wait. Marked by
// Idempotency-Key or x-ms-client-request-id, no retry is early, every
// comeback is a marked retry of its own call and none is undeclared;
// unmarked, the same correct fleet is judged by its body alone, and the
// body cannot tell one worker's call from another's.
func TestWitnessTellsMarkedCallsApart(t *testing.T) {
	t.Parallel()
	const workers, calls = 8, 5
	for _, marker := range []string{"Idempotency-Key", "X-Ms-Client-Request-Id"} {
		t.Run(marker, func(t *testing.T) {
			t.Parallel()
			st := workerFleet(t, marker, workers, calls)
			if st.Admitted != workers*calls {
				t.Fatalf("admitted %d, want %d", st.Admitted, workers*calls)
			}
			if st.Refused == 0 || st.EarlyReturns != 0 || st.RetriesOnTime != st.Refused {
				t.Errorf("refused %d, early %d, on time %d: want every refusal answered on time", st.Refused, st.EarlyReturns, st.RetriesOnTime)
			}
			if st.MarkedRetries != st.RetriesOnTime || st.UndeclaredRetries != 0 || st.Retries != st.Refused || st.AdvisedWaitsPending != 0 {
				t.Errorf("marked %d, undeclared %d, retries %d, pending %d: want %d, 0, %d, 0",
					st.MarkedRetries, st.UndeclaredRetries, st.Retries, st.AdvisedWaitsPending, st.RetriesOnTime, st.Refused)
			}
		})
	}
	t.Run("unmarked", func(t *testing.T) {
		t.Parallel()
		st := workerFleet(t, "", workers, calls)
		// The limit a marker lifts: one worker's first attempt reads as
		// another's early comeback.
		if st.EarlyReturns == 0 || st.MarkedRetries != 0 {
			t.Errorf("early %d, marked %d: want the body's ambiguity, and no marked retry", st.EarlyReturns, st.MarkedRetries)
		}
	})
}

// TestWitnessCountsHerdAndBudget: a retry 2 ms after its deadline and
// the next one 1.5 s after its own are not in step; the second, later
// than WitnessBudget after its refusal, counts over budget; an
// unanswered refusal stays pending.
func TestWitnessCountsHerdAndBudget(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.WitnessBudget = 2 * time.Second
	s, clk, ts := newSim(t, cfg)
	refuse := func(body string) {
		t.Helper()
		if resp, _ := post(t, ts.URL, azurePath, chatBody(8000, 1)); resp.StatusCode != 200 {
			t.Fatalf("filler: %d", resp.StatusCode)
		}
		if resp, _ := post(t, ts.URL, azurePath, body); resp.StatusCode != 429 {
			t.Fatalf("want a 429, got %d", resp.StatusCode)
		}
	}
	refuse(chatBody(41, 1))                     // level 2,001: waits 1,001 ms
	clk.Advance(1003 * time.Millisecond)        // 2 ms after the deadline
	post(t, ts.URL, azurePath, chatBody(41, 1)) // at the deadline, admitted
	clk.Advance(time.Hour)                      // drained
	refuse(chatBody(42, 1))                     // waits 1,001 ms
	clk.Advance(2500 * time.Millisecond)        // past the budget
	post(t, ts.URL, azurePath, chatBody(42, 1)) // on time, over budget
	clk.Advance(time.Hour)                      // drained
	refuse(chatBody(43, 1))                     // never comes back
	st := s.Stats()
	if st.RetriesOnTime != 2 || st.HerdCompared != 1 || st.HerdInStep != 0 || st.OverBudget != 1 || st.AdvisedWaitsPending != 1 {
		t.Errorf("on time %d, compared %d, in step %d, over budget %d, pending %d; want 2, 1, 0, 1, 1",
			st.RetriesOnTime, st.HerdCompared, st.HerdInStep, st.OverBudget, st.AdvisedWaitsPending)
	}
}
