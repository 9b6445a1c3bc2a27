package cmd

import (
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
)

// DefaultBurstCap is the default --duration safety cap of a burst run.
const DefaultBurstCap = 10 * time.Minute

// burstFlags are the burst plan's flags; characterize registers them too,
// under a prefix.
type burstFlags struct {
	prefix      string // flag-name prefix
	size, waves int
	gap, spread time.Duration
	waitWave    bool
}

func (b *burstFlags) add(c *cobra.Command, prefix string, def burst.Config) {
	b.prefix = prefix
	fs := c.Flags()
	fs.IntVar(&b.size, prefix+"size", def.Size, "requests per wave")
	fs.IntVar(&b.waves, prefix+"waves", def.Waves, "number of waves")
	fs.DurationVar(&b.gap, prefix+"gap", def.Gap, "time between wave starts")
	fs.DurationVar(&b.spread, prefix+"spread", 0, "fire each wave evenly over this window instead of at one instant")
	fs.BoolVar(&b.waitWave, prefix+"wait-wave", false, "wait for a wave to finish before its gap starts")
}

// names maps burst.Config fields to this command's flags.
func (b *burstFlags) names() flagNames {
	return flagNames{"Size": "--" + b.prefix + "size", "Waves": "--" + b.prefix + "waves", "Gap": "--" + b.prefix + "gap", "Spread": "--" + b.prefix + "spread", "WaitWave": "--" + b.prefix + "wait-wave"}
}

func (b *burstFlags) plan() (campaign.Plan, error) { return b.scaledPlan(1) }

// given says whether any of the burst plan's flags was given (by its
// name or its old one).
func (b *burstFlags) given(fs *pflag.FlagSet) bool {
	for _, name := range []string{"size", "waves", "gap", "spread", "wait-wave"} {
		if fs.Changed(b.prefix + name) {
			return true
		}
	}
	return false
}

// scaledPlan is the plan with its times divided by scale: what a simulator
// running scale times faster must see to see the plan as written.
func (b *burstFlags) scaledPlan(scale float64) (campaign.Plan, error) {
	c := burst.Config{Size: b.size, Waves: b.waves, Gap: scaleDuration(b.gap, scale), Spread: scaleDuration(b.spread, scale)}
	p, err := campaign.BurstPlan(c, b.waitWave)
	return p, settingError(err, b.names())
}

func scaleDuration(d time.Duration, scale float64) time.Duration {
	return time.Duration(float64(d) / scale)
}

type burstCmd struct {
	tf       targetFlags
	rf       runFlags
	bf       burstFlags
	duration time.Duration
}

func (b *burstCmd) run(c *cobra.Command, _ []string) error {
	plan, err := b.bf.plan()
	if err != nil {
		return err
	}
	if b.duration <= 0 {
		return usageError("--max-duration must be positive")
	}
	r, err := newTrafficRun([]campaign.Plan{plan}, &b.tf, &b.rf, b.duration, b.rf.output,
		merge(b.bf.names(), flagNames{"Budget": "--max-duration"}), c.OutOrStdout(), c.ErrOrStderr())
	if err != nil {
		return err
	}
	if b.rf.dryRun {
		r.writeDryRun(c.OutOrStdout(), &b.tf)
		return nil
	}
	return r.runAndSummarize(c.Context())
}

func init() {
	register(func() *cobra.Command {
		b := &burstCmd{}
		c := &cobra.Command{
			Use:   "burst",
			Short: "Fire waves of requests at once and record every response",
			Long: `burst fires --burst-waves waves of --burst-size requests, each wave at one
instant (or spread over --burst-spread), wave starts --burst-gap apart on an
absolute schedule, and appends every attempt to the results file, with the
advised wait of every 429. --dry-run prints the plan and sends nothing.`,
			Example: `  # Against the embedded simulator: 3 waves of 40
  ptuprobe burst --burst-size 40 --burst-waves 3 --burst-gap 5s

  # Against an Azure OpenAI deployment (key from AZURE_OPENAI_API_KEY)
  ptuprobe burst --endpoint https://NAME.openai.azure.com --deployment DEPLOYMENT \
      --burst-size 20 --burst-waves 5 --burst-gap 10s -o results.csv

  # An OpenAI-compatible server (OPENAI_API_KEY sent if set); Anthropic's Messages API
  ptuprobe burst --url http://127.0.0.1:8000/v1/chat/completions --model my-model --burst-size 10
  ptuprobe burst --api anthropic --url https://api.anthropic.com/v1/messages --model MODEL --burst-size 10`,
			Args: noArgs,
			RunE: b.run,
		}
		b.bf.add(c, "burst-", burst.Config{Size: burst.DefaultSize, Waves: burst.DefaultWaves, Gap: burst.DefaultGap})
		c.Flags().DurationVar(&b.duration, "max-duration", DefaultBurstCap, "safety cap on the time spent sending: no attempt, retries included, goes past it")
		b.rf.add(c.Flags(), true)
		b.rf.addSLO(c.Flags())
		b.rf.addRetry(c.Flags())
		b.rf.addFleet(c.Flags())
		b.rf.addMetrics(c.Flags())
		b.tf.add(c.Flags())
		b.tf.tokens.addSeed(c.Flags())
		alias(c, joinRenames(burstRenames, renames{"duration": "max-duration"}))
		return c
	})
}
