package cmd

import (
	"context"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/trace"
)

// replayFlags are a replayed trace's flags (schedule, characterize).
type replayFlags struct {
	file, format, scale, window string
	factor                      float64
	trace                       *trace.Trace // the last plan's, for --dry-run
}

func (r *replayFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&r.file, "replay", "", "replay a production trace as the plan: each row sent at its offset, of its prompt size, max_tokens its output length × --max-tokens-factor (formats: --replay-format); --duration cuts it")
	fs.StringVar(&r.format, "replay-format", trace.FormatAuto, "the --replay file's format: auto (by its header or keys), ptuprobe (a results file), azure (TIMESTAMP,ContextTokens,GeneratedTokens), burstgpt or mooncake (JSON lines)")
	fs.StringVar(&r.scale, "replay-time-scale", "1", "multiply the trace's offsets by X (2: half speed, 0.5: twice as fast)")
	fs.StringVar(&r.window, "replay-window", "", "replay only the rows from FROM to TO on the trace's own clock, such as 1h-1h30m (either one omitted: from the start, to the end)")
	fs.Float64Var(&r.factor, "max-tokens-factor", 1, "a replayed row's max_tokens is its output length times this (a reservation close to the real generation admits more)")
}

// plan reads the trace into a plan: cut to the window, its offsets
// scaled by --replay-time-scale and divided by scale (a simulator that
// runs scale times faster), cut at cut when positive.
func (r *replayFlags) plan(cut time.Duration, scale float64) (campaign.Plan, error) {
	x, err := trace.ParseScale(r.scale)
	if err != nil {
		return campaign.Plan{}, usageError("--replay-time-scale: %v", err)
	}
	t, err := r.load()
	if err != nil {
		return campaign.Plan{}, err
	}
	if err := t.Scale(x / scale); err != nil {
		return campaign.Plan{}, usageError("--replay-time-scale: %v", err)
	}
	r.trace = t
	p, err := campaign.ReplayPlan(t, campaign.Replay{Cut: cut, Factor: r.factor, Window: r.window, Scale: r.scale})
	return p, settingError(err, flagNames{"MaxTokensFactor": "--max-tokens-factor", "Duration": "--duration", "Offsets": "--replay's rows"})
}

// load reads the --replay file in its format, cut to --replay-window.
func (r *replayFlags) load() (*trace.Trace, error) {
	var w trace.Window
	var err error
	if r.window != "" {
		if w, err = trace.ParseWindow(r.window); err != nil {
			return nil, usageError("--replay-window: %v", err)
		}
	}
	if !trace.ValidFormat(r.format) {
		return nil, usageError("--replay-format must be one of auto, ptuprobe, azure, burstgpt, mooncake")
	}
	t, err := readTrace(r.file, r.format)
	if err != nil {
		return nil, err
	}
	if r.window != "" {
		if err := t.Cut(w); err != nil {
			return nil, usageError("--replay-window: %v", err)
		}
	}
	return t, nil
}

// readTrace reads the --replay file.
func readTrace(path, format string) (*trace.Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usageError("--replay: %v", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, usageError("--replay: %s is not a regular file", path)
	}
	t, err := trace.Read(context.Background(), f, path, format)
	if err != nil {
		return nil, usageError("--replay: %v", err)
	}
	return t, nil
}
