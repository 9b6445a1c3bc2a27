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
// arrivals (arrivalReplay, scaled to the load's rate) and each one's
// size, its prompt (prompt_tokens_sent, else prompt_tokens) and its
// max_tokens (Lab.sizes; their means the lab's PromptTokens and
// MaxTokens, which its capacity is computed from). On a poor or an insufficient fit the lab runs and recommends
// nothing, saying why (sim.Fit.Recommends).
type From struct {
	// File is the results file.
	File string
	// Arrival: the run's arrivals replace the lab's (false when --arrival
	// was given).
	Arrival bool
	// Prompt: the run's requests' prompts replace the lab's (false when
	// --prompt-tokens was given); MaxTokens likewise their max_tokens
	// (--max-tokens).
	Prompt, MaxTokens bool
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
	l.takeTwin(r.Profile, name)
	if err := l.replayFrom(ctx, f); err != nil {
		return r, err
	}
	return r, l.Validate()
}

// takeTwin makes the twin fitted to the run in file name the lab's
// simulator, and the model given: the grid's model is the user's twin
// when one is given, ptu and documents only when none is (issue 38), so
// the grid does not run the built-in models beside it (before
// 2026-12-06 it did: two of --from's nine conditions, a sixth of its
// simulated attempts, on models the fit had just said the deployment is
// not).
func (l *Lab) takeTwin(p sim.Profile, name string) {
	applyProfile(&l.Sim, p.Config)
	l.Sim.Fit, l.Sim.ProfileSource = p.Fit, "twin of "+name
	l.Fixed.Model = true
}

// replayFrom makes f's run the lab's traffic: its first attempts' arrivals
// (when f.Arrival) and each one's size (f.Prompt, f.MaxTokens).
func (l *Lab) replayFrom(ctx context.Context, f From) error {
	if !f.Arrival && !f.Prompt && !f.MaxTokens {
		return nil
	}
	name := filepath.Base(f.File)
	fh, err := os.Open(f.File)
	if err != nil {
		return err
	}
	defer fh.Close()
	t, err := trace.Read(ctx, fh, name, trace.FormatAuto)
	if err != nil {
		return fmt.Errorf("--from %s: %w", name, err)
	}
	if len(t.Rows) > maxReplayArrivals || len(t.Rows) < 2 {
		return fmt.Errorf("--from %s: %d first attempts: want 2 to %d to replay", name, len(t.Rows), maxReplayArrivals)
	}
	if f.Arrival {
		l.Arrival = Arrival{Kind: arrivalReplay, Replay: t.Offsets(), Span: t.Span, Format: t.Format, Source: name}
	}
	l.replaySizes(t, f.Prompt, f.MaxTokens)
	return nil
}

// replaySizes makes each of the run's rows a request's size (Lab.sizes),
// the prompt when prompt, the max_tokens when maxTokens (else the lab's
// own), and their means the lab's PromptTokens and MaxTokens.
func (l *Lab) replaySizes(t *trace.Trace, prompt, maxTokens bool) {
	if !prompt && !maxTokens {
		return
	}
	sizes := make([]requestSize, len(t.Rows))
	var sumP, sumM float64
	for i, r := range t.Rows {
		z := requestSize{Prompt: l.PromptTokens, MaxTokens: l.MaxTokens}
		if prompt && r.InputTokens > 0 {
			z.Prompt = r.InputTokens
		}
		if maxTokens && r.OutputTokens > 0 {
			z.MaxTokens = r.OutputTokens
		}
		sizes[i] = z
		sumP += float64(z.Prompt)
		sumM += float64(z.MaxTokens)
	}
	l.sizes = sizes
	l.PromptTokens = int(math.Round(sumP / float64(len(sizes))))
	l.MaxTokens = int(math.Round(sumM / float64(len(sizes))))
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
