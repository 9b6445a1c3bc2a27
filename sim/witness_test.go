package sim

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/memnet"
)

const standardPath = "/openai/deployments/sim-standard/chat/completions?api-version=2024-10-21"

// advisedMS reads the wait a 429 advises, as a client reads it.
func advisedMS(t *testing.T, resp *http.Response) int64 {
	t.Helper()
	ms, err := strconv.ParseInt(resp.Header.Get("Retry-After-Ms"), 10, 64)
	if resp.StatusCode != http.StatusTooManyRequests || err != nil {
		t.Fatalf("status %d, retry-after-ms %q: want a 429 that advises a wait", resp.StatusCode, resp.Header.Get("Retry-After-Ms"))
	}
	return ms
}

// wallToModel is how much the model clock moves while a client waits ms
// of wall time at scale: what a ManualClock test advances to play it.
func wallToModel(ms int64, scale float64) time.Duration {
	return time.Duration(float64(ms) * float64(time.Millisecond) * scale)
}

// keyStats is the one key's counters, failing when the key is missing.
func keyStats(t *testing.T, s *Server, key string) KeyStats {
	t.Helper()
	for _, k := range s.Stats().Keys {
		if k.Key == key {
			return k
		}
	}
	t.Fatalf("no %s in stats", key)
	return KeyStats{}
}

// TestWitnessJudgesEachRetry plays one client behaviour per case, round
// after round: a filler request sends the deployment over 100%, the
// client's own request is refused, and the client comes back as the case
// says. A client that waits exactly what the header advises is on time,
// whatever the rounding and the TimeScale; one that comes back sooner
// is early; a fresh body, another key or another deployment is not a
// retry at all.
func TestWitnessJudgesEachRetry(t *testing.T) {
	t.Parallel()
	const rounds = 5
	tests := []struct {
		name  string
		ptu   float64 // 0.6: D = 10 tokens/s, waits in whole ms; 0.7: fractions of a ms
		scale float64
		// How the client comes back: after share × the header's wait less
		// short (wall time), with the same body unless fresh, from key
		// "k2" if otherKey, to the standard deployment if redirect.
		share                     float64
		short                     time.Duration
		fresh, otherKey, redirect bool

		wantStatus            int
		wantEarly, wantOnTime uint64
	}{
		{name: "waits exactly the advised wait", ptu: 0.6, scale: 1, share: 1, wantStatus: 200, wantOnTime: rounds},
		{name: "waits the advised wait, rounded up", ptu: 0.7, scale: 1, share: 1, wantStatus: 200, wantOnTime: rounds},
		{name: "waits the advised wait at TimeScale 20", ptu: 0.7, scale: 20, share: 1, wantStatus: 200, wantOnTime: rounds},
		{name: "waits the advised wait at TimeScale 7.3", ptu: 0.7, scale: 7.3, share: 1, wantStatus: 200, wantOnTime: rounds},
		{name: "one ms short", ptu: 0.6, scale: 1, share: 1, short: time.Millisecond, wantStatus: 429, wantEarly: rounds},
		{name: "one ms short at TimeScale 20", ptu: 0.7, scale: 20, share: 1, short: time.Millisecond, wantStatus: 429, wantEarly: rounds},
		{name: "half the wait", ptu: 0.7, scale: 1, share: 0.5, wantStatus: 429, wantEarly: rounds},
		{name: "half the wait at TimeScale 20", ptu: 0.7, scale: 20, share: 0.5, wantStatus: 429, wantEarly: rounds},
		{name: "at once", ptu: 0.7, scale: 1, wantStatus: 429, wantEarly: rounds},
		{name: "a fresh body at once", ptu: 0.7, scale: 1, fresh: true, wantStatus: 429},
		{name: "the same body from another key at once", ptu: 0.7, scale: 1, otherKey: true, wantStatus: 429},
		{name: "the same body redirected to the standard deployment at once", ptu: 0.7, scale: 1, redirect: true, wantStatus: 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig()
			cfg.PTU = tc.ptu
			cfg.TimeScale = tc.scale
			cfg.SpilloverDeployment = "sim-standard"
			cfg.SpilloverPerRequest = true // no automatic spillover: PTU refusals stay 429s
			s, clk, ts := newSim(t, cfg)
			key := []string{"api-key", "k1"}
			for i := range rounds {
				clk.Advance(time.Hour) // drained: every round starts alike
				// ~100 tokens more each round, so the advised waits differ.
				post(t, ts.URL, azurePath, chatBody(req100+4*i, 1), "api-key", "filler")
				mine := chatBody(40+i, 1)
				resp, _ := post(t, ts.URL, azurePath, mine, key...)
				ms := advisedMS(t, resp)
				clk.Advance(time.Duration(tc.share*float64(wallToModel(ms, tc.scale))) - time.Duration(float64(tc.short)*tc.scale))
				path, body, hdr := azurePath, mine, key
				if tc.fresh {
					body = chatBody(1000+i, 1)
				}
				if tc.otherKey {
					hdr = []string{"api-key", "k2"}
				}
				if tc.redirect {
					path = standardPath
				}
				if resp, _ := post(t, ts.URL, path, body, hdr...); resp.StatusCode != tc.wantStatus {
					t.Fatalf("round %d: advised %d ms; the client's return got %d, want %d", i, ms, resp.StatusCode, tc.wantStatus)
				}
			}
			st := s.Stats()
			k := keyStats(t, s, "key-1") // key-0 is the filler's
			if st.EarlyReturns != tc.wantEarly || st.RetriesOnTime != tc.wantOnTime || k.EarlyReturns != tc.wantEarly || k.RetriesOnTime != tc.wantOnTime {
				t.Errorf("early %d, on time %d (key-1: %d, %d); want %d early, %d on time",
					st.EarlyReturns, st.RetriesOnTime, k.EarlyReturns, k.RetriesOnTime, tc.wantEarly, tc.wantOnTime)
			}
			if st.SDKRetries != 0 || st.AdvisedWaitsEvicted != 0 {
				t.Errorf("sdk retries %d, evicted %d; want 0", st.SDKRetries, st.AdvisedWaitsEvicted)
			}
		})
	}
}

