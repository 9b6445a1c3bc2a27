package sim

import (
	"net/http"
	"testing"
	"time"
)

// TestWindowProfile: WindowLimit requests per clock-aligned window are
// admitted whatever they cost; the next is refused with the time to the
// window's end, and the next window admits again.
func TestWindowProfile(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Profile, cfg.WindowSize, cfg.WindowLimit = ProfileWindow, 10*time.Second, 3
	s, clk, ts := newSim(t, cfg)
	clk.Set(t0.Add(2500 * time.Millisecond)) // 7.5 s before the window ends
	for i := range 3 {
		if resp, _ := post(t, ts.URL, azurePath, chatBody(40_000, 100)); resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d of the window: %d", i+1, resp.StatusCode)
		}
	}
	resp, _ := post(t, ts.URL, azurePath, chatBody(40, 1))
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After-Ms") != "7500" || resp.Header.Get("Retry-After") != "8" {
		t.Fatalf("the 4th: %d, retry-after-ms %q, retry-after %q", resp.StatusCode, resp.Header.Get("Retry-After-Ms"), resp.Header.Get("Retry-After"))
	}
	clk.Set(t0.Add(10 * time.Second))
	if resp, _ := post(t, ts.URL, azurePath, chatBody(40, 1)); resp.StatusCode != http.StatusOK {
		t.Fatalf("the next window: %d", resp.StatusCode)
	}
	if st := s.Stats(); st.Admitted != 4 || st.Refused != 1 {
		t.Fatalf("stats: %d admitted, %d refused", st.Admitted, st.Refused)
	}
	for _, bad := range []func(*Config){
		func(c *Config) { c.WindowSize = 0 },
		func(c *Config) { c.WindowLimit = 0 },
	} {
		c := cfg
		c.Clock = nil
		bad(&c)
		if c.Validate() == nil {
			t.Errorf("accepted %+v", c)
		}
	}
}
