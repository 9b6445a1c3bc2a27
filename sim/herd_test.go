package sim

import (
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"
)

// herdClient is how a synthetic client comes back to a refusal: after
// the wait of the field it honours, plus a constant overhead (its event
// loop, its connection), a scheduling noise drawn from [0, noise] and a
// jitter drawn from [0, jitter].
type herdClient struct {
	honours                  adviceSource
	overhead, noise, jitter  time.Duration
	millisecondReset, second bool // the refusals write: reset ms (openai) or retry-after-ms (azure); retry-after (s)
}

// herdShare is the herd the referee grades: retries in step ÷ retries
// compared.
func herdShare(st Stats) float64 {
	if st.HerdCompared == 0 {
		return 0
	}
	return float64(st.HerdInStep) / float64(st.HerdCompared)
}

// playHerd feeds the witness, on a manual clock, 60 waves of perWave
// calls refused a millisecond apart and told one wait (drawn per wave
// from 50 ms to 2.5 s, in whole ms), each call coming back as c says:
// what a fleet refused by one burst does. It returns the stats.
func playHerd(t *testing.T, dialect string, c herdClient, perWave int, seed uint64) Stats {
	t.Helper()
	cfg := testConfig()
	cfg.Dialect = dialect
	clk := NewManualClock(t0)
	cfg.Clock = clk
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 29))
	draw := func(d time.Duration) time.Duration {
		if d <= 0 {
			return 0
		}
		return time.Duration(rng.Int64N(int64(d) + 1))
	}
	type event struct {
		at     time.Time
		call   uint64
		waitMS int64 // > 0: a refusal advising it; 0: a comeback
	}
	var events []event
	for wave := range 60 {
		start := t0.Add(time.Duration(wave) * 3 * time.Second)
		waitMS := 50 + rng.Int64N(2451)
		for i := range perWave {
			call := uint64(wave*perWave + i + 1)
			refused := start.Add(time.Duration(i) * time.Millisecond)
			honoured := time.Duration(waitMS) * time.Millisecond
			if c.honours == srcRetryAfter {
				honoured = time.Duration((waitMS+999)/1000) * time.Second
			}
			back := refused.Add(honoured + c.overhead + draw(c.noise) + draw(c.jitter))
			events = append(events, event{refused, call, waitMS}, event{back, call, 0})
		}
	}
	slices.SortStableFunc(events, func(a, b event) int { return a.at.Compare(b.at) })
	for _, e := range events {
		clk.Advance(e.at.Sub(clk.Now()))
		var a answer
		if e.waitMS > 0 {
			src := srcRetryAfterMS
			if c.millisecondReset {
				src = srcResetTokens
			}
			a.add(src, e.waitMS)
			if c.second {
				a.add(srcRetryAfter, 1000*((e.waitMS+999)/1000))
			}
		}
		s.mu.Lock()
		ks := s.trackKey("the client's key", true)
		s.witness(ks, visit{id: retryID{key: 1, body: e.call}, at: e.at}, e.at, &a)
		s.mu.Unlock()
	}
	st := s.Stats()
	if n := uint64(60 * perWave); st.EarlyReturns != 0 || st.RetriesOnTime != n || st.HerdCompared != n-1 {
		t.Fatalf("early %d, on time %d, compared %d: want 0, %d, %d", st.EarlyReturns, st.RetriesOnTime, st.HerdCompared, n, n-1)
	}
	return st
}

