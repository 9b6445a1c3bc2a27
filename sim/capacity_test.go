package sim

import (
	"testing"
	"time"
)

// TestCapacity: the PTU's drain over a request's mean actual cost (its
// completion drawn as the handler draws it), the gateway's tightest
// ceiling for the fleet's keys, the window's limit over its length.
func TestCapacity(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	// 170 PTU × 2500 / 60 = 7083.3 tokens/s over 1000 + 3 × (77 + 256)/2.
	got, formula := c.Capacity(1000, 256, 16)
	if want := 170 * 2500.0 / 60 / (1000 + 3*166.5); got < want-1e-9 || got > want+1e-9 || formula == "" {
		t.Fatalf("ptu capacity %v, want %v (%s)", got, want, formula)
	}
	if lo, hi := completionRange(256); lo != 77 || hi != 256 {
		t.Errorf("completions of 256: %d to %d", lo, hi)
	}
	g := DefaultConfig()
	g.Profile, g.GatewayKeyRPS, g.GatewayOrgRPS = ProfileGateway, 1, 8
	if got, _ := g.Capacity(1000, 256, 16); got != 8 {
		t.Errorf("gateway of 16 keys of 1/s under 8/s: %v", got)
	}
	w := DefaultConfig()
	w.Profile, w.WindowLimit, w.WindowSize = ProfileWindow, 50, 10*time.Second
	if got, _ := w.Capacity(1000, 256, 16); got != 5 {
		t.Errorf("window of 50 per 10 s: %v", got)
	}
}
