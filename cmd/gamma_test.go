package cmd

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/schedule"
)

// TestScheduleGammaArrivals: --arrival gamma:CV plans the traffic: every
// row's intended time is the gamma plan's arrival of its seq, as
// schedule plans it for the seed.
func TestScheduleGammaArrivals(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("retry-after-ms", "7")
		w.WriteHeader(429)
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "results.csv")
	code, _, stderr := runCLI(context.Background(), "schedule", "--url", srv.URL+"/v1/chat/completions",
		"--rate", "200/s", "--duration", "250ms", "--arrival", "gamma:3", "--seed", "9", "-o", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var want []float64
	for p := schedule.NewPlan(schedule.Config{Phases: []schedule.Phase{{Name: "constant", Duration: 250 * time.Millisecond, From: 200, To: 200}}, Arrival: "gamma:3", Seed: 9}); ; {
		at, _, ok := p.Next()
		if !ok {
			break
		}
		want = append(want, float64(at)/float64(time.Millisecond))
	}
	recs := readResults(t, out)
	if len(recs) != len(want) || len(want) < 10 {
		t.Fatalf("%d rows; the plan has %d arrivals", len(recs), len(want))
	}
	for _, r := range recs {
		if math.Abs(r.IntendedMS-want[r.Seq]) > 0.001 {
			t.Fatalf("seq %d intended at %v ms; the gamma plan has it at %v", r.Seq, r.IntendedMS, want[r.Seq])
		}
	}
}

// TestDryRunNamesTheGammaProcess: --arrival gamma:CV reaches the
// scheduled plan, and the dry run names it.
func TestDryRunNamesTheGammaProcess(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runCLI(context.Background(), "schedule", "--rate", "5/s", "--duration", "2s", "--arrival", "gamma:2", "--seed", "3", "--dry-run")
	if code != 0 || !strings.Contains(stdout, "scheduled plan (gamma:2 arrivals): constant 2s at 5/s: 10 requests") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
