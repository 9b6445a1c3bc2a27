package sim

import (
	"strconv"
	"testing"
	"time"
)

// TestNeighbourMakesLongWaits: the neighbour's batch lands at its time
// and every refusal until it drains advises what is left of it; once it
// has drained the deployment admits again, until the next batch.
func TestNeighbourMakesLongWaits(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.SetNeighbour(Neighbour{First: time.Second, Every: 10 * time.Second, Min: 5 * time.Second, Max: 5 * time.Second})
	s, clk, ts := newSim(t, cfg)
	call := func(at time.Duration) (int, int64) {
		t.Helper()
		clk.Set(t0.Add(at))
		resp, _ := post(t, ts.URL, azurePath, chatBody(40, 10))
		ms, _ := strconv.ParseInt(resp.Header.Get("Retry-After-Ms"), 10, 64)
		return resp.StatusCode, ms
	}
	// D = C = 1,000 tokens: a batch of 5 s is 5,000 tokens, 4 s over 100%
	// when it lands on an empty bucket.
	for _, tc := range []struct {
		at            time.Duration
		status        int
		minMS, maxMS  int64
		batchesByThen uint64
	}{
		{0, 200, 0, 0, 0},
		{1500 * time.Millisecond, 429, 3500, 3510, 1},
		{5 * time.Second, 200, 0, 0, 1},
		{11500 * time.Millisecond, 429, 3500, 3510, 2},
	} {
		status, ms := call(tc.at)
		if status != tc.status || ms < tc.minMS || ms > tc.maxMS {
			t.Errorf("at %v: %d advising %d ms, want %d advising %d..%d", tc.at, status, ms, tc.status, tc.minMS, tc.maxMS)
		}
		if st := s.Stats(); st.NeighbourBatches != tc.batchesByThen {
			t.Errorf("at %v: %d batches, want %d", tc.at, st.NeighbourBatches, tc.batchesByThen)
		}
	}
}

// TestNeighbourSettings: a neighbour is refused with no batch, with a
// negative first batch, batches over an hour, or off the PTU profile.
func TestNeighbourSettings(t *testing.T) {
	t.Parallel()
	for _, n := range []Neighbour{
		{Every: time.Second},
		{Every: time.Second, Min: 2 * time.Second, Max: time.Second},
		{Every: time.Second, First: -time.Second, Min: time.Second, Max: time.Second},
		{Every: time.Second, Min: time.Second, Max: 2 * time.Hour},
	} {
		cfg := testConfig()
		cfg.SetNeighbour(n)
		if err := cfg.Validate(); err == nil {
			t.Errorf("%+v accepted", n)
		}
	}
	cfg := testConfig()
	cfg.Profile = ProfileGateway
	cfg.SetNeighbour(Neighbour{Every: time.Second, Min: time.Second, Max: time.Second})
	if err := cfg.Validate(); err == nil {
		t.Error("a neighbour on the gateway accepted")
	}
}

// TestWitnessFollowsACallsRefusals: the witness counts the waited
// retries of one call in a row (MaxCallRetries) and the calls that show
// two retry owners interleaved (MixedCalls), per client shape, each the
// retries of one call against a neighbour's batch that refuses it
// throughout (an hour) or for its first second (2 s): one owner whose
// backoff is 0, 1, 2 s (urllib3's Retry(total=3, backoff_factor=0.5)),
// one with 6 retries (LangChain JS: p-retry's 1 s doubling, ×[1, 2]) and
// with 10 (azure-core for Python: 0.8 s doubling, ±20%), one that waits
// out its advice; two nested: a gateway that repeats at once what an SDK
// waited out, and a gateway's bursts (70 ms apart) between an SDK's own
// 0.5 s backoff. Retries back at once do not count as waited, nor does a
// first visit.
func TestWitnessFollowsACallsRefusals(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	s := time.Second
	// after are the arrivals of one call's attempts: the first at 0,
	// each retry its wait (and 10 ms of round trip) after the one before.
	after := func(waits ...time.Duration) []time.Duration {
		at := []time.Duration{0}
		for _, w := range waits {
			at = append(at, at[len(at)-1]+10*ms+w)
		}
		return at
	}
	for _, tc := range []struct {
		name       string
		batch      time.Duration // lands at 0: refused for batch − 1 s
		at         []time.Duration
		maxRetries uint64
		mixed      uint64
	}{
		{"waited three times", time.Hour, []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second}, 3, 0},
		{"at once, never waited", time.Hour, []time.Duration{0, 10 * ms, 20 * ms, 30 * ms}, 0, 0},
		{"at once, then on time", 2 * time.Second, []time.Duration{0, 10 * ms, 1100 * ms}, 1, 0},
		{"early after a backoff, then on time", 2 * time.Second, []time.Duration{0, 500 * ms, 1100 * ms}, 2, 0},
		{"urllib3 0, 1, 2 s, early", time.Hour, after(0, s, 2*s), 2, 0},
		{"urllib3 0, 1, 2 s, then on time", 2 * time.Second, after(0, s, 2*s), 1, 0},
		{"LangChain JS, 6 retries", time.Hour, after(1500*ms, 2100*ms, 7900*ms, 8100*ms, 31*s, 33*s), 6, 0},
		{"azure-core, 10 retries", time.Hour, after(700*ms, 1500*ms, 3600*ms, 5800*ms, 13*s, 24*s, 53*s, 110*s, 120*s, 120*s), 10, 0},
		{"nested: at once after a wait", time.Hour, after(0, 0, 600*ms, 0), 1, 1},
		{"nested: bursts between backoffs", time.Hour, after(60*ms, 60*ms, 60*ms, 500*ms, 60*ms, 60*ms), 6, 1},
		{"nested: at once and bursts, counted once", time.Hour, after(60*ms, 500*ms, 60*ms, 500*ms, 0, 60*ms), 5, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig()
			cfg.SetNeighbour(Neighbour{Every: 24 * time.Hour, Min: tc.batch, Max: tc.batch})
			s, clk, ts := newSim(t, cfg)
			for _, at := range tc.at {
				clk.Set(t0.Add(at))
				post(t, ts.URL, azurePath, chatBody(40, 10))
			}
			if st := s.Stats(); st.MaxCallRetries != tc.maxRetries || st.MixedCalls != tc.mixed {
				t.Errorf("max call retries %d, mixed calls %d; want %d, %d (%+v)", st.MaxCallRetries, st.MixedCalls, tc.maxRetries, tc.mixed, st)
			}
		})
	}
}

// TestEarlyPastTheBudgetIsBoth: a retry back later than its budget and
// before its advice counts as early and as over budget: it broke both.
func TestEarlyPastTheBudgetIsBoth(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.WitnessBudget = 2 * time.Second
	cfg.SetNeighbour(Neighbour{Every: 24 * time.Hour, Min: time.Hour, Max: time.Hour})
	s, clk, ts := newSim(t, cfg)
	for _, at := range []time.Duration{0, 3 * time.Second} {
		clk.Set(t0.Add(at))
		post(t, ts.URL, azurePath, chatBody(40, 10))
	}
	if st := s.Stats(); st.EarlyReturns != 1 || st.OverBudget != 1 {
		t.Errorf("early %d, over budget %d; want 1, 1", st.EarlyReturns, st.OverBudget)
	}
}
