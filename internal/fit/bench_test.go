package fit

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/ptuprobe/ptuprobe/client"
)

// benchFit fits file with the command's defaults, b.N times.
func benchFit(b *testing.B, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		j := Job{inputs: []input{{Name: "results.csv", R: bytes.NewReader(data)}}, Threshold: DefaultThreshold, MinAgreement: DefaultMinAgreement,
			MaxWork: DefaultMaxWork, PromptTokens: client.DefaultPromptTokens, MaxTokens: client.DefaultMaxTokens}
		if _, err := Run(context.Background(), j); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFitMainJob is `ptuprobe fit` on the main job's results
// (`ptuprobe characterize` on the embedded documents profile, 331 sends):
// every model, the default budget.
func BenchmarkFitMainJob(b *testing.B) { benchFit(b, "testdata/main-job.csv") }

// BenchmarkFitServedA is `ptuprobe fit` on a served target's run
// (served-a.csv).
func BenchmarkFitServedA(b *testing.B) { benchFit(b, "testdata/served-a.csv") }
