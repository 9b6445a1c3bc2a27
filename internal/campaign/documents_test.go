package campaign

import (
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/charplan"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/schedule"
	"github.com/ptuprobe/ptuprobe/sim"
)

// TestMainJobOnTheDocumentsProfile: the main job's plans, as
// `ptuprobe characterize` sends them with no flags (charplan, the
// client's default request), against the embedded simulator's documents
// profile, in memory: the 429s' waits have the published shape — a short
// median, a long tail of over 12 s, nothing between 100 ms and 4 s
// beyond 3% — and the held-out schedule's waits are all under 1 s.
func TestMainJobOnTheDocumentsProfile(t *testing.T) {
	t.Parallel()
	docs, err := sim.OpenProfile(sim.ProfileDocuments)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "results.csv")
	synctest.Test(t, func(t *testing.T) {
		bp, err := BurstPlan(charplan.Burst(), false)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := SchedulePlan(schedule.Config{Phases: charplan.Phases()})
		if err != nil {
			t.Fatal(err)
		}
		job := Job{
			Plans:  []Plan{bp, sp},
			Output: out,
			Target: Target{Spec: client.Spec{PromptTokens: client.DefaultPromptTokens, MaxTokens: client.DefaultMaxTokens, Timeout: time.Minute},
				Sim: docs.Config, InMemory: true},
			Options: Options{MaxInFlight: 512, MaxRequests: 1000, Wait: sleep.Until},
		}
		if _, err := Run(t.Context(), job); err != nil {
			t.Fatal(err)
		}
	})
	waits := map[string][]float64{}
	for _, r := range testkit.ReadRecords(t, out) {
		if r.Status == 429 && r.WaitMS >= 0 {
			waits[r.Group] = append(waits[r.Group], r.WaitMS)
			waits["overall"] = append(waits["overall"], r.WaitMS)
		}
	}
	for _, g := range []string{"overall", "burst-shaped"} {
		w := waits[g]
		slices.Sort(w)
		if len(w) < 20 {
			t.Fatalf("%s: %d 429s with a wait", g, len(w))
		}
		middle := 0
		for _, v := range w {
			if v > 100 && v < 4000 {
				middle++
			}
		}
		p50, p90, p99, top := analyze.Percentile(w, 50), analyze.Percentile(w, 90), analyze.Percentile(w, 99), w[len(w)-1]
		t.Logf("%s: %d 429s, p50 %.0f, p90 %.0f, p99 %.0f, max %.0f ms, %d between 100 ms and 4 s", g, len(w), p50, p90, p99, top, middle)
		if p50 < 30 || p50 > 60 || p90 < 35 || p90 > 70 || p99 < 12_000 || p99 > 22_000 || top > 25_000 || float64(middle) > 0.03*float64(len(w)) {
			t.Errorf("%s: not the documents' shape (p50 30–60, p90 35–70, p99 12–22 s, max ≤ 25 s, ≤ 3%% between 100 ms and 4 s)", g)
		}
	}
	if s := waits["scheduled-shaped"]; len(s) > 0 && slices.Max(s) >= 1000 {
		t.Errorf("scheduled-shaped (held out): a wait of %.0f ms, want all under 1 s", slices.Max(s))
	}
}
