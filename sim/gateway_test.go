package sim

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func gatewayConfig() Config {
	cfg := DefaultConfig()
	cfg.Profile = ProfileGateway
	cfg.TTFT, cfg.TPOT = 0, 0
	return cfg
}

// msgBody is a messages call of 100 prompt tokens and the given budget.
func msgBody(maxTokens int) string {
	return `{"model":"m","max_tokens":` + itoa(maxTokens) + `,"messages":[{"role":"user","content":"` + strings.Repeat("g", 400) + `"}]}`
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func keyCeiling(t *testing.T, s *Server, key string) CeilingStats {
	t.Helper()
	for _, k := range s.Stats().Keys {
		if k.Key == key {
			return *k.Ceiling
		}
	}
	t.Fatalf("no %s in stats", key)
	return CeilingStats{}
}

func TestGatewayOrganizationFirstThenKey(t *testing.T) {
	t.Parallel()
	cfg := gatewayConfig()
	cfg.GatewayOrgRPS = 3
	cfg.GatewayKeyRPS = 2
	cfg.GatewayRetryAfter = true
	_, clk, ts := newSim(t, cfg)
	clk.Advance(250 * time.Millisecond)
	steps := []struct {
		key     string
		status  int
		message string
	}{
		{"key-a", 200, ""},
		{"key-a", 200, ""},
		{"key-a", 429, "key's rate limit of requests per second"},
		{"key-b", 200, ""}, // a quiet key still has room in the organization
		{"key-c", 429, "organization's rate limit of requests per second"},
	}
	for i, st := range steps {
		resp, body := post(t, ts.URL, "/v1/messages", msgBody(10), "x-api-key", st.key)
		if resp.StatusCode != st.status {
			t.Fatalf("step %d: status %d, want %d: %s", i, resp.StatusCode, st.status, body)
		}
		if st.status != 429 {
			continue
		}
		var e struct {
			Type  string
			Error struct{ Type, Message string }
		}
		if err := json.Unmarshal([]byte(body), &e); err != nil || e.Type != "error" || e.Error.Type != "rate_limit_error" || !strings.Contains(e.Error.Message, st.message) {
			t.Errorf("step %d: body %s, want rate_limit_error about %q", i, body, st.message)
		}
		if strings.Contains(body, st.key) {
			t.Errorf("step %d: body echoes the key", i)
		}
		if got := resp.Header.Get("Retry-After"); got != "1" {
			t.Errorf("step %d: retry-after %q, want 1 (750 ms to the next second)", i, got)
		}
	}
	clk.Advance(750 * time.Millisecond) // next second: both counters move on arrival
	if resp, _ := post(t, ts.URL, "/v1/messages", msgBody(10), "x-api-key", "key-c"); resp.StatusCode != 200 {
		t.Fatalf("next second: status %d", resp.StatusCode)
	}
}

func TestGatewayTokensPerMinuteAndNoRetryAfterByDefault(t *testing.T) {
	t.Parallel()
	cfg := gatewayConfig()
	cfg.GatewayKeyTPM = 500 // two calls of 100 + 150 estimated
	_, clk, ts := newSim(t, cfg)
	for i, want := range []int{200, 200, 429} {
		// With no latency the correction lands at once: 100 + completion.
		resp, body := post(t, ts.URL, "/v1/messages", `{"max_tokens":150,"messages":[{"role":"user","content":"`+strings.Repeat("g", 400)+`"}]}`, "x-api-key", "k")
		if resp.StatusCode != want {
			t.Fatalf("call %d: status %d, want %d: %s", i, resp.StatusCode, want, body)
		}
		if want == 429 && resp.Header.Get("Retry-After") != "" {
			t.Errorf("retry-after without GatewayRetryAfter")
		}
	}
	clk.Advance(time.Minute)
	if resp, _ := post(t, ts.URL, "/v1/messages", msgBody(150), "x-api-key", "k"); resp.StatusCode != 200 {
		t.Fatalf("next minute: status %d", resp.StatusCode)
	}
}

// TestGatewayReconcileOnlyOnTheSameMinute scripts the contract's cases:
// a call is charged its estimate (100 prompt + 100 budget = 200) and,
// when it completes, corrected to 100 + completion tokens only on the
// counters still on the minute it was charged to.
func TestGatewayReconcileOnlyOnTheSameMinute(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// arrive at start+at; complete 15 s later; other is an optional
		// call by another key (same organization) at start+otherAt.
		at, otherAt       time.Duration
		path              string
		wantKeyActual     bool // key counter holds the actual cost
		wantOrgActual     bool
		wantOrgHoldsFirst bool // org counter still holds the first call at all
	}{
		{"completes in the same minute", 10 * time.Second, -1, "/v1/messages", true, true, true},
		{"completes in the next minute, no call since", 50 * time.Second, -1, "/v1/messages", true, true, true},
		{"another key moved the organization on", 50 * time.Second, 60 * time.Second, "/v1/messages", true, false, false},
		{"another key in the same minute", 10 * time.Second, 20 * time.Second, "/v1/messages", true, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := gatewayConfig()
			cfg.TTFT = 15 * time.Second
			s, clk, ts := newSim(t, cfg)
			clk.Advance(tc.at)
			done := goPost(t, ts.URL, tc.path, msgBody(100), "x-api-key", "first")
			waitSleepers(t, clk, 1)
			if tc.otherAt >= 0 {
				clk.Set(t0.Add(tc.otherAt))
				goPost(t, ts.URL, tc.path, msgBody(100), "x-api-key", "other")
				waitSleepers(t, clk, 2)
			}
			clk.Set(t0.Add(tc.at + 15*time.Second))
			var m struct {
				Usage struct {
					OutputTokens int `json:"output_tokens"`
				}
			}
			if err := json.Unmarshal([]byte(<-done), &m); err != nil {
				t.Fatal(err)
			}
			actual := int64(100 + m.Usage.OutputTokens)
			if got := keyCeiling(t, s, "key-0").TokensThisMinute; (got == actual) != tc.wantKeyActual || (!tc.wantKeyActual && got != 200) {
				t.Errorf("key counter %d (actual %d, estimate 200), want actual: %v", got, actual, tc.wantKeyActual)
			}
			org := s.Stats().Orgs[0].TokensThisMinute
			other := int64(0)
			if tc.otherAt >= 0 {
				other = 200 // still in flight: its estimate
			}
			switch {
			case !tc.wantOrgHoldsFirst:
				if org != other {
					t.Errorf("org counter %d, want only the other call's %d (moved on: nothing to correct)", org, other)
				}
			case tc.wantOrgActual:
				if org != actual+other {
					t.Errorf("org counter %d, want %d", org, actual+other)
				}
			}
		})
	}
}

