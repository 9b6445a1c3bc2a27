package policylab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/internal/trace"
	"github.com/ptuprobe/ptuprobe/schedule"
)

// Arrival processes (Arrival.Kind, --arrival).
const (
	arrivalPoisson  = "poisson"
	arrivalConstant = "constant"
	arrivalWaves    = "waves"
	arrivalReplay   = "replay"
	arrivalGamma    = schedule.ArrivalGamma
)

// defaultWaveGap is the gap between waves when --arrival waves names
// neither a size nor a gap: the main job's (internal/charplan.BurstGap),
// so a wave carries two seconds of the load.
const defaultWaveGap = 2 * time.Second

// maxReplayArrivals bounds the arrivals read from a recorded run.
const maxReplayArrivals = maxArrivals

// Arrival is how a run's requests arrive (the zero Arrival: constant).
// Whatever the process, the
// offered rate is the load's (Load.rate): the process only decides how
// the requests are spread, so rows of one load compare across processes.
//
//   - poisson: seeded exponential gaps at the rate;
//   - gamma: seeded gamma gaps of the rate's mean and coefficient of
//     variation CV, as vLLM's `--burstiness` (schedule.Steady);
//   - constant: evenly spaced at the rate;
//   - waves: Size requests at the same instant every Gap, as `ptuprobe
//     burst` plans them; one of the two is the load's: Size = rate × Gap
//     (rounded, at least 1; Gap defaultWaveGap when neither is given),
//     or Gap = Size ÷ rate. Given both, their rate must be the load's;
//   - replay: a trace's arrivals (readReplay), their shape kept and
//     their clock scaled so that their mean rate is the load's, repeated
//     end to end until the plan is full.
type Arrival struct {
	Kind string
	// CV is gamma's coefficient of variation.
	CV float64
	// Size and Gap are the waves' (0: from the load).
	Size int
	Gap  time.Duration
	// Replay are the recorded arrivals, offsets from the recording's
	// first, sorted; Span is the recording's length, the last offset plus
	// one mean gap (where a repetition starts). Source is the file's base
	// name, for the method.
	Replay []time.Duration
	Span   time.Duration
	Source string
	// Format is the trace's format (internal/trace).
	Format string
}

// ParseArrival reads --arrival: poisson, constant, gamma:CV, waves,
// waves:SIZE, waves:@GAP, waves:SIZE@GAP or replay:FILE (a trace read
// with readReplay).
func ParseArrival(v string) (Arrival, error) {
	kind, arg, hasArg := strings.Cut(v, ":")
	switch {
	case (kind == arrivalPoisson || kind == arrivalConstant) && !hasArg:
		return Arrival{Kind: kind}, nil
	case kind == arrivalGamma:
		_, cv, err := schedule.ParseArrival(v)
		return Arrival{Kind: arrivalGamma, CV: cv}, err
	case kind == arrivalWaves:
		return parseWaves(arg, hasArg)
	case kind == arrivalReplay && arg != "":
		f, err := os.Open(arg)
		if err != nil {
			return Arrival{}, fmt.Errorf("replay: %w", err)
		}
		defer f.Close()
		a, err := readReplay(f, filepath.Base(arg))
		if err != nil {
			return Arrival{}, fmt.Errorf("replay: %w", err)
		}
		a.Source = filepath.Base(arg)
		return a, nil
	}
	return Arrival{}, fmt.Errorf("%q: want poisson, constant, gamma:CV, waves[:SIZE][@GAP] or replay:FILE", clip(v))
}

// parseWaves reads the SIZE@GAP of waves:SIZE@GAP, either part optional.
func parseWaves(arg string, hasArg bool) (Arrival, error) {
	a := Arrival{Kind: arrivalWaves}
	if !hasArg {
		return a, nil
	}
	size, gap, hasGap := strings.Cut(arg, "@")
	if size == "" && !hasGap {
		return a, fmt.Errorf("%q: want waves, waves:SIZE, waves:@GAP or waves:SIZE@GAP", clip("waves:"+arg))
	}
	if size != "" {
		n, err := strconv.Atoi(size)
		if err != nil || n < 1 || n > 100_000 {
			return a, fmt.Errorf("wave size %q: want a whole number of requests from 1 to 100000", clip(size))
		}
		a.Size = n
	}
	if hasGap {
		d, err := time.ParseDuration(gap)
		if err != nil || d < time.Millisecond || d > time.Hour {
			return a, fmt.Errorf("wave gap %q: want a duration from 1ms to 1h, such as 2s", clip(gap))
		}
		a.Gap = d
	}
	return a, nil
}

