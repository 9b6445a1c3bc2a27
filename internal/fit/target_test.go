package fit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/schedule"
	"github.com/ptuprobe/ptuprobe/sim"
)

// randomTarget is a target no limiter model explains: whatever the load,
// it answers 429 to a seeded half of the requests, advising a wait
// uniform over 0–10 s, and 200 with a usage to the rest.
func randomTarget(t *testing.T) *httptest.Server {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(30, 30))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		refuse, wait := r.Float64() < 0.5, r.Float64()*10_000
		mu.Unlock()
		if refuse {
			w.Header().Set("Retry-After-Ms", fmt.Sprintf("%.0f", wait))
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"code":"429","message":"busy"}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":60,"total_tokens":1060}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// RandomTargetFile is a short run of burst waves and a schedule against
// the random target on loopback (a second of wall time), as a named
// target, written to a results file.
func randomTargetFile(t *testing.T) string {
	t.Helper()
	srv := randomTarget(t)
	out := filepath.Join(t.TempDir(), "random.csv")
	b, err := campaign.BurstPlan(burst.Config{Size: 40, Waves: 4, Gap: 100 * time.Millisecond}, false)
	if err != nil {
		t.Fatal(err)
	}
	s, err := campaign.SchedulePlan(schedule.Config{Phases: []schedule.Phase{{Name: "ramp", Duration: time.Second, From: 50, To: 150}}})
	if err != nil {
		t.Fatal(err)
	}
	spec := defaultSpec()
	spec.URL, spec.KeyOptional = srv.URL+"/v1/chat/completions", true
	job := campaign.Job{Plans: []campaign.Plan{b, s}, Output: out, Replace: true,
		Target:  campaign.Target{Spec: spec, Getenv: func(string) string { return "" }},
		Options: campaign.Options{MaxInFlight: 256, MaxRequests: 1000}}
	if _, err := campaign.Run(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRandomTargetFitsPoorly is the second measure: a target no
// limiter model explains fits poorly, and says why.
func TestRandomTargetFitsPoorly(t *testing.T) {
	long(t, "a whole fit")
	t.Parallel()
	r := fitFiles(t, quick, nil, randomTargetFile(t))
	f := r.Profile.Fit
	t.Logf("model %s: %s", f.Model, f.Why)
	if f.Quality != sim.FitPoor || !strings.Contains(f.Why, "KS") {
		t.Fatalf("quality %s: %s", f.Quality, f.Why)
	}
}

// TestHoldOut: a held-out group is not fitted (its sends are outside the
// agreement, its waits outside the objective) but reported with its
// distance; the default holds out nothing. A group that does not exist,
// or holding out every group, is refused.
func TestHoldOut(t *testing.T) {
	t.Parallel()
	recorded := hiddenRun(t)
	r := fitModels(t, fixedPoint, []string{sim.ProfilePTU}, []string{results.GroupScheduled}, recorded)
	g := r.Profile.Fit.Groups
	if len(g) != 2 || g[0].HeldOut || !g[1].HeldOut || g[1].Twin.Count == 0 {
		t.Fatalf("groups %+v", g)
	}
	if !strings.Contains(r.Profile.Fit.Why, "held out, scheduled-shaped is") {
		t.Errorf("why: %s", r.Profile.Fit.Why)
	}
	for _, bad := range [][]string{{"no-such-group"}, {results.GroupBurst, results.GroupScheduled}} {
		fh, err := os.Open(recorded)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Run(context.Background(), Job{inputs: []input{{Name: "r.csv", R: fh}}, HoldOut: bad, Threshold: DefaultThreshold, MaxWork: DefaultMaxWork,
			MinAgreement: DefaultMinAgreement, PromptTokens: client.DefaultPromptTokens, MaxTokens: client.DefaultMaxTokens})
		fh.Close()
		if err == nil {
			t.Errorf("hold out %v: no error", bad)
		}
	}
}

// TestFitIsDeterministic: the same file fitted twice writes the same
// profile, byte for byte, though its points are replayed on every core
// (a batch of 12 quasi-random points a table, then a fixed point).
func TestFitIsDeterministic(t *testing.T) {
	t.Parallel()
	recorded := hiddenRun(t)
	var files []string
	for range 2 {
		var b strings.Builder
		if err := sim.WriteProfile(&b, fitModels(t, budget{global: 2, starts: 1, noScan: true}, []string{sim.ProfilePTU}, nil, recorded).Profile); err != nil {
			t.Fatal(err)
		}
		files = append(files, b.String())
	}
	if files[0] != files[1] {
		t.Fatalf("two fits of one file differ:\n%s\n%s", files[0], files[1])
	}
}
