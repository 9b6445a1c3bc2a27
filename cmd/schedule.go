package cmd

import (
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/schedule"
)

// DefaultScheduleDuration is the plan length with --rate and no --duration.
const DefaultScheduleDuration = time.Minute

// scheduleFlags are the scheduled plan's flags; characterize shares them.
type scheduleFlags struct {
	rate     string
	duration time.Duration
	phases   []string
	arrival  string
	seed     uint64
	built    schedule.Config // what the last plan was built from, for --dry-run
	replay   replayFlags
	fs       *pflag.FlagSet
}

func (s *scheduleFlags) add(fs *pflag.FlagSet, duration time.Duration) {
	fs.StringVar(&s.rate, "rate", "", "constant arrival rate: 30, 30/s or 600/m (with --duration)")
	fs.DurationVar(&s.duration, "duration", duration, "length of a --rate plan")
	fs.StringArrayVar(&s.phases, "phase", nil, "a phase NAME:DURATION@RATE or NAME:DURATION@FROM-TO (a linear ramp); repeatable, run in order")
	fs.StringVar(&s.arrival, "arrival", schedule.ArrivalConstant, "arrival process: constant (evenly spaced), poisson or gamma:CV (gamma gaps of the rate's mean and coefficient of variation CV, as vLLM's --burstiness: 1 is Poisson, above burstier; seeded by --seed)")
	fs.Uint64Var(&s.seed, "seed", 1, "seed of the poisson and gamma arrival processes, and of the sizes drawn per request (--prompt-tokens, --max-tokens, --prompts-order random)")
	s.replay.add(fs)
	s.fs = fs
}

var scheduleFlagNames = flagNames{"Phases": "--phase", "Arrival": "--arrival"}

// plan parses the flags into a scheduled plan; defaults are the phases
// used when neither --rate nor --phase is given (nil: one is required).
func (s *scheduleFlags) plan(defaults []schedule.Phase) (campaign.Plan, error) {
	return s.scaledPlan(defaults, 1)
}

// scaledPlan is the plan with durations divided by scale and rates
// multiplied by it: what a simulator running scale times faster must see.
func (s *scheduleFlags) scaledPlan(defaults []schedule.Phase, scale float64) (campaign.Plan, error) {
	if s.replay.file != "" {
		if s.rate != "" || len(s.phases) > 0 || s.fs.Changed("arrival") {
			return campaign.Plan{}, usageError("--replay is the plan: give no --rate, --phase or --arrival beside it")
		}
		var cut time.Duration
		if s.fs.Changed("duration") {
			cut = s.duration
		}
		return s.replay.plan(cut, scale)
	}
	s.replay.trace = nil
	c := schedule.Config{Arrival: s.arrival, Seed: s.seed}
	switch {
	case s.rate != "" && len(s.phases) > 0:
		return campaign.Plan{}, usageError("give either --rate or --phase, not both")
	case s.rate != "":
		r, err := schedule.ParseRate(s.rate)
		if err != nil {
			return campaign.Plan{}, usageError("--rate: %v", err)
		}
		if s.duration <= 0 {
			return campaign.Plan{}, usageError("--duration must be positive")
		}
		c.Phases = []schedule.Phase{{Name: "constant", Duration: s.duration, From: r, To: r}}
	case len(s.phases) > 0:
		for _, spec := range s.phases {
			ph, err := schedule.ParsePhase(spec)
			if err != nil {
				return campaign.Plan{}, usageError("--phase: %v", err)
			}
			c.Phases = append(c.Phases, ph)
		}
	case defaults != nil:
		c.Phases = slices.Clone(defaults)
	default:
		return campaign.Plan{}, usageError("give --rate with --duration, or at least one --phase")
	}
	for i := range c.Phases {
		ph := &c.Phases[i]
		ph.Duration, ph.From, ph.To = scaleDuration(ph.Duration, scale), ph.From*scale, ph.To*scale
	}
	s.built = c
	p, err := campaign.SchedulePlan(c)
	return p, settingError(err, scheduleFlagNames)
}

// defaulted says whether the last plan was the defaults' phases (no
// --rate, --phase or --replay given).
func (s *scheduleFlags) defaulted() bool {
	return s.replay.file == "" && s.rate == "" && len(s.phases) == 0
}

type scheduleCmd struct {
	tf targetFlags
	rf runFlags
	sf scheduleFlags
}

func (s *scheduleCmd) run(c *cobra.Command, _ []string) error {
	plan, err := s.sf.plan(nil)
	if err != nil {
		return err
	}
	// The plan's own length bounds it; no separate time cap.
	r, err := newTrafficRun([]campaign.Plan{plan}, &s.tf, &s.rf, 0, s.rf.output, nil, c.OutOrStdout(), c.ErrOrStderr())
	if err != nil {
		return err
	}
	if s.rf.dryRun {
		r.writeDryRun(c.OutOrStdout(), &s.tf)
		return nil
	}
	return r.runAndSummarize(c.Context())
}

func init() {
	register(func() *cobra.Command {
		s := &scheduleCmd{}
		c := &cobra.Command{
			Use:   "schedule",
			Short: "Send open-loop arrivals on a planned schedule and record every response",
			Long: `schedule sends requests at planned times, open loop: a request goes out at
its time whether or not earlier ones have answered (up to --max-in-flight; a
send that waits for a slot is recorded late, never dropped). A plan is a
constant --rate for --duration, a sequence of --phase, each holding a rate
or ramping it, or a production trace (--replay: each row at its offset, of
its prompt and output sizes); times are absolute, so one late send never
delays the rest. --dry-run prints the plan and sends nothing.`,
			Example: `  # 2 requests/s for 30s against the embedded simulator
  ptuprobe schedule --rate 2/s --duration 30s

  # Warm up, ramp, sustain, with Poisson arrivals
  ptuprobe schedule --phase warmup:2m@0.3/s --phase ramp:10m@0.5/s-2.5/s \
      --phase sustain:10m@2/s --arrival poisson --seed 42

  # A long soak, watched live by Prometheus at http://127.0.0.1:9464/metrics
  ptuprobe schedule --phase soak:6h@2/s --max-requests 50000 --metrics-addr :9464

  # A production trace replayed at its own pace, half the output reserved
  ptuprobe schedule --replay mooncake.jsonl --max-tokens-factor 0.5 --url http://127.0.0.1:8000/v1/chat/completions

  # Any endpoint, raw request
  ptuprobe schedule --api raw --url http://127.0.0.1:8080/v1/embeddings \
      --body @request.json --header 'Authorization: Bearer x' --rate 600/m`,
			Args: noArgs,
			RunE: s.run,
		}
		s.sf.add(c.Flags(), DefaultScheduleDuration)
		s.rf.add(c.Flags(), true)
		s.rf.addSLO(c.Flags())
		s.rf.addRetry(c.Flags())
		s.rf.addFleet(c.Flags())
		s.rf.addMetrics(c.Flags())
		s.tf.add(c.Flags())
		return c
	})
}