// TestWitnessOnTheRuntimeClock plays an honouring client against the
// default clock inside a synctest bubble, over an in-memory network: the
// client sleeps exactly what retry-after-ms says, the wall time the
// server converted its wait to; the server converts back to model time
// at TimeScale. Every retry is on time and admitted; one that comes back
// a millisecond sooner is early.
func TestWitnessOnTheRuntimeClock(t *testing.T) {
	t.Parallel()
	for _, scale := range []float64{1, 20, 7.3} {
		for _, short := range []time.Duration{0, time.Millisecond} {
			t.Run(strconv.FormatFloat(scale, 'g', -1, 64)+"/short "+short.String(), func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					cfg := testConfig()
					cfg.PTU = 0.7
					cfg.TimeScale = scale
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
					send := func(body string) *http.Response {
						req, _ := http.NewRequest(http.MethodPost, "http://sim.invalid"+azurePath, strings.NewReader(body))
						req.Header.Set("api-key", "k1")
						resp, err := hc.Do(req)
						if err != nil {
							t.Fatal(err)
						}
						resp.Body.Close()
						return resp
					}
					const rounds = 5
					for i := range rounds {
						time.Sleep(time.Hour) // drained
						send(chatBody(req100+4*i, 1))
						mine := chatBody(40+i, 1)
						ms := advisedMS(t, send(mine))
						time.Sleep(time.Duration(ms)*time.Millisecond - short)
						want := 200
						if short > 0 {
							want = 429
						}
						if resp := send(mine); resp.StatusCode != want {
							t.Fatalf("round %d: advised %d ms, retry got %d, want %d", i, ms, resp.StatusCode, want)
						}
					}
					st := s.Stats()
					early, onTime := uint64(0), uint64(rounds)
					if short > 0 {
						early, onTime = rounds, 0
					}
					if st.EarlyReturns != early || st.RetriesOnTime != onTime {
						t.Errorf("early %d, on time %d; want %d, %d", st.EarlyReturns, st.RetriesOnTime, early, onTime)
					}
				})
			})
		}
	}
}

