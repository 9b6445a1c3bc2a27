package sim

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// testConfig is a small deployment with round numbers: D = 1,000
// tokens/s, C = 1,000 tokens, no burst allowance, no latency, output
// tokens weighing 1.
func testConfig() Config {
	cfg := DefaultConfig()
	cfg.PTU = 60
	cfg.TokensPerPTU = 1000
	cfg.BucketDepth = time.Second
	cfg.BurstPct = 0
	cfg.OutputWeight = 1
	cfg.TTFT, cfg.TPOT = 0, 0
	return cfg
}

func newSim(t *testing.T, cfg Config) (*Server, *ManualClock, *httptest.Server) {
	t.Helper()
	clk := NewManualClock(t0)
	cfg.Clock = clk
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	// Release every handler still parked on the clock, or Close would
	// wait for them forever. Cleanups run last-in first-out.
	t.Cleanup(func() { clk.Advance(24 * time.Hour) })
	return s, clk, ts
}

// chatBody is a one-message request of promptChars characters.
func chatBody(promptChars, maxTokens int) string {
	b := `{"messages":[{"role":"user","content":"` + strings.Repeat("p", promptChars) + `"}]`
	if maxTokens > 0 {
		b += `,"max_tokens":` + strconv.Itoa(maxTokens)
	}
	return b + "}"
}

const azurePath = "/openai/deployments/" + DefaultDeployment + "/chat/completions?api-version=2024-10-21"

func post(t *testing.T, url, path, body string, hdr ...string) (*http.Response, string) {
	t.Helper()
	resp, b, err := do(url, path, body, hdr...)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// do posts body and reads the whole answer; safe in any goroutine.
func do(url, path, body string, hdr ...string) (*http.Response, string, error) {
	req, err := http.NewRequest(http.MethodPost, url+path, strings.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

// goPost posts in a goroutine and delivers the body (empty on error,
// which is reported with t.Error).
func goPost(t *testing.T, url, path, body string, hdr ...string) <-chan string {
	out := make(chan string, 1)
	go func() {
		_, b, err := do(url, path, body, hdr...)
		if err != nil {
			t.Error(err)
		}
		out <- b
	}()
	return out
}

// waitSleepers waits until n handlers are parked on the manual clock, so
// the test can move time knowing where every request stands.
func waitSleepers(t *testing.T, clk *ManualClock, n int) {
	t.Helper()
	if err := clk.AwaitSleepers(t.Context(), n); err != nil {
		t.Fatalf("%d sleepers, want %d: %v", clk.Sleepers(), n, err)
	}
}