// TestHerdIsTheClientsJitter: a client that sleeps exactly what it was
// told keeps its retries in step, whatever its own latency; one that
// adds up to a second of jitter does not; Node's overhead (20 ms and a
// noise of 10) and a slow client's (200 ms) read the same; and in the
// openai dialect, where retry-after is whole seconds beside the
// millisecond reset, the herd is read against the field the client
// honours, so the rounding between the two is not jitter.
func TestHerdIsTheClientsJitter(t *testing.T) {
	t.Parallel()
	azure := herdClient{honours: srcRetryAfterMS, second: true}
	openai := herdClient{honours: srcRetryAfter, millisecondReset: true, second: true}
	with := func(c herdClient, overhead, noise, jitter time.Duration) herdClient {
		c.overhead, c.noise, c.jitter = overhead, noise, jitter
		return c
	}
	tests := []struct {
		name     string
		dialect  string
		c        herdClient
		min, max float64
		source   string
	}{
		{"azure, exactly the advised wait", DialectAzure, azure, 1, 1, SourceRetryAfterMS},
		{"azure, 20 ms of overhead and 10 of noise", DialectAzure, with(azure, 20*time.Millisecond, 10*time.Millisecond, 0), 1, 1, SourceRetryAfterMS},
		{"azure, 200 ms of overhead and 10 of noise", DialectAzure, with(azure, 200*time.Millisecond, 10*time.Millisecond, 0), 1, 1, SourceRetryAfterMS},
		{"azure, up to 1 s of jitter", DialectAzure, with(azure, 0, 0, time.Second), 0, 0.2, ""},
		{"azure, up to 1 s of jitter and 200 ms of overhead", DialectAzure, with(azure, 200*time.Millisecond, 10*time.Millisecond, time.Second), 0, 0.2, ""},
		{"openai, retry-after exactly", DialectOpenAI, openai, 1, 1, SourceRetryAfter},
		{"openai, retry-after and 20 ms of overhead", DialectOpenAI, with(openai, 20*time.Millisecond, 10*time.Millisecond, 0), 1, 1, SourceRetryAfter},
		{"openai, the reset exactly", DialectOpenAI, herdClient{honours: srcResetTokens, millisecondReset: true, second: true}, 1, 1, SourceResetTokens},
		{"openai, retry-after and up to 1 s of jitter", DialectOpenAI, with(openai, 0, 0, time.Second), 0, 0.2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := playHerd(t, tc.dialect, tc.c, 8, 1)
			t.Logf("herd %.3f (%d of %d, against %s)", herdShare(st), st.HerdInStep, st.HerdCompared, st.HerdSource)
			if h := herdShare(st); h < tc.min || h > tc.max || (tc.source != "" && st.HerdSource != tc.source) {
				t.Errorf("herd %.3f (%d of %d, against %s): want %.1f to %.1f against %s", h, st.HerdInStep, st.HerdCompared, st.HerdSource, tc.min, tc.max, tc.source)
			}
		})
	}
	t.Run("the same jitter reads the same under any overhead, at any concurrency", func(t *testing.T) {
		t.Parallel()
		for _, jitter := range []time.Duration{0, 100 * time.Millisecond, time.Second} {
			node := herdShare(playHerd(t, DialectAzure, with(azure, 20*time.Millisecond, 10*time.Millisecond, jitter), 8, 2))
			slow := herdShare(playHerd(t, DialectAzure, with(azure, 200*time.Millisecond, 10*time.Millisecond, jitter), 8, 2))
			crowd := herdShare(playHerd(t, DialectAzure, with(azure, 20*time.Millisecond, 10*time.Millisecond, jitter), 64, 2))
			t.Logf("jitter %v: herd %.3f at 20 ms of overhead, %.3f at 200 ms, %.3f with 64 calls a wave", jitter, node, slow, crowd)
			if math.Abs(node-slow) > 0.02 || math.Abs(node-crowd) > 0.05 {
				t.Errorf("jitter %v: herd %.3f at 20 ms of overhead, %.3f at 200 ms, %.3f with 64 calls a wave", jitter, node, slow, crowd)
			}
		}
	})
}

