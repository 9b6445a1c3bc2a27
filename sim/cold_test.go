package sim

import (
	"strings"
	"testing"
	"time"
)

// TestColdForecastArithmetic follows the bucket on the model clock: D =
// 1,000 tokens/s, C = 1,000, an allowance of 300 (30%), requests of 100
// tokens, a cold forecast of 10% of D (100 tokens/s) after 5 s without a
// completion.
func TestColdForecastArithmetic(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.BurstPct, cfg.BurstRefill = 30, time.Hour
	cfg.ColdDrainPct, cfg.ColdAfter = 10, 5*time.Second
	b := newBucket(cfg)
	admit := func(at time.Duration, n int) {
		t.Helper()
		for range n {
			if v := b.admit(t0.Add(at), 100); !v.admitted {
				t.Fatalf("at %v: refused, want admitted (level %.0f)", at, b.level)
			}
		}
	}
	refuse := func(at, want time.Duration) {
		t.Helper()
		v := b.admit(t0.Add(at), 100)
		if v.admitted || v.wait != want {
			t.Fatalf("at %v: admitted %v, wait %v; want refused, wait %v (level %.0f)", at, v.admitted, v.wait, want, b.level)
		}
		if q := b.quotaOf(t0.Add(at), cfg.BucketDepth); q.reset != want {
			t.Errorf("at %v: the exhausted limit resets in %v, not the advised %v", at, q.reset, want)
		}
	}
	// A rested deployment: 11 requests to 100% and over, 3 on the
	// allowance, level 1,400. Nothing has completed: the 400 over 100%
	// are forecast to drain at 100 tokens/s.
	admit(0, 14)
	refuse(0, 4*time.Second)
	refuse(100*time.Millisecond, 3*time.Second) // 300 over, the level drains at D meanwhile
	// The first answer is out: the forecast is the drain, 200 over → 200 ms.
	b.correct(t0.Add(200*time.Millisecond), 0)
	refuse(200*time.Millisecond, 200*time.Millisecond)
	// Under 100% any request is admitted, cold or not (the forecast sets
	// the advice only): 11 more from 0 at 2 s, the 12th waits 100 ms.
	admit(2*time.Second, 11)
	refuse(2*time.Second, 100*time.Millisecond)
	// 5 s after the last completion the deployment is cold again.
	admit(10*time.Second, 11)
	refuse(10*time.Second, time.Second)
}

// TestColdIsOffByDefault: the ptu profile's model is today's, so the
// waits it advises stay the drain's.
func TestColdIsOffByDefault(t *testing.T) {
	t.Parallel()
	if c := DefaultConfig().Cold(); c.On() {
		t.Fatalf("DefaultConfig's forecast is on: %+v", c)
	}
	b := newBucket(testConfig())
	for range 11 {
		b.admit(t0, 100)
	}
	if v := b.admit(t0, 100); v.wait != 100*time.Millisecond {
		t.Fatalf("refused with %v, want the drain's 100ms", v.wait)
	}
}

// TestColdAdvicePerDialect: a neighbour's batch lifts a deployment that
// has answered nothing yet 1,000 tokens over 100%: cold, a refusal is
// told 10 s in every field, and once a request has completed (its answer
// written), the same lift is told 1 s.
func TestColdAdvicePerDialect(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.ColdDrainPct, cfg.ColdAfter = 10, time.Minute
	cfg.SetNeighbour(Neighbour{First: 0, Every: 30 * time.Second, Min: 2 * time.Second, Max: 2 * time.Second})
	cfg.Dialect = DialectOpenAI
	_, clk, ts := newSim(t, cfg)
	refused := func(wantMS, wantReset string) {
		t.Helper()
		resp, body := post(t, ts.URL, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"`+strings.Repeat("p", req100)+`"}],"max_tokens":1}`)
		if resp.StatusCode != 429 || resp.Header.Get("X-Ratelimit-Reset-Tokens") != wantReset || resp.Header.Get("Retry-After") != wantMS {
			t.Fatalf("status %d, reset %q, retry-after %q (%s); want 429, %q, %q", resp.StatusCode,
				resp.Header.Get("X-Ratelimit-Reset-Tokens"), resp.Header.Get("Retry-After"), body, wantReset, wantMS)
		}
	}
	refused("10", "10s")
	clk.Advance(20 * time.Second) // drained: admitted, answered at once
	if resp, body := post(t, ts.URL, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":1}`); resp.StatusCode != 200 {
		t.Fatalf("status %d (%s), want 200", resp.StatusCode, body)
	}
	clk.Advance(10 * time.Second) // the next batch, at 30 s
	refused("1", "1s")
}

func TestColdSettingsChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		set   func(*Config)
		field string
	}{
		{func(c *Config) { c.ColdDrainPct = -1 }, "ColdDrainPct"},
		{func(c *Config) { c.ColdDrainPct = 101 }, "ColdDrainPct"},
		{func(c *Config) { c.ColdDrainPct = 10 }, "ColdAfter"},
		{func(c *Config) { c.ColdDrainPct, c.ColdAfter = 10, 2*time.Hour }, "ColdAfter"},
		{func(c *Config) { c.ColdDrainPct, c.ColdAfter, c.Profile = 10, time.Second, ProfileGateway }, "ColdDrainPct"},
	} {
		cfg := DefaultConfig()
		tc.set(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%+v: %v; want an error naming %s", cfg.Cold(), err, tc.field)
		}
	}
	cfg := DefaultConfig()
	cfg.ColdDrainPct, cfg.ColdAfter = 5, 3*time.Second
	if err := cfg.Validate(); err != nil {
		t.Errorf("a cold forecast: %v", err)
	}
}
