package policylab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"

	"github.com/ptuprobe/ptuprobe/internal/fit"
	"github.com/ptuprobe/ptuprobe/internal/trace"
	"github.com/ptuprobe/ptuprobe/sim"
)

// From is `ptuprobe policies --from RESULTS.csv`: a recorded run of the
// user's deployment and traffic. The lab fits the simulator's twin to it
// (as `ptuprobe fit` does, at its defaults), runs every policy on the
// twin, and replays the run's traffic at each load: its first attempts'
// arrivals (ArrivalReplay, scaled to the load's rate) and its mean
// prompt. On a poor or an insufficient fit the lab runs and recommends
// nothing, saying why (sim.Fit.Recommends).
type From struct {
	// File is the results file.
	File string
	// Arrival: the run's arrivals replace the lab's (false when --arrival
	// was given).
	Arrival bool
	// Prompt: the run's mean prompt replaces the lab's (false when
	// --prompt-tokens was given).
	Prompt bool
	// Stderr, when set, is told the fit's warnings and progress (unless
	// Quiet).
	Stderr io.Writer
	Quiet  bool
}

// FitFrom fits the twin to f's run and makes it the lab's simulator
// (every setting of a profile's table; the run's own settings, such as
// the seed, kept), its traffic the lab's. It returns the fit (for the
// command to print).
func (l *Lab) FitFrom(ctx context.Context, f From) (fit.Result, error) {
	if l.Named != nil {
		return fit.Result{}, errors.New("--from fits a twin and runs the lab on it: give no --endpoint or --url")
	}
	name := filepath.Base(f.File)
	r, err := fit.RunFiles(ctx, fit.Files{
		Job: fit.Job{Threshold: fit.DefaultThreshold, MinAgreement: fit.DefaultMinAgreement, MaxWork: fit.DefaultMaxWork,
			PromptTokens: l.PromptTokens, MaxTokens: l.MaxTokens, Name: "twin of " + name},
		Results: []string{f.File}, Stderr: f.Stderr, Quiet: f.Quiet,
	})
	if err != nil {
		return r, fmt.Errorf("--from %s: %w", name, err)
	}
	applyProfile(&l.Sim, r.Profile.Config)
	l.Sim.Fit, l.Sim.ProfileSource = r.Profile.Fit, "twin of "+name
	if f.Arrival || f.Prompt {
		fh, err := os.Open(f.File)
		if err != nil {
			return r, err
		}
		defer fh.Close()
		t, err := trace.Read(ctx, fh, name, trace.FormatAuto)
		if err != nil {
			return r, fmt.Errorf("--from %s: %w", name, err)
		}
		if f.Arrival {
			if len(t.Rows) > MaxReplayArrivals || len(t.Rows) < 2 {
				return r, fmt.Errorf("--from %s: %d first attempts: want 2 to %d to replay", name, len(t.Rows), MaxReplayArrivals)
			}
			l.Arrival = Arrival{Kind: ArrivalReplay, Replay: t.Offsets(), Span: t.Span, Format: t.Format, Source: name}
		}
		if p := meanPrompt(t); f.Prompt && p > 0 {
			l.PromptTokens = p
		}
	}
	return r, l.Validate()
}

// meanPrompt is the rows' mean prompt, rounded; 0 when none says one.
func meanPrompt(t *trace.Trace) int {
	sum, n := 0.0, 0
	for _, r := range t.Rows {
		if r.InputTokens > 0 {
			sum += float64(r.InputTokens)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return int(math.Round(sum / float64(n)))
}

// applyProfile sets dst's every setting a profile holds (sim.ProfileKeys:
// the deployment's behaviour) to src's, keeping the run's own (the seed,
// the time scale, the deployment's name, the keys).
func applyProfile(dst *sim.Config, src sim.Config) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src)
	for _, field := range sim.ProfileKeys() {
		d.FieldByName(field).Set(s.FieldByName(field))
	}
}
