package sim

import (
	"encoding/json"
	"testing"
	"time"
)

// Requests of 396 characters (99 tokens) with max_tokens 1 cost exactly
// 100 tokens estimated and actual, so every level below is exact.
const req100 = 396

func TestRetryAfterExactForScriptedArrivals(t *testing.T) {
	t.Parallel()
	type step struct {
		advance  time.Duration
		status   int
		ms, secs string
		util     string
	}
	tests := []struct {
		name     string
		burstPct float64
		steps    []step
	}{
		{
			name: "no burst allowance",
			steps: []step{
				// 11 admitted from empty: the 11th arrives at exactly 100%.
				{0, 200, "", "", "0.0%"}, {0, 200, "", "", "10.0%"}, {0, 200, "", "", "20.0%"},
				{0, 200, "", "", "30.0%"}, {0, 200, "", "", "40.0%"}, {0, 200, "", "", "50.0%"},
				{0, 200, "", "", "60.0%"}, {0, 200, "", "", "70.0%"}, {0, 200, "", "", "80.0%"},
				{0, 200, "", "", "90.0%"}, {0, 200, "", "", "100.0%"},
				{0, 429, "100", "1", "110.0%"},                                        // 100 tokens over at 1,000/s
				{40 * time.Millisecond, 429, "60", "1", "106.0%"},                     // drained 40
				{60 * time.Millisecond, 200, "", "", "100.0%"},                        // exactly 100%: admitted
				{time.Millisecond, 429, "99", "1", "109.9%"},                          // 99 over
				{500 * time.Microsecond, 429, "99", "1", ""},                          // 98.5 ms rounds up
				{98*time.Millisecond + 499*time.Microsecond, 429, "1", "1", "100.0%"}, // 0.001 ms over
			},
		},
		{
			name:     "burst allowance of three requests",
			burstPct: 30,
			steps: func() []step {
				var s []step
				for range 11 {
					s = append(s, step{0, 200, "", "", ""})
				}
				return append(s,
					step{0, 200, "", "", "110.0%"}, step{0, 200, "", "", "120.0%"}, step{0, 200, "", "", "130.0%"},
					step{0, 429, "400", "1", "140.0%"}, // allowance spent: wait for all of it to drain
					step{400 * time.Millisecond, 200, "", "", "100.0%"},
					// Over 100% again, and the allowance earns back only
					// 30 tokens/s: not enough for a 100-token request.
					step{0, 429, "100", "1", "110.0%"},
				)
			}(),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig()
			cfg.BurstPct = tc.burstPct
			cfg.BurstRefill = 10 * time.Second
			cfg.UtilizationHeader = true
			_, clk, ts := newSim(t, cfg)
			for i, st := range tc.steps {
				clk.Advance(st.advance)
				resp, body := post(t, ts.URL, azurePath, chatBody(req100, 1))
				if resp.StatusCode != st.status {
					t.Fatalf("step %d: status %d, want %d (%s)", i, resp.StatusCode, st.status, body)
				}
				if got := resp.Header.Get("Retry-After-Ms"); got != st.ms {
					t.Errorf("step %d: retry-after-ms %q, want %q", i, got, st.ms)
				}
				if got := resp.Header.Get("Retry-After"); got != st.secs {
					t.Errorf("step %d: retry-after %q, want %q", i, got, st.secs)
				}
				if st.util != "" {
					if got := resp.Header.Get("Azure-Openai-Deployment-Utilization"); got != st.util {
						t.Errorf("step %d: utilization %q, want %q", i, got, st.util)
					}
				}
				if st.status == 429 {
					var e struct {
						Error struct{ Code, Message string }
					}
					if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Code != "429" {
						t.Errorf("step %d: body %s: not an Azure 429 error", i, body)
					}
				}
			}
		})
	}
}
