package metrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ptuprobe/ptuprobe/sim"
)

// TestSimulatorMetricsAreItsStats: what a scrape shows is what the
// simulator counted, and admitted + refused is every answer a client got.
func TestSimulatorMetricsAreItsStats(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.PTU, cfg.BurstPct, cfg.TTFT, cfg.TPOT = 1, 0, 0, 0
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	answers := map[int]int{}
	body := `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 4000) + `"}],"max_tokens":100}`
	for range 20 {
		resp, err := http.Post(srv.URL+"/openai/deployments/"+cfg.Deployment+"/chat/completions?api-version=2024-10-21", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		answers[resp.StatusCode]++
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewSimulator(s.Stats))
	st := s.Stats()
	if answers[200] == 0 || answers[429] == 0 {
		t.Fatalf("answers %v: want some of each", answers)
	}
	for name, want := range map[string]uint64{
		"ptuprobe_sim_requests_total": st.Requests,
		"ptuprobe_sim_admitted_total": uint64(answers[200]),
		"ptuprobe_sim_refused_total":  uint64(answers[429]),
	} {
		if got := gathered(t, reg, name, ""); got != float64(want) {
			t.Errorf("%s = %v, want %d", name, got, want)
		}
	}
	if n := gathered(t, reg, "ptuprobe_sim_advised_waits_total", sim.SourceRetryAfterMS); n != float64(answers[429]) {
		t.Errorf("retry-after-ms waits %v, want one per 429 (%d)", n, answers[429])
	}
	if u := gathered(t, reg, "ptuprobe_sim_utilization_ratio", ""); u <= 0 {
		t.Errorf("utilization %v", u)
	}
	if n, err := testutil.GatherAndCount(reg); err != nil || n < 15 {
		t.Errorf("%d series, %v", n, err)
	}
}

// gathered is the value of the series of name (with source label source,
// when given) in reg.
func gathered(t *testing.T, reg *prometheus.Registry, name, source string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if source != "" && (len(m.GetLabel()) != 1 || m.GetLabel()[0].GetValue() != source) {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no %s{%s}", name, source)
	return 0
}