// TestGatewayCorrectionLandsNowhere: when the key itself calls again in
// the next minute, both of its counters move on (the call reaches the
// organization and then the key), so the earlier call's correction finds
// neither. The case where it lands on the key only is in
// TestGatewayReconcileOnlyOnTheSameMinute.
func TestGatewayCorrectionLandsNowhere(t *testing.T) {
	t.Parallel()
	cfg := gatewayConfig()
	cfg.TTFT = 15 * time.Second
	s, clk, ts := newSim(t, cfg)
	clk.Advance(50 * time.Second)
	done := goPost(t, ts.URL, "/v1/messages", msgBody(100), "x-api-key", "k")
	waitSleepers(t, clk, 1)
	clk.Set(t0.Add(61 * time.Second))
	goPost(t, ts.URL, "/v1/messages", msgBody(100), "x-api-key", "k")
	waitSleepers(t, clk, 2)
	clk.Set(t0.Add(65 * time.Second))
	<-done
	st := s.Stats()
	if st.ReconcileMissed != 1 || st.ReconciledKey != 0 || st.ReconciledOrg != 0 {
		t.Errorf("reconcile stats %+v: want one missed correction", st)
	}
	if got := keyCeiling(t, s, "key-0").TokensThisMinute; got != 200 {
		t.Errorf("key counter %d, want the second call's estimate 200", got)
	}
	clk.Set(t0.Add(80 * time.Second))
}

