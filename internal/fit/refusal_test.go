package fit

import (
	"os"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/client"
)

// TestRefusalCostEstimated: the main job's run against a simulator whose
// refusals take 5% of a request each (the hidden deployment otherwise),
// weighed at its other settings, fits a cost of 5% and says so; the same
// deployment without the cost fits none, and says why.
func TestRefusalCostEstimated(t *testing.T) {
	t.Parallel()
	for _, want := range []float64{0.05, 0} {
		c := hidden()
		c.RefusalCost = want
		f, err := os.Open(characterize(t, c))
		if err != nil {
			t.Fatal(err)
		}
		s, err := fromResults(t.Context(), []input{{Name: "r.csv", R: f}}, client.DefaultPromptTokens, client.DefaultMaxTokens, 0, nil)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		j := Job{Threshold: DefaultThreshold, MinAgreement: DefaultMinAgreement}
		fr := fitter{job: &j, sends: &s, held: map[string]bool{}, rp: newReplayer(&s)}
		at := hidden() // the fitted settings: the truth's, without a cost
		if s.LatencyOK {
			at.TTFT, at.TPOT = s.Latency.At(at)
		}
		sc, err := fr.scoreConfig(t.Context(), at, 0)
		if err != nil {
			t.Fatal(err)
		}
		mf, err := fr.refusalCost(t.Context(), modelFit{cfg: at, score: sc})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("cost %v: fitted %v (%s)", want, mf.cfg.RefusalCost, mf.refusalCost)
		if mf.cfg.RefusalCost != want {
			t.Errorf("a refusal's cost %v fitted as %v: %s", want, mf.cfg.RefusalCost, mf.refusalCost)
		}
		if want == 0 && !strings.HasPrefix(mf.refusalCost, "0: no cost") {
			t.Errorf("no cost, and the reason %q", mf.refusalCost)
		}
	}
}
