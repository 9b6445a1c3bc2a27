package campaign

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/sim"
)

// TestEveryDialectEndToEnd sends a burst to a simulator speaking each
// dialect, through the client API that speaks it, and checks that every
// request is one row and that the waits the rows recorded are exactly the
// ones the simulator wrote, field by field.
func TestEveryDialectEndToEnd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		dialect string
		tweak   func(*sim.Config)
		api     string
		path    string // appended to the simulator's URL for --url (empty: azure endpoint)
		source  string // the results wait source that must win
		written string // the simulator field it reads
		model   bool
	}{
		{"azure", sim.DialectAzure, nil, client.APIAzure, "", results.WaitRetryAfterMS, sim.SourceRetryAfterMS, false},
		{"openai", sim.DialectOpenAI, nil, client.APIOpenAI, "/v1/chat/completions", results.WaitRetryAfterSeconds, sim.SourceRetryAfter, true},
		{"openai, resets only", sim.DialectOpenAI, func(c *sim.Config) { c.OmitRetryHeaders = true }, client.APIOpenAI, "/v1/chat/completions", results.WaitOpenAIReset, sim.SourceResetTokens, true},
		{"anthropic", sim.DialectAnthropic, nil, client.APIAnthropic, "/v1/messages", results.WaitRetryAfterSeconds, sim.SourceRetryAfter, true},
		{"ietf", sim.DialectIETF, nil, client.APIAzure, "", results.WaitIETFReset, sim.SourceRateLimit, false},
		{"ietf, older drafts", sim.DialectIETF, func(c *sim.Config) { c.IETFLegacy = true }, client.APIAzure, "", results.WaitRateLimitReset, sim.SourceRateLimitReset, false},
		{"gemini", sim.DialectGemini, nil, client.APIGemini, "", results.WaitGeminiRetryDelay, sim.SourceRetryInfo, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := sim.DefaultConfig()
			cfg.Dialect, cfg.PTU = tt.dialect, 20
			cfg.TTFT, cfg.TPOT = 0, 0 // the 429s' advice is the point, not the 200s' latency
			if tt.tweak != nil {
				tt.tweak(&cfg)
			}
			srv, err := sim.Start(context.Background(), cfg, "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			spec := client.Spec{API: tt.api, PromptTokens: 1000, MaxTokens: 100, Timeout: 10 * time.Second, APIKeyEnv: "PTUPROBE_TEST_KEY"}
			switch {
			case tt.api == client.APIAzure:
				spec.Endpoint, spec.Deployment = srv.URL, srv.Deployment
			default:
				spec.URL = srv.URL + tt.path
			}
			if tt.model {
				spec.Model = srv.Deployment
			}
			plan, err := BurstPlan(burst.Config{Size: 40, Waves: 1}, false)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "results.csv")
			job := Job{
				Plans:   []Plan{plan},
				Target:  Target{Spec: spec, Getenv: func(string) string { return "test-key" }},
				Output:  out,
				Options: Options{MaxInFlight: 64, MaxRequests: 100},
			}
			if _, err := Run(context.Background(), job); err != nil {
				t.Fatal(err)
			}
			var got []float64
			rows := testkit.ReadRecords(t, out)
			if len(rows) != 40 {
				t.Fatalf("%d rows for 40 requests", len(rows))
			}
			for _, r := range rows {
				if r.Status != http.StatusTooManyRequests {
					continue
				}
				if r.WaitSource != tt.source || r.Dialect != wantDialect(tt.dialect, cfg) {
					t.Fatalf("a 429 read as %s in dialect %q, want %s in %q", r.WaitSource, r.Dialect, tt.source, wantDialect(tt.dialect, cfg))
				}
				got = append(got, r.WaitMS)
			}
			var want []float64
			for _, a := range srv.Server.Advised() {
				if a.Source == tt.written {
					want = append(want, float64(a.WallMS))
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if len(got) == 0 || !slices.Equal(got, want) {
				t.Fatalf("recorded waits %v\nadvised (%s)    %v", got, tt.written, want)
			}
		})
	}
}

func wantDialect(d string, c sim.Config) string {
	switch {
	case d == sim.DialectIETF && c.IETFLegacy:
		return results.DialectLegacy
	}
	return d
}
