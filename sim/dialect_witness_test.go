package sim

import (
	"encoding/json"
	"io"
	"maps"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/memnet"
)

// dialectVariants are the ways a refusal can be written that advise a
// wait: every dialect, and the settings that change what a 429 carries.
var dialectVariants = []struct {
	name    string
	dialect string
	mut     func(*Config)
}{
	{"azure", DialectAzure, nil},
	{"openai", DialectOpenAI, nil},
	{"openai without retry headers", DialectOpenAI, func(c *Config) { c.OmitRetryHeaders = true }},
	{"anthropic", DialectAnthropic, nil},
	{"anthropic without retry headers", DialectAnthropic, func(c *Config) { c.OmitRetryHeaders = true }},
	{"ietf", DialectIETF, nil},
	{"ietf with retry-after", DialectIETF, func(c *Config) { c.IETFRetryAfter = true }},
	{"ietf, older drafts", DialectIETF, func(c *Config) { c.IETFLegacy = true }},
	{"gemini", DialectGemini, nil},
}

// TestDialectWindows: the gateway's ceilings and the standard deployment
// are windows of requests and tokens; each dialect reports the tighter of
// the caller's (key or organization), and a refusal the window that
// refused it as exhausted, with its end as the reset — even a token
// window with a crumb left that the request does not fit. The clock
// stands 250 ms into a second: the second ends in 750 ms, the minute in
// 59.75 s.
func TestDialectWindows(t *testing.T) {
	t.Parallel()
	type answer = map[string]string
	gateway := func(rps, tpm int) func(*Config) {
		return func(c *Config) {
			c.Profile = ProfileGateway
			c.GatewayKeyRPS, c.GatewayKeyTPM = rps, tpm
		}
	}
	standard := func(c *Config) {
		c.SpilloverDeployment, c.SpilloverPerRequest = "sim-standard", true
		c.StandardRPM, c.StandardTPM = 120, 1_000_000 // 2 requests a second
	}
	tests := []struct {
		name     string
		dialect  string
		mut      func(*Config)
		model    string // the deployment named in the call
		calls    int    // the last one is refused
		first    answer
		refused  answer
		advised  map[string]int64
		body429  string
		messages string // what the refusal's message says
	}{
		{
			name: "openai gateway, requests", dialect: DialectOpenAI, mut: gateway(2, 500_000), calls: 3,
			first: answer{"X-Ratelimit-Limit-Requests": "2", "X-Ratelimit-Remaining-Requests": "1", "X-Ratelimit-Reset-Requests": "750ms",
				"X-Ratelimit-Limit-Tokens": "500000", "X-Ratelimit-Remaining-Tokens": "499989", "X-Ratelimit-Reset-Tokens": "59.75s"},
			refused: answer{"X-Ratelimit-Remaining-Requests": "0", "X-Ratelimit-Reset-Requests": "750ms", "X-Ratelimit-Remaining-Tokens": "499978", "Retry-After": "1"},
			advised: map[string]int64{SourceResetRequests: 750, SourceRetryAfter: 1000},
			body429: "requests/rate_limit_exceeded", messages: "key's rate limit of requests per second",
		},
		{
			name: "openai gateway, tokens: the crumb left does not fit", dialect: DialectOpenAI, mut: gateway(100, 20), calls: 2,
			first:   answer{"X-Ratelimit-Limit-Tokens": "20", "X-Ratelimit-Remaining-Tokens": "9"},
			refused: answer{"X-Ratelimit-Remaining-Tokens": "0", "X-Ratelimit-Reset-Tokens": "59.75s", "X-Ratelimit-Remaining-Requests": "99", "Retry-After": "60"},
			advised: map[string]int64{SourceResetTokens: 59750, SourceRetryAfter: 60000},
			body429: "tokens/rate_limit_exceeded", messages: "tokens per minute",
		},
		{
			name: "openai standard deployment", dialect: DialectOpenAI, mut: standard, model: "sim-standard", calls: 3,
			first: answer{"X-Ms-Deployment-Name": "sim-standard", "X-Ratelimit-Limit-Requests": "2", "X-Ratelimit-Remaining-Requests": "1",
				"X-Ratelimit-Reset-Requests": "750ms", "X-Ratelimit-Limit-Tokens": "1000000", "X-Ratelimit-Remaining-Tokens": "999989"},
			refused: answer{"X-Ratelimit-Remaining-Requests": "0", "X-Ratelimit-Reset-Requests": "750ms", "Retry-After": "1"},
			advised: map[string]int64{SourceResetRequests: 750, SourceRetryAfter: 1000},
			body429: "requests/rate_limit_exceeded", messages: "standard deployment",
		},
		{
			name: "anthropic gateway", dialect: DialectAnthropic, mut: gateway(2, 500_000), calls: 3,
			first: answer{"Anthropic-Ratelimit-Requests-Limit": "2", "Anthropic-Ratelimit-Requests-Remaining": "1", "Anthropic-Ratelimit-Requests-Reset": "2025-01-01T00:00:01Z",
				"Anthropic-Ratelimit-Tokens-Remaining": "499989", "Anthropic-Ratelimit-Tokens-Reset": "2025-01-01T00:01:00Z", "Anthropic-Ratelimit-Output-Tokens-Remaining": "499989"},
			refused: answer{"Anthropic-Ratelimit-Requests-Remaining": "0", "Anthropic-Ratelimit-Requests-Reset": "2025-01-01T00:00:01Z", "Retry-After": "1"},
			advised: map[string]int64{SourceAnthropicRequestsReset: 750, SourceRetryAfter: 1000},
			body429: "rate_limit_error", messages: "key's rate limit of requests per second",
		},
		{
			name: "ietf gateway", dialect: DialectIETF, mut: gateway(2, 500_000), calls: 3,
			first:   answer{"Ratelimit-Policy": `"default";q=2;w=1`, "Ratelimit": `"default";r=1;t=1`},
			refused: answer{"Ratelimit-Policy": `"default";q=2;w=1`, "Ratelimit": `"default";r=0;t=1`, "Retry-After": ""},
			advised: map[string]int64{SourceRateLimit: 1000},
			body429: "https://iana.org/assignments/http-problem-types#quota-exceeded",
		},
		{
			name: "ietf gateway, tokens", dialect: DialectIETF, mut: gateway(100, 20), calls: 2,
			first:   answer{"Ratelimit-Policy": `"default";q=20;qu="tokens";w=60`, "Ratelimit": `"default";r=9;t=60`},
			refused: answer{"Ratelimit": `"default";r=0;t=60`},
			advised: map[string]int64{SourceRateLimit: 60000},
			body429: "https://iana.org/assignments/http-problem-types#quota-exceeded",
		},
		{
			name: "gemini gateway", dialect: DialectGemini, mut: gateway(2, 500_000), calls: 3,
			first:   answer{"X-Ratelimit-Remaining-Requests": "", "Ratelimit": ""},
			refused: answer{"Retry-After": ""},
			advised: map[string]int64{SourceRetryInfo: 750},
			body429: "RESOURCE_EXHAUSTED", messages: "key's rate limit of requests per second",
		},
		{
			name: "azure gateway", dialect: DialectAzure, mut: gateway(2, 500_000), calls: 3,
			first:   answer{"X-Ratelimit-Remaining-Requests": "1", "X-Ratelimit-Remaining-Tokens": "499989", "X-Ratelimit-Limit-Requests": ""},
			refused: answer{"X-Ratelimit-Remaining-Requests": "0", "Retry-After": ""},
			advised: map[string]int64{},
			body429: "rate_limit_error", messages: "key's rate limit of requests per second",
		},
		{
			name: "azure gateway with retry-after", dialect: DialectAzure,
			mut: func(c *Config) { gateway(2, 500_000)(c); c.GatewayRetryAfter = true }, calls: 3,
			refused: answer{"Retry-After": "1"},
			advised: map[string]int64{SourceRetryAfter: 1000},
			body429: "rate_limit_error",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig()
			cfg.Dialect = tc.dialect
			tc.mut(&cfg)
			s, clk, ts := newSim(t, cfg)
			s.wall = clk.Now
			clk.Advance(250 * time.Millisecond)
			var resp *http.Response
			var body string
			for i := range tc.calls {
				path, b, hdr := dialectCall(tc.dialect, 40, 1, "k1") // 10 + 1 tokens
				if tc.model != "" {
					b = strings.Replace(b, `"sim-ptu"`, `"`+tc.model+`"`, 1)
				}
				resp, body = post(t, ts.URL, path, b, hdr...)
				want := 200
				if i == tc.calls-1 {
					want = 429
				}
				if resp.StatusCode != want {
					t.Fatalf("call %d: status %d, want %d: %s", i, resp.StatusCode, want, body)
				}
				expect := tc.first
				if i == tc.calls-1 {
					expect = tc.refused
				} else if i > 0 {
					continue
				}
				for k, v := range expect {
					if got := resp.Header.Get(k); got != v {
						t.Errorf("call %d: %s = %q, want %q", i, k, got, v)
					}
				}
			}
			profile := cfg.Profile
			if got := errorKind(t, tc.dialect, profile, resp, body); got != tc.body429 {
				t.Errorf("429 body names %q, want %q: %s", got, tc.body429, body)
			}
			if !strings.Contains(body, tc.messages) {
				t.Errorf("429 body %s does not say %q", body, tc.messages)
			}
			wire := readWire(t, resp, body, clk.Now())
			if !maps.Equal(wire, tc.advised) {
				t.Errorf("the 429 advises %v on the wire, want %v", wire, tc.advised)
			}
			if got := advisedOf(s, 1); !maps.Equal(got, tc.advised) {
				t.Errorf("the simulator recorded %v, want %v", got, tc.advised)
			}
		})
	}
}