// TestHerdFromTheWire: through the handler, in the openai and anthropic
// dialects, a client that sleeps what retry-after says (whole seconds)
// keeps in step against retry-after, not against the reset it did not
// read (the waits 1.0, 1.3, 1.6, 1.9 and 2.2 s: retry-after 2, 2, 2, 2
// and 3 s); one that adds 0, 100, 200, 300 and 400 ms keeps in step
// against neither.
func TestHerdFromTheWire(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dialect    string
		extra      time.Duration
		wantInStep uint64
		wantSource string
	}{
		{DialectOpenAI, 0, 4, SourceRetryAfter},
		{DialectOpenAI, 100 * time.Millisecond, 0, ""},
		{DialectAnthropic, 0, 4, SourceRetryAfter},
		{DialectAnthropic, 100 * time.Millisecond, 0, ""},
	} {
		t.Run(tc.dialect+" "+tc.extra.String(), func(t *testing.T) {
			t.Parallel()
			cfg := testConfig()
			cfg.Dialect = tc.dialect
			s, clk, ts := newSim(t, cfg)
			for round := range 5 {
				path, filler, hdr := dialectCall(tc.dialect, 8000+1200*round, 1, "k")
				if resp, _ := post(t, ts.URL, path, filler, hdr...); resp.StatusCode != http.StatusOK {
					t.Fatalf("filler: %d", resp.StatusCode)
				}
				_, body, _ := dialectCall(tc.dialect, 41, 1, "k")
				resp, _ := post(t, ts.URL, path, body, hdr...)
				sec, err := strconv.Atoi(resp.Header.Get("Retry-After"))
				if resp.StatusCode != http.StatusTooManyRequests || err != nil {
					t.Fatalf("status %d, retry-after %q", resp.StatusCode, resp.Header.Get("Retry-After"))
				}
				clk.Advance(time.Duration(sec)*time.Second + time.Duration(round)*tc.extra)
				if resp, _ := post(t, ts.URL, path, body, hdr...); resp.StatusCode != http.StatusOK {
					t.Fatalf("round %d: the retry got %d", round, resp.StatusCode)
				}
				clk.Advance(time.Hour) // drained
			}
			st := s.Stats()
			if st.HerdInStep != tc.wantInStep || st.HerdCompared != 4 || (tc.wantSource != "" && st.HerdSource != tc.wantSource) {
				t.Errorf("in step %d of %d against %q: want %d of 4 against %q; advised %+v", st.HerdInStep, st.HerdCompared, st.HerdSource, tc.wantInStep, tc.wantSource, s.Advised())
			}
		})
	}
}

// TestHerdIsPerKey: two clients, each keeping its own step 300 ms apart
// from the other's, are each herded: a key's retries are compared with
// that key's median, not the fleet's. A lateness past the record's
// 35 minutes either way is kept as that, within its key.
func TestHerdIsPerKey(t *testing.T) {
	t.Parallel()
	var late []uint64
	for i := range 10 {
		late = append(late, packLateness(srcRetryAfterMS, 1, 20_000), packLateness(srcRetryAfterMS, 2, 320_000+1000*float64(i)))
	}
	if hi, lo := packLateness(srcRetryAfter, 3, 1e12), packLateness(srcRetryAfter, 3, -1e12); hi-lo != math.MaxUint32 || lo != packLateness(srcRetryAfter, 3, -latenessBias) {
		t.Errorf("clamped: %x, %x", hi, lo)
	}
	if src, compared, inStep := herdOf(late); src != SourceRetryAfterMS || compared != 18 || inStep != 18 {
		t.Errorf("%s: %d in step of %d, want retry-after-ms, 18 of 18", src, inStep, compared)
	}
	if src, compared, inStep := herdOf(nil); src != "" || compared != 0 || inStep != 0 {
		t.Errorf("nothing compared: %q %d %d", src, compared, inStep)
	}
}

// TestHerdRecordIsBounded: the record keeps the last MaxHerdLateness
// latenesses, overwriting the oldest.
func TestHerdRecordIsBounded(t *testing.T) {
	t.Parallel()
	var l latenessLog
	ks := &keyState{index: 1}
	r := recalled{comeback: cameBackOnTime, fields: fieldWaits{n: 1}}
	for i := range MaxHerdLateness + 10 {
		r.since = time.Duration(i) * time.Microsecond
		l.note(ks, r, 1)
	}
	at := func(slot int) uint64 { return l.ring[slot] - packLateness(0, 1, 0) }
	if len(l.ring) != MaxHerdLateness || cap(l.ring) != MaxHerdLateness || at(9) != MaxHerdLateness+9 || at(10) != 10 {
		t.Errorf("%d entries (cap %d), slot 9 %d, slot 10 %d", len(l.ring), cap(l.ring), at(9), at(10))
	}
}