// TestWitnessJudgesByArrival: a retry that arrives early is early even
// when a slow fault holds it until after its deadline before the model
// sees it.
func TestWitnessJudgesByArrival(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.PTU = 0.06 // D = 1 token/s, C = 1
	cfg.FaultRate = 1
	cfg.Faults = []string{FaultSlow}
	cfg.SlowDelay = 10 * time.Second
	s, clk, ts := newSim(t, cfg)
	through := func(body string) *http.Response {
		t.Helper()
		got := make(chan *http.Response, 1)
		go func() {
			resp, _, err := do(ts.URL, azurePath, body)
			if err != nil {
				t.Error(err)
			}
			got <- resp
		}()
		waitSleepers(t, clk, 1)
		clk.Advance(cfg.SlowDelay)
		return <-got
	}
	through(chatBody(req100, 1)) // level 100
	mine := chatBody(40, 1)
	ms := advisedMS(t, through(mine))               // seen at +10 s: level 90, advised 89 s
	clk.Advance(wallToModel(ms, 1) - 5*time.Second) // arrives 5 s early, seen 5 s late
	if resp := through(mine); resp.StatusCode != 200 {
		t.Fatalf("the model saw the retry after its deadline; status %d, want 200", resp.StatusCode)
	}
	if st := s.Stats(); st.EarlyReturns != 1 || st.RetriesOnTime != 0 {
		t.Errorf("early %d, on time %d; want 1 early", st.EarlyReturns, st.RetriesOnTime)
	}
}

// TestWitnessOtherRefusals: a gateway refusal is remembered only when it
// carries retry-after, and then for the whole seconds it advises; a 429
// from a full spillover deployment is remembered with its retry-after-ms.
func TestWitnessOtherRefusals(t *testing.T) {
	t.Parallel()
	gateway := func(retryAfter bool) Config {
		cfg := gatewayConfig()
		cfg.GatewayKeyRPS = 1
		cfg.GatewayRetryAfter = retryAfter
		return cfg
	}
	spill := testConfig()
	spill.PTU = 0.6
	spill.SpilloverDeployment = "sim-standard"
	spill.StandardRPM = 60 // 1 per second
	spill.StandardTPM = 1_000_000
	tests := []struct {
		name                  string
		cfg                   Config
		path, body            string
		header                string        // that advises the wait
		first                 time.Duration // when the client comes back first; then it waits what that return was advised
		wantEarly, wantOnTime uint64
	}{
		{"gateway with retry-after, back at once", gateway(true), "/v1/messages", msgBody(10), "Retry-After", 0, 1, 1},
		{"gateway with retry-after, back after 400 ms", gateway(true), "/v1/messages", msgBody(10), "Retry-After", 400 * time.Millisecond, 1, 1},
		{"gateway without retry-after advises nothing", gateway(false), "/v1/messages", msgBody(10), "", 0, 0, 0},
		{"spillover full, back at once", spill, azurePath, chatBody(req100, 1), "Retry-After-Ms", 0, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, clk, ts := newSim(t, tc.cfg)
			key := []string{"x-api-key", "k1"}
			post(t, ts.URL, tc.path, tc.body, key...) // fills the key's second (or the PTU)
			if tc.cfg.SpilloverDeployment != "" {
				post(t, ts.URL, tc.path, tc.body+" ", key...) // fills the standard deployment's second
			}
			mine := tc.body + "  "
			resp, _ := post(t, ts.URL, tc.path, mine, key...)
			if resp.StatusCode != 429 {
				t.Fatalf("status %d, want 429", resp.StatusCode)
			}
			clk.Advance(tc.first)
			if resp, _ = post(t, ts.URL, tc.path, mine, key...); resp.StatusCode != 429 {
				t.Fatalf("back after %v: status %d, want 429", tc.first, resp.StatusCode)
			}
			if tc.header != "" {
				// The return was refused again, and advised anew.
				v, err := strconv.ParseInt(resp.Header.Get(tc.header), 10, 64)
				if err != nil {
					t.Fatalf("%s %q", tc.header, resp.Header.Get(tc.header))
				}
				if tc.header == "Retry-After" {
					v *= 1000
				}
				clk.Advance(wallToModel(v, 1))
				if resp, _ := post(t, ts.URL, tc.path, mine, key...); resp.StatusCode != 200 {
					t.Fatalf("after the advised wait: status %d", resp.StatusCode)
				}
			} else if h := resp.Header.Get("Retry-After"); h != "" {
				t.Fatalf("retry-after %q without GatewayRetryAfter", h)
			}
			if st := s.Stats(); st.EarlyReturns != tc.wantEarly || st.RetriesOnTime != tc.wantOnTime {
				t.Errorf("early %d, on time %d; want %d, %d", st.EarlyReturns, st.RetriesOnTime, tc.wantEarly, tc.wantOnTime)
			}
		})
	}
}

func TestWitnessCountsDeclaredSDKRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		value string
		want  uint64
	}{
		{"1", 1}, {"2", 1}, {"17", 1},
		{"", 0}, {"0", 0}, {"00", 0}, {"-1", 0}, {"1.5", 0}, {"+1", 0}, {"one", 0}, {"99999999999999999999999", 0},
	}
	for _, tc := range tests {
		t.Run(strconv.Quote(tc.value), func(t *testing.T) {
			t.Parallel()
			s, _, ts := newSim(t, testConfig())
			req, _ := http.NewRequest(http.MethodPost, ts.URL+azurePath, strings.NewReader(chatBody(40, 1)))
			if tc.value != "" {
				req.Header["X-Stainless-Retry-Count"] = []string{tc.value}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if st := s.Stats(); st.SDKRetries != tc.want || keyStats(t, s, "key-0").SDKRetries != tc.want {
				t.Errorf("sdk retries %d, want %d", st.SDKRetries, tc.want)
			}
		})
	}
}

// TestWitnessMemoryIsBounded fills the table three times over: it never
// holds more than its bound, the oldest are forgotten first, and the
// newest are still judged. The bound is 4,096, a sixteenth of
// MaxAdvisedWaits (the same code, a sixteenth of the CPU: issue 39);
// MaxAdvisedWaits itself under -long (.ci/run).
func TestWitnessMemoryIsBounded(t *testing.T) {
	t.Parallel()
	bound := 1 << 12
	if *long {
		bound = MaxAdvisedWaits
	}
	tab := advisedWaits{max: bound}
	id := func(i int) retryID { return retryID{key: 1, body: uint64(i)} }
	for i := range 3 * bound {
		tab.remember(id(i), t0, t0.Add(time.Second), chain{}, fieldWaits{})
		if i%4 == 0 { // some come back, which frees nothing in the ring
			tab.recall(id(i), t0)
		}
	}
	if len(tab.byID) > bound || len(tab.ring) != bound || cap(tab.ring) > bound {
		t.Fatalf("%d entries, ring %d (cap %d); want at most %d", len(tab.byID), len(tab.ring), cap(tab.ring), bound)
	}
	if want := uint64(2 * bound * 3 / 4); tab.evicted != want {
		t.Errorf("evicted %d, want %d", tab.evicted, want)
	}
	for _, tc := range []struct {
		i    int
		want comeback
	}{
		{0, firstVisit}, {1, firstVisit}, {2*bound - 1, firstVisit},
		{2*bound + 1, cameBackEarly}, {3*bound - 1, cameBackOnTime},
		{3*bound - 4, firstVisit}, // came back already
	} {
		at := t0
		if tc.want == cameBackOnTime {
			at = t0.Add(time.Second)
		}
		if got := tab.recall(id(tc.i), at).comeback; got != tc.want {
			t.Errorf("refusal %d: %v, want %v", tc.i, got, tc.want)
		}
	}
}

// TestWitnessForgetsTheOldestRefusals: through the handler, with a small
// table, the retries of refusals pushed out by newer ones are not judged.
func TestWitnessForgetsTheOldestRefusals(t *testing.T) {
	t.Parallel()
	s, clk, ts := newSim(t, testConfig())
	s.mu.Lock()
	s.advised.max = 4
	s.mu.Unlock()
	post(t, ts.URL, azurePath, chatBody(4000, 1)) // level 1,001: every request below is refused
	const n = 10
	for i := range n {
		if resp, _ := post(t, ts.URL, azurePath, chatBody(40+i, 1)); resp.StatusCode != 429 {
			t.Fatalf("request %d: status %d", i, resp.StatusCode)
		}
	}
	clk.Advance(time.Hour)
	for i := range n {
		post(t, ts.URL, azurePath, chatBody(40+i, 1))
	}
	st := s.Stats()
	if st.RetriesOnTime != 4 || st.EarlyReturns != 0 || st.AdvisedWaitsEvicted != n-4 {
		t.Errorf("on time %d, early %d, evicted %d; want 4, 0, %d", st.RetriesOnTime, st.EarlyReturns, st.AdvisedWaitsEvicted, n-4)
	}
	if len(s.advised.byID) > 4 {
		t.Errorf("%d entries, want at most 4", len(s.advised.byID))
	}
}