// readReplay reads a trace's arrivals (name is the file's, for its
// errors) through internal/trace, in any of its formats (detected): a
// ptuprobe results file's first attempts at their intended times, each
// timeline after the one before, or a production trace's rows at their
// offsets. Only the arrivals are kept: the lab's requests are of its
// own size.
func readReplay(r io.Reader, name string) (Arrival, error) {
	t, err := trace.Read(context.Background(), r, name, trace.FormatAuto)
	if err != nil {
		return Arrival{}, err
	}
	if len(t.Rows) > maxReplayArrivals {
		return Arrival{}, fmt.Errorf("more than %d arrivals: too long to replay (cut it with a smaller file)", maxReplayArrivals)
	}
	if len(t.Rows) < 2 {
		return Arrival{}, errors.New("fewer than two arrivals: none to replay")
	}
	return Arrival{Kind: arrivalReplay, Replay: t.Offsets(), Span: t.Span, Format: t.Format}, nil
}

// waves is the waves' size and gap at rate (requests/s): see Arrival.
func (a Arrival) waves(rate float64) (int, time.Duration) {
	switch {
	case a.Size > 0 && a.Gap > 0:
		return a.Size, a.Gap
	case a.Size > 0:
		return a.Size, time.Duration(float64(a.Size) / rate * float64(time.Second))
	}
	gap := a.Gap
	if gap == 0 {
		gap = defaultWaveGap
	}
	size := max(1, int(math.Round(rate*gap.Seconds())))
	// The gap follows the rounded size, so the rate is the load's.
	return size, time.Duration(float64(size) / rate * float64(time.Second))
}

// check refuses waves whose size and gap, both given, are not the load's
// rate (within 1%): the load would mean another rate than the one sent.
func (a Arrival) check(load string, rate float64) error {
	if a.Kind != arrivalWaves || a.Size == 0 || a.Gap == 0 {
		return nil
	}
	if r := float64(a.Size) / a.Gap.Seconds(); math.Abs(r-rate) > 0.01*rate {
		return fmt.Errorf("waves of %d every %v are %s requests/s, and the load %s is %s/s: give the size or the gap alone (waves:%d or waves:@%v) and the load sets the other",
			a.Size, a.Gap, num.Grouped(r, 2), load, num.Grouped(rate, 2), a.Size, a.Gap)
	}
	return nil
}

// offsets are the arrivals of a plan of length plan at rate, seeded:
// planned by the shapes traffic plans with (burst's waves, schedule's
// steady processes and its replay).
func (a Arrival) offsets(rate float64, plan time.Duration, seed uint64) []time.Duration {
	switch a.Kind {
	case arrivalWaves:
		size, gap := a.waves(rate)
		p := burst.NewPlan(burst.Config{Size: size, Waves: int((plan + gap - 1) / gap), Gap: gap})
		var out []time.Duration
		for {
			at, _, ok := p.Next()
			if !ok {
				return out
			}
			out = append(out, at)
		}
	case arrivalReplay:
		return schedule.RepeatAt(a.Replay, a.Span, rate, plan)
	}
	return schedule.Steady{Arrival: a.Kind, CV: a.CV}.Offsets(rate, plan, seed)
}

// Describe says how the requests arrived, for the method: at a load's
// rate where the waves' size follows from it.
func (a Arrival) Describe() string {
	switch a.Kind {
	case arrivalPoisson:
		return "Poisson (seeded exponential gaps) at each load's rate"
	case arrivalGamma:
		return fmt.Sprintf("gamma (seeded gamma gaps, as vLLM's --burstiness) at each load's rate, the gaps' coefficient of variation %s (1 is Poisson)", strconv.FormatFloat(a.CV, 'g', -1, 64))
	case arrivalWaves:
		switch {
		case a.Size > 0 && a.Gap > 0:
			return fmt.Sprintf("waves of %d requests at once every %v, as `ptuprobe burst` plans them", a.Size, a.Gap)
		case a.Size > 0:
			return fmt.Sprintf("waves of %d requests at once, as `ptuprobe burst` plans them, as often as each load's rate makes them (every %d ÷ rate)", a.Size, a.Size)
		}
		gap := a.Gap
		if gap == 0 {
			gap = defaultWaveGap
		}
		return fmt.Sprintf("waves of requests at once, as `ptuprobe burst` plans them, about every %v: each wave carries %v of the load's rate (rate × %v, rounded)", gap, gap, gap)
	case arrivalReplay:
		what := "first attempts' intended times"
		if a.Format != trace.FormatPtuprobe {
			what = "rows' times (a " + a.Format + " trace)"
		}
		return fmt.Sprintf("replayed from %s: its %d %s (%s long), their clock scaled to each load's rate and repeated end to end", a.Source, len(a.Replay), what, secs(a.Span))
	}
	return "evenly spaced at each load's rate"
}