// TestWitnessInEveryDialect plays a client that reads a 429 as its
// dialect writes it and comes back after the shortest wait it read, or a
// millisecond sooner, round after round, on a deployment whose waits are
// fractions of a millisecond (PTU 0.7), at several TimeScales. Coming back
// after exactly what was written is on time and admitted, whatever the
// field's unit; sooner is early.
func TestWitnessInEveryDialect(t *testing.T) {
	t.Parallel()
	const rounds = 4
	for _, v := range dialectVariants {
		for _, scale := range []float64{1, 20, 7.3} {
			for _, short := range []time.Duration{0, time.Millisecond} {
				t.Run(v.name+"/"+strconv.FormatFloat(scale, 'g', -1, 64)+"/short "+short.String(), func(t *testing.T) {
					t.Parallel()
					cfg := testConfig()
					cfg.PTU, cfg.TimeScale, cfg.Dialect = 0.7, scale, v.dialect
					if v.mut != nil {
						v.mut(&cfg)
					}
					s, clk, ts := newSim(t, cfg)
					s.wall = clk.Now
					for i := range rounds {
						clk.Advance(time.Hour) // drained: every round starts alike
						path, filler, fhdr := dialectCall(v.dialect, req100+4*i, 1, "filler")
						post(t, ts.URL, path, filler, fhdr...)
						_, mine, hdr := dialectCall(v.dialect, 40+i, 1, "k1")
						resp, body := post(t, ts.URL, path, mine, hdr...)
						if resp.StatusCode != http.StatusTooManyRequests {
							t.Fatalf("round %d: status %d, want 429", i, resp.StatusCode)
						}
						ms := soonestOf(readWire(t, resp, body, clk.Now()))
						if ms == 0 {
							t.Fatalf("round %d: the 429 advises no wait: %v %s", i, resp.Header, body)
						}
						clk.Advance(wallToModel(ms, scale) - time.Duration(float64(short)*scale))
						resp, _ = post(t, ts.URL, path, mine, hdr...)
						if short == 0 && resp.StatusCode != 200 {
							t.Fatalf("round %d: back after the %d ms advised: status %d", i, ms, resp.StatusCode)
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
			}
		}
	}
}

// TestEveryDialectAdvisesTheSameWait plays one script in every dialect and
// checks each refusal's fields against the model: the wait is the time the
// bucket needs to drain back to 100%, (level − C) / D, in wall time, and
// every field writes it rounded up in its own unit — whole ms
// (retry-after-ms, OpenAI's reset, Gemini's retryDelay), whole seconds
// (retry-after, RateLimit t), or an absolute time rounded up to the
// second (Anthropic's reset).
func TestEveryDialectAdvisesTheSameWait(t *testing.T) {
	t.Parallel()
	const scale = 7.3
	for _, v := range dialectVariants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig()
			cfg.PTU, cfg.TimeScale, cfg.Dialect = 0.7, scale, v.dialect
			if v.mut != nil {
				v.mut(&cfg)
			}
			s, clk, ts := newSim(t, cfg)
			s.wall = clk.Now
			d, c := cfg.DrainTokensPerSecond(), cfg.CapacityTokens()
			for i := range 5 {
				clk.Advance(time.Hour + 137*time.Millisecond) // drained; the wall clock off the second
				chars := req100 + 4*i + 200*i
				path, filler, fhdr := dialectCall(v.dialect, chars, 1, "filler")
				post(t, ts.URL, path, filler, fhdr...)
				_, mine, hdr := dialectCall(v.dialect, 40, 1, "k1")
				resp, body := post(t, ts.URL, path, mine, hdr...)
				cost := float64(ceilDiv(chars, 4) + 1)
				ms := int64(math.Ceil((cost-c)/d*1000/scale - 1e-9))
				secs := (ms + 999) / 1000
				want := map[string]int64{}
				for src, w := range map[string]int64{
					SourceRetryAfterMS: ms, SourceResetTokens: ms, SourceRetryInfo: ms,
					SourceRetryAfter: 1000 * secs, SourceRateLimit: 1000 * secs, SourceRateLimitReset: 1000 * secs,
					SourceAnthropicTokensReset: ceilMS(ceilSecond(clk.Now().Add(time.Duration(ms) * time.Millisecond)).Sub(clk.Now())),
				} {
					if _, ok := readWire(t, resp, body, clk.Now())[src]; ok {
						want[src] = w
					}
				}
				if len(want) == 0 {
					t.Fatalf("round %d: nothing advised", i)
				}
				if got := readWire(t, resp, body, clk.Now()); !maps.Equal(got, want) {
					t.Errorf("round %d: the wire says %v, the model %v", i, got, want)
				}
				if got := advisedOf(s, uint64(i+1)); !maps.Equal(got, want) {
					t.Errorf("round %d: recorded %v, the model %v", i, got, want)
				}
				clk.Advance(time.Minute) // the refusal's retry is not this test's business
			}
		})
	}
}

// TestAdvisedIsRecordedAndBounded: the record keeps the last MaxAdvice
// entries (here 4), every one with its refusal, key, dialect and source;
// the summary in Stats and /sim/stats counts them all.
func TestAdvisedIsRecordedAndBounded(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.PTU = 0.06 // D = 1 token/s, C = 1: one request fills it for minutes
	s, clk, ts := newSim(t, cfg)
	s.advice.max = 4
	s.wall = clk.Now
	post(t, ts.URL, azurePath, chatBody(req100, 1), "api-key", "filler")
	var seen []int64
	for i := range 5 {
		clk.Advance(time.Millisecond) // each wait a millisecond shorter
		resp, _ := post(t, ts.URL, azurePath, chatBody(40+i, 1), "api-key", "k"+strconv.Itoa(i%2))
		seen = append(seen, advisedMS(t, resp))
	}
	got := s.Advised()
	if len(got) != 4 {
		t.Fatalf("%d entries kept, want 4: %+v", len(got), got)
	}
	for j, a := range got {
		refusal := uint64(4 + j/2) // refusals 4 and 5, two fields each
		src, ms := SourceRetryAfterMS, seen[refusal-1]
		if j%2 == 1 {
			src, ms = SourceRetryAfter, 1000*((ms+999)/1000)
		}
		key := "key-" + strconv.Itoa(1+int(refusal-1)%2) // key-0 is the filler's
		at := clk.Now().Add(time.Duration(refusal-5) * time.Millisecond)
		if a.Refusal != refusal || a.Source != src || a.WallMS != ms || a.Key != key || a.Dialect != DialectAzure || !a.At.Equal(at) {
			t.Errorf("entry %d: %+v, want refusal %d, %s %d ms from %s", j, a, refusal, src, ms, key)
		}
	}
	var sum, secSum int64
	for _, ms := range seen {
		sum += ms
		secSum += 1000 * ((ms + 999) / 1000)
	}
	want := []AdviceStats{
		{Source: SourceRetryAfterMS, Count: 5, MinMS: seen[4], MaxMS: seen[0], SumMS: sum},
		{Source: SourceRetryAfter, Count: 5, MinMS: 1000 * ((seen[4] + 999) / 1000), MaxMS: 1000 * ((seen[0] + 999) / 1000), SumMS: secSum},
	}
	r, err := http.Get(ts.URL + "/sim/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var st Stats
	if err := json.NewDecoder(r.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if !equalAdvice(st.Advised, want) || st.AdvisedRefusals != 5 || st.AdviceEvicted != 6 || st.Dialect != DialectAzure {
		t.Errorf("/sim/stats advised %+v, %d refusals, %d evicted, dialect %q; want %+v, 5, 6, azure", st.Advised, st.AdvisedRefusals, st.AdviceEvicted, st.Dialect, want)
	}
}

func equalAdvice(a, b []AdviceStats) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFaultsAdviseNothing: an injected fault's retry headers are not the
// model's advice and are not recorded.
func TestFaultsAdviseNothing(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Dialect = DialectOpenAI
	cfg.FaultRate, cfg.Faults = 1, []string{FaultHTTPDate}
	s, _, ts := newSim(t, cfg)
	path, body, hdr := dialectCall(DialectOpenAI, 40, 1, "k")
	resp, out := post(t, ts.URL, path, body, hdr...)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("fault: %d %v", resp.StatusCode, resp.Header)
	}
	if got := errorKind(t, DialectOpenAI, ProfilePTU, resp, out); got != "requests/rate_limit_exceeded" {
		t.Errorf("fault body %q in the openai envelope: %s", got, out)
	}
	if len(s.Advised()) != 0 || s.Stats().Advised != nil {
		t.Errorf("a fault was recorded as advice: %+v", s.Advised())
	}
}

// TestWitnessOnTheRuntimeClockInEveryDialect: a client on the runtime
// clock (a synctest bubble over memnet) sleeps exactly the shortest wait
// it read from each dialect's 429 at TimeScale 20; the server converts
// back to model time and finds it on time, a millisecond sooner early.
// Anthropic's absolute resets are read against the bubble's clock, which
// is the simulator's wall clock too.
func TestWitnessOnTheRuntimeClockInEveryDialect(t *testing.T) {
	t.Parallel()
	for _, v := range dialectVariants {
		for _, short := range []time.Duration{0, time.Millisecond} {
			t.Run(v.name+"/short "+short.String(), func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					cfg := testConfig()
					cfg.PTU, cfg.TimeScale, cfg.Dialect = 0.7, 20, v.dialect
					if v.mut != nil {
						v.mut(&cfg)
					}
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
					send := func(path, body string, hdr []string) (*http.Response, string) {
						req, _ := http.NewRequest(http.MethodPost, "http://sim.invalid"+path, strings.NewReader(body))
						for i := 0; i+1 < len(hdr); i += 2 {
							req.Header.Set(hdr[i], hdr[i+1])
						}
						resp, err := hc.Do(req)
						if err != nil {
							t.Fatal(err)
						}
						defer resp.Body.Close()
						b, err := io.ReadAll(resp.Body)
						if err != nil {
							t.Fatal(err)
						}
						return resp, string(b)
					}
					const rounds = 3
					for i := range rounds {
						time.Sleep(time.Hour + 321*time.Millisecond) // drained, off the second
						path, filler, fhdr := dialectCall(v.dialect, req100+4*i, 1, "filler")
						send(path, filler, fhdr)
						_, mine, hdr := dialectCall(v.dialect, 40+i, 1, "k1")
						resp, body := send(path, mine, hdr)
						ms := soonestOf(readWire(t, resp, body, time.Now()))
						if resp.StatusCode != 429 || ms == 0 {
							t.Fatalf("round %d: status %d, %d ms advised", i, resp.StatusCode, ms)
						}
						time.Sleep(time.Duration(ms)*time.Millisecond - short)
						resp, _ = send(path, mine, hdr)
						if short == 0 && resp.StatusCode != 200 {
							t.Fatalf("round %d: back after the %d ms advised: status %d", i, ms, resp.StatusCode)
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