// TestStatsShowTheWitness: /sim/stats carries the witness's counts in
// total and per key, even when they are 0.
func TestStatsShowTheWitness(t *testing.T) {
	t.Parallel()
	_, clk, ts := newSim(t, testConfig())
	post(t, ts.URL, azurePath, chatBody(4000, 1))
	mine := chatBody(40, 1)
	resp, _ := post(t, ts.URL, azurePath, mine, "api-key", "k1")
	ms := advisedMS(t, resp)
	post(t, ts.URL, azurePath, mine, "api-key", "k1", "X-Stainless-Retry-Count", "1") // early
	clk.Advance(wallToModel(ms, 1))
	post(t, ts.URL, azurePath, mine, "api-key", "k1", "X-Stainless-Retry-Count", "2") // on time
	r, err := http.Get(ts.URL + "/sim/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var totals map[string]any
	if err := json.NewDecoder(r.Body).Decode(&totals); err != nil {
		t.Fatal(err)
	}
	keys, _ := totals["keys"].([]any)
	want := map[string]float64{"early_returns": 1, "retries_on_time": 1, "sdk_retries": 2}
	zero := map[string]float64{"early_returns": 0, "retries_on_time": 0, "sdk_retries": 0}
	check := func(where string, m map[string]any, want map[string]float64) {
		t.Helper()
		for field, v := range want {
			if got, ok := m[field].(float64); !ok || got != v {
				t.Errorf("%s: %s = %v, want %v", where, field, m[field], v)
			}
		}
	}
	check("totals", totals, want)
	if len(keys) != 2 {
		t.Fatalf("keys %v", keys)
	}
	k0, _ := keys[0].(map[string]any)
	k1, _ := keys[1].(map[string]any)
	check("key-0", k0, zero)
	check("key-1", k1, want)
	for _, field := range []string{"requests", "admitted", "refused", "utilization_pct", "keys"} {
		if _, ok := totals[field]; !ok {
			t.Errorf("stats lost %q", field)
		}
	}
}

// TestWitnessSlackCoversTheScaledClock: after days at a high TimeScale the
// scaled clock's floating point puts a client that waits exactly the
// advised wall time some tens of nanoseconds short of its deadline in
// model time (these two cases were found by search); witnessSlack keeps
// it on time.
func TestWitnessSlackCoversTheScaledClock(t *testing.T) {
	t.Parallel()
	tests := []struct {
		scale   float64
		elapsed time.Duration // wall time before the refusal
		ms      int64         // the advised wait
	}{
		{MaxTimeScale, 800*time.Hour + 38*time.Minute + 649669158*time.Nanosecond, 78612},
		{99.9, 876*time.Hour + 16*time.Minute + 36779711849*time.Nanosecond, 40813},
	}
	for _, tc := range tests {
		synctest.Test(t, func(t *testing.T) {
			cfg := testConfig()
			cfg.TimeScale = tc.scale
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			id := retryID{key: 1, body: 2}
			time.Sleep(tc.elapsed)
			refused := s.clock.Now()
			s.advised.remember(id, refused, refused.Add(s.modelTime(tc.ms)), chain{}, fieldWaits{})
			time.Sleep(time.Duration(tc.ms) * time.Millisecond)
			at := s.clock.Now()
			if got := s.advised.recall(id, at).comeback; got != cameBackOnTime {
				t.Errorf("scale %g: back %v after the refusal, told %v: %v, want on time",
					tc.scale, at.Sub(refused), s.modelTime(tc.ms), got)
			}
		})
	}
}