func TestGatewayImagesKeepEstimateAndCountingIsFree(t *testing.T) {
	t.Parallel()
	cfg := gatewayConfig()
	cfg.GatewayKeyTPM = 2500
	cfg.GatewayKeyRPS = 1
	cfg.TTFT = 0
	s, clk, ts := newSim(t, cfg)
	for range 20 {
		resp, body := post(t, ts.URL, "/v1/messages/count_tokens", `{"messages":[{"role":"user","content":"abcdefgh"}]}`, "x-api-key", "k")
		if resp.StatusCode != 200 || strings.TrimSpace(body) != `{"input_tokens":2}` {
			t.Fatalf("count_tokens: %d %s", resp.StatusCode, body)
		}
	}
	done := goPost(t, ts.URL, "/v1/images/generations", `{"prompt":"a cat","n":2}`, "x-api-key", "k")
	waitSleepers(t, clk, 1)
	clk.Advance(time.Second) // no TTFT, 500 ms an image
	// The answer is sent when the handler returns, after its correction.
	if body := <-done; !strings.Contains(body, `"b64_json"`) {
		t.Fatalf("image answer %q", body)
	}
	if got := keyCeiling(t, s, "key-0").TokensThisMinute; got != 2000 {
		t.Errorf("key tokens %d after an image call, want its estimate 2000 kept", got)
	}
	if st := s.Stats(); st.TokenCounts != 20 || st.Admitted != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestGatewayStreamCountsWhenItStarts(t *testing.T) {
	t.Parallel()
	cfg := gatewayConfig()
	cfg.TTFT = time.Second
	s, clk, ts := newSim(t, cfg)
	out := goPost(t, ts.URL, "/v1/messages", `{"max_tokens":50,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "x-api-key", "k")
	waitSleepers(t, clk, 1)
	if got := keyCeiling(t, s, "key-0"); got.RequestsThisSecond != 1 || got.TokensThisMinute != 51 {
		t.Fatalf("at stream start: %+v, want 1 request and the 51-token estimate", got)
	}
	clk.Advance(time.Second) // the TTFT; no time per token on the gateway config
	body := <-out
	if st := s.Stats(); st.InFlight != 0 || st.Admitted != 1 {
		t.Errorf("after the stream: %+v", st)
	}
	for _, ev := range []string{"event: message_start", "event: content_block_delta", "event: message_delta", "event: message_stop"} {
		if !strings.Contains(body, ev) {
			t.Errorf("stream lacks %q", ev)
		}
	}
}

// TestGatewayKeyOrgMappingIsStable: a key's organization is FNV-1a-64 of
// the key modulo the number of organizations, as the package doc says, so
// it is the same in every process and under every seed. The values are
// literal (worked out by hand from the FNV-1a definition): a change of
// hash, or a seeded one, fails here.
func TestGatewayKeyOrgMappingIsStable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key  string
		orgs int
		want int
	}{
		{"", 7, 2},
		{"a", 7, 5},
		{"sk-123", 7, 4},
		{"key-a", 7, 6},
		{"key-b", 7, 3},
		{strings.Repeat("z", 300), 7, 2},
		{"a", 1000, 996},
		{"sk-123", 1000, 558},
		{"key-b", 2, 1},
		{"a", 1, 0},
		{"sk-123", 0, 0},
	}
	for _, tc := range tests {
		if got := orgOf(tc.key, tc.orgs); got != tc.want {
			t.Errorf("orgOf(%.12q, %d) = %d, want %d", tc.key, tc.orgs, got, tc.want)
		}
	}
}
