package fit

import (
	"flag"
	"os"
	"reflect"
	"testing"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/sim"
)

// refit asks for TestDocumentsProfileIsTheFit: a full fit (seconds of
// CPU, most of this package's time), so .ci/run runs it on its own
// (go test ./internal/fit -run TestDocumentsProfileIsTheFit -documents)
// and `go test ./...` stays within its budget.
var refit = flag.Bool("documents", false, "refit the documents profile and compare it with sim/profiles/documents.json")

// TestDocumentsProfileIsTheFit: the embedded documents profile's
// settings are what scripts/documents-profile.sh's `ptuprobe fit` finds —
// the main job's plan fitted to the published burst-shaped waits, the
// scheduled-shaped ones held out — and that fit is good: the model, the
// cold forecast among its parameters, gives the documents' short median
// and long tail. Only the kept model, ptu, is fitted here (each model's
// search is its own, and the gateway's and window's cost more than
// half the time); the file says what the others reached.
func TestDocumentsProfileIsTheFit(t *testing.T) {
	if !*refit {
		t.Skip("a full fit: run with -documents (.ci/run does)")
	}
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
	ev := events{Name: "retry_after_ms_events.csv", R: f, Columns: analyze.ForeignColumns{Group: "source"}, Labels: labels}
	r, err := Run(t.Context(), Job{
		Plan: planCharacterize, events: &ev, FitGroups: []string{"burst-shaped"},
		Threshold: DefaultThreshold, MinAgreement: DefaultMinAgreement, MaxWork: DefaultMaxWork,
		PromptTokens: client.DefaultPromptTokens, MaxTokens: client.DefaultMaxTokens, Name: sim.ProfileDocuments,
		models: []string{sim.ProfilePTU},
	})
	if err != nil {
		t.Fatal(err)
	}
	if q := r.Profile.Fit.Quality; q != sim.FitGood {
		t.Errorf("the documents' fit is %s: %s", q, r.Profile.Fit.Why)
	}
	want, err := sim.OpenProfile(sim.ProfileDocuments)
	if err != nil {
		t.Fatal(err)
	}
	if want.Fit == nil || want.Fit.Model != sim.ProfilePTU || want.Fit.Quality != sim.FitGood {
		t.Fatalf("sim/profiles/documents.json is no good ptu fit: %+v", want.Fit)
	}
	got := r.Profile.Config
	got.Fit, got.ProfileSource = want.Config.Fit, want.Config.ProfileSource
	if !reflect.DeepEqual(got, want.Config) {
		t.Errorf("sim/profiles/documents.json's settings are not the fit's (run scripts/documents-profile.sh):\n got %+v\nfile %+v", got, want.Config)
	}
	if g, w := r.Profile.Fit.Groups, want.Fit.Groups; !reflect.DeepEqual(g, w) {
		t.Errorf("the fit's groups\n%+v\nthe file's\n%+v", g, w)
	}
}
