package calibrate

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/results"
)

// slowSender answers 200 to only one request in three: never a 429, but
// not keeping up either.
type slowSender struct{}

func (s *slowSender) Send(_ context.Context, req dispatch.Request, record func(*results.Record)) {
	r := req.First()
	if req.Seq%3 == 0 {
		r.Status = 200
	} else {
		r.Error = results.ClassTimeout
	}
	record(&r)
}

func TestSlowTargetIsNotCapacity(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		res, err := Run(t.Context(), Config{MinRate: 20, MaxRate: 40, Factor: 2, ProbeDuration: 10 * time.Second, Depth: 1,
			Cooldown: time.Second, Wait: sleep.Until}, &slowSender{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Knee != 0 || res.Probes[0].Verdict != VerdictSlow || res.Probes[0].Sent != 200 {
			t.Fatalf("%+v", res)
		}
	})
}

func TestGridAndValidate(t *testing.T) {
	t.Parallel()
	c := Config{MinRate: 0.5, MaxRate: 6, Factor: 2, ProbeDuration: 10 * time.Second, Depth: 2}
	got := c.Grid()
	want := []float64{0.5, 1, 2, 4, 6}
	if len(got) != len(want) {
		t.Fatalf("grid %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("grid %v, want %v", got, want)
		}
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Config{
		{MinRate: 0, MaxRate: 1, Factor: 2, ProbeDuration: time.Second},
		{MinRate: 2, MaxRate: 1, Factor: 2, ProbeDuration: time.Second},
		{MinRate: 1, MaxRate: 2, Factor: 1, ProbeDuration: time.Second},
		{MinRate: 1, MaxRate: 2, Factor: 2},
		{MinRate: 1, MaxRate: 2, Factor: 2, ProbeDuration: time.Second, Depth: -1},
		{MinRate: 1, MaxRate: 1000, Factor: 2, ProbeDuration: time.Minute, Depth: 4, MaxRequests: 10000},
	} {
		if bad.Validate() == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
}

// phasedSender admits the first n requests, then refuses every one with
// a 429 advising wait ms.
type phasedSender struct {
	mu   sync.Mutex
	n    int
	wait float64
}

func (s *phasedSender) Send(_ context.Context, req dispatch.Request, record func(*results.Record)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := req.First()
	defer record(&r)
	if s.n > 0 {
		s.n--
		r.Status = 200
		return
	}
	r.Status, r.WaitMS, r.WaitSource = 429, s.wait, results.WaitRetryAfterMS
}

// TestPauseIsCappedAndAnInterruptKeepsWhatWasMeasured: a target that
// advises a wait of 10¹² ms (decades) after the second probe does not
// stall the calibration past MaxPause; an interrupt during that pause
// reports the rate admitted so far, not "even 0/s was not admitted".
func TestPauseIsCappedAndAnInterruptKeepsWhatWasMeasured(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		cfg := Config{MinRate: 1, MaxRate: 8, Factor: 2, ProbeDuration: 10 * time.Second, Depth: 2,
			Cooldown: time.Second, MaxPause: 30 * time.Second, Wait: sleep.Until}
		// Probe 1 (1/s × 10 s) is admitted; probe 2 (2/s) is refused.
		start := time.Now()
		res, err := Run(t.Context(), cfg, &phasedSender{n: 10, wait: results.MaxWaitMS}, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Probes: 1/s, 2/s, then bisection at √2 and one more: at most
		// 4 × 10 s of probing, and pauses of 1 s, then 30 s (capped) twice.
		if got, limit := time.Since(start), 40*time.Second+time.Second+2*30*time.Second; got > limit || len(res.Probes) != 4 {
			t.Fatalf("calibration took %v with %d probes, want at most %v (pauses capped at MaxPause)", got, len(res.Probes), limit)
		}
		if res.Knee != 1 || res.Interrupted {
			t.Fatalf("%+v", res)
		}

		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(25*time.Second, cancel) // during the pause after probe 2
		res, err = Run(ctx, cfg, &phasedSender{n: 10, wait: results.MaxWaitMS}, nil)
		if !errors.Is(err, dispatch.ErrInterrupted) || !res.Interrupted || res.Knee != 1 || len(res.Probes) != 2 {
			t.Fatalf("interrupted: err %v res %+v", err, res)
		}
		var table bytes.Buffer
		res.WriteTable(&table)
		if !strings.Contains(table.String(), "interrupted after 2 probes: 1/s was admitted") {
			t.Fatalf("table:\n%s", table.String())
		}
	})
}

// TestProgressLines: a probe's line and the start's announcement, as the
// command printed them when it put them in words itself.
func TestProgressLines(t *testing.T) {
	p := Probe{Step: 3, Offered: 2, Verdict: "refused", N429: 4, Admitted: 1.257}
	if got, want := p.String(), "probe 3: 2.000/s → refused (4 429s, 1.26/s admitted)"; got != want {
		t.Errorf("probe: %q, want %q", got, want)
	}
	c := Config{MinRate: 1, MaxRate: 4, Factor: 2, ProbeDuration: 2 * time.Second, Depth: 1, Cooldown: time.Second, MaxPause: 2 * time.Minute}
	if got, want := c.Announce(), "calibrate: at most 4 probes of 2s, expected to take at most about 11s (6m8s if the target advises long waits)"; got != want {
		t.Errorf("announcement: %q, want %q", got, want)
	}
}
