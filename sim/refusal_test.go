package sim

import (
	"testing"
	"time"
)

// TestRefusalCost: with RefusalCost F each refusal takes F of the refused
// request's cost from the limiter — the PTU bucket's level rises by F ×
// its estimate, the window counts a whole request for every 1/F
// refusals, the gateway charges F × its estimate to its key's and
// organization's tokens — and with 0 a refusal takes nothing.
func TestRefusalCost(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{0, 0.02, 0.5} {
		cfg := testConfig() // C = 1,000 tokens, D = 1,000 tokens/s
		cfg.RefusalCost = f
		p := newLimiter(cfg, t0, nil, &counters{})
		for range 11 { // 11 × 100 tokens from empty: 110%
			if a := p.admit(t0, call{estimate: 100}); !a.admitted {
				t.Fatal("refused under 100%")
			}
		}
		if a := p.admit(t0, call{estimate: 1000}); a.admitted {
			t.Fatal("admitted over 100%")
		}
		var st Stats
		p.report(t0, &st)
		if want := 110 + 100*f; st.UtilizationPct < want-1e-9 || st.UtilizationPct > want+1e-9 {
			t.Errorf("ptu, cost %v: utilization %v%% after a refusal of 1,000 tokens, want %v%%", f, st.UtilizationPct, want)
		}

		w := cfg
		w.Profile, w.WindowSize, w.WindowLimit = ProfileWindow, 10*time.Second, 100
		wl := newLimiter(w, t0, nil, &counters{})
		for range 50 {
			wl.admit(t0, call{})
		}
		wl.(*windowLimiter).fixed.limit = 50 // full: every arrival from here is refused
		for range 100 {
			if a := wl.admit(t0, call{}); a.admitted {
				t.Fatal("window: admitted over its limit")
			}
		}
		if used, want := wl.(*windowLimiter).fixed.used, 50+int64(100*f+1e-9); used != want {
			t.Errorf("window, cost %v: %d requests counted after 100 refusals, want %d", f, used, want)
		}

		g := cfg
		g.Profile, g.GatewayOrgs, g.GatewayOrgRPS, g.GatewayKeyRPS = ProfileGateway, 1, 1, 100
		g.GatewayOrgTPM, g.GatewayKeyTPM = 1_000_000, 1_000_000
		n := &counters{}
		gl := newLimiter(g, t0, nil, n)
		keys := keyTable{max: 10}
		ks, _ := gl.track(&keys, "k")
		if a := gl.admit(t0, call{ks: ks, est: 1000}); !a.admitted {
			t.Fatal("gateway: refused the first")
		}
		if a := gl.admit(t0, call{ks: ks, est: 1000}); a.admitted { // the org's second request this second
			t.Fatal("gateway: admitted over 1 req/s")
		}
		org := gl.(*gatewayLimiter).orgs[0]
		if got, want := org.tokens.used, 1000+int64(1000*f+0.5); got != want || ks.limits.tokens.used != want {
			t.Errorf("gateway, cost %v: org %d, key %d tokens after a refusal of 1,000, want %d", f, got, ks.limits.tokens.used, want)
		}
	}
	c := testConfig()
	for _, bad := range []float64{-0.01, 1.5} {
		c.RefusalCost = bad
		if c.Validate() == nil {
			t.Errorf("accepted refusal cost %v", bad)
		}
	}
}
