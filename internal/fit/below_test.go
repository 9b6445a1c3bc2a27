package fit

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/sim"
)

// TestScoreBelowStopsOnlyWhatCannotFit: on served target a's recorded
// run, a replay told that only an objective of at most limit matters
// (scoreBelow) ends early exactly when its full score is poor (the
// agreement under MinAgreement) and above limit + rangeSlack, and
// otherwise scores as the full replay does.
func TestScoreBelowStopsOnlyWhatCannotFit(t *testing.T) {
	t.Parallel()
	s := servedA(t)
	j := Job{Threshold: DefaultThreshold, MinAgreement: DefaultMinAgreement}
	fr := &fitter{job: &j, sends: &s, held: map[string]bool{}, rp: newReplayer(&s)}
	params := tables(sim.ProfilePTU)[0]
	base := fr.base(sim.ProfilePTU)
	stopped, full := 0, 0
	for _, ptu := range []float64{60, 150, 240, 250.3, 260, 400, 900} {
		c := base
		c.PTU, c.BucketDepth, c.BurstPct = ptu, 2e9, 150
		u := make([]float64, len(params))
		for i, p := range params {
			u[i] = p.unit(p.get(c))
		}
		want, err := fr.score(t.Context(), sim.ProfilePTU, params, u)
		if err != nil {
			t.Fatal(err)
		}
		for _, limit := range []float64{0, 0.05, 0.5} {
			at, phase, err := fr.settings(sim.ProfilePTU, params, u)
			if err != nil {
				t.Fatal(err)
			}
			got, done, err := fr.scoreBelow(t.Context(), at, phase, limit)
			if err != nil {
				t.Fatal(err)
			}
			cannot := fr.quality(want) == sim.FitPoor && want.objective > limit+rangeSlack
			switch {
			case !done && !cannot:
				t.Errorf("%v PTU, limit %v: stopped, but its full score %.3f (%s) could fit", ptu, limit, want.objective, fr.quality(want))
			case done && got.objective != want.objective:
				t.Errorf("%v PTU, limit %v: objective %v, the full replay's %v", ptu, limit, got.objective, want.objective)
			case !done:
				stopped++
			default:
				full++
			}
		}
	}
	if stopped == 0 || full == 0 {
		t.Errorf("%d stopped, %d in full: want some of each", stopped, full)
	}
}

// TestShortBodiesReplayAlike: served target a's run replayed with the
// short bodies (body) is answered send for send as with bodies of the
// prompt's length in characters (four a token, what the simulator would
// count), at settings that refuse some and admit others.
func TestShortBodiesReplayAlike(t *testing.T) {
	t.Parallel()
	s := servedA(t)
	short, long := newReplayer(&s), newReplayer(&s)
	for b := range long.bodies {
		long.bodies[b] = fmt.Appendf(nil, `{"messages":[{"role":"user","content":"%s"}],"max_tokens":%d}`, strings.Repeat("a", 4*max(b[0], 1)), b[1])
		if len(short.bodies[b]) >= len(long.bodies[b]) {
			t.Errorf("prompt %d, max %d: a body of %d bytes", b[0], b[1], len(short.bodies[b]))
		}
	}
	fr := &fitter{job: &Job{}, sends: &s}
	refused := 0
	for _, ptu := range []float64{150, 250.3, 400} {
		c := fr.base(sim.ProfilePTU)
		c.PTU, c.BucketDepth, c.BurstPct = ptu, 2e9, 150
		a, err := short.replay(t.Context(), c, 0)
		if err != nil {
			t.Fatal(err)
		}
		b, err := long.replay(t.Context(), c, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%v PTU, send %d: %+v with the short body, %+v with the long", ptu, i, a[i], b[i])
			}
			refused += b01(a[i].refused)
		}
	}
	if refused == 0 || refused == 3*len(short.sends) {
		t.Errorf("%d refused: want some refused, some admitted", refused)
	}
}

// servedA is served target a's recorded run (testdata/served-a.csv) read
// as the fit reads a results file.
func servedA(t *testing.T) workload {
	t.Helper()
	f, err := os.Open("testdata/served-a.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := fromResults(t.Context(), []input{{Name: "served-a.csv", R: f}}, client.DefaultPromptTokens, client.DefaultMaxTokens, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
