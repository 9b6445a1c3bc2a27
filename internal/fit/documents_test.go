package fit

import (
	"bytes"
	"os"
	"testing"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/sim"
)

// TestDocumentsProfileIsTheFit: the embedded documents profile is what
// scripts/documents-profile.sh's `ptuprobe fit` writes — the main job's
// plan fitted to the published burst-shaped waits, the scheduled-shaped
// ones held out — and that fit is good: the model, the cold forecast
// among its parameters, gives the documents' short median and long tail.
func TestDocumentsProfileIsTheFit(t *testing.T) {
	t.Parallel()
	f, err := os.Open("../../analyze/testdata/upstream/retry_after_ms_events.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	labels, err := analyze.ParseLabels([]string{"task013=burst-shaped", "task019=scheduled-shaped"})
	if err != nil {
		t.Fatal(err)
	}
	ev := Events{Name: "retry_after_ms_events.csv", R: f, Columns: analyze.ForeignColumns{Group: "source"}, Labels: labels}
	r, err := Run(t.Context(), Job{
		Plan: PlanCharacterize, Events: &ev, FitGroups: []string{"burst-shaped"},
		Threshold: DefaultThreshold, MinAgreement: DefaultMinAgreement,
		PromptTokens: client.DefaultPromptTokens, MaxTokens: client.DefaultMaxTokens, Name: sim.ProfileDocuments,
	})
	if err != nil {
		t.Fatal(err)
	}
	if q := r.Profile.Fit.Quality; q != sim.FitGood {
		t.Errorf("the documents' fit is %s: %s", q, r.Profile.Fit.Why)
	}
	var got bytes.Buffer
	if err := sim.WriteProfile(&got, r.Profile); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../sim/profiles/documents.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("sim/profiles/documents.json is not the fit's profile (run scripts/documents-profile.sh):\n%s", got.Bytes())
	}
}
