package cmd

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/results"
)

// DefaultBurstCap is the default --duration safety cap of a burst run.
const DefaultBurstCap = 10 * time.Minute

// burstFlags are the burst plan's flags; characterize registers them too,
// under a prefix.
type burstFlags struct {
	prefix      string // flag-name prefix, for messages
	size, waves int
	gap, spread time.Duration
	waitWave    bool
}

func (b *burstFlags) add(c *cobra.Command, prefix string, size, waves int, gap time.Duration) {
	b.prefix = prefix
	fs := c.Flags()
	fs.IntVar(&b.size, prefix+"size", size, "requests per wave")
	fs.IntVar(&b.waves, prefix+"waves", waves, "number of waves")
	fs.DurationVar(&b.gap, prefix+"gap", gap, "time between wave starts")
	fs.DurationVar(&b.spread, prefix+"spread", 0, "fire each wave evenly over this window instead of at one instant")
	fs.BoolVar(&b.waitWave, prefix+"wait-wave", false, "wait for a wave to finish before its gap starts")
}

func (b *burstFlags) plan(group string) (trafficPlan, error) {
	c := burst.Config{Size: b.size, Waves: b.waves, Gap: b.gap, Spread: b.spread}
	if err := c.Validate(); err != nil {
		// burst names its flags unprefixed; say the ones this command has.
		return trafficPlan{}, usageError("%s", strings.ReplaceAll(err.Error(), "--", "--"+b.prefix))
	}
	return trafficPlan{
		shape: results.ShapeBurst, group: group, pacer: burst.NewPlan(c),
		planned: c.Total(), span: c.Span(), waitWave: b.waitWave, gap: b.gap,
	}, nil
}

func init() {
	register(func() *cobra.Command {
		var (
			tf  targetFlags
			rf  runFlags
			bf  burstFlags
			cap time.Duration
		)
		c := &cobra.Command{
			Use:   "burst",
			Short: "Fire waves of requests at once and record every response",
			Long: `burst fires --waves waves of --size requests, each wave at one instant (or
spread evenly over --spread), wave starts --gap apart on an absolute
schedule. Every attempt is appended to the results file, with the advised
wait of every 429.

With no --endpoint or --url, the embedded PTU simulator is the target.`,
			Example: `  # Against the embedded simulator: 3 waves of 40
  ptuprobe burst --size 40 --waves 3 --gap 5s

  # Against an Azure OpenAI deployment (key from AZURE_OPENAI_API_KEY)
  ptuprobe burst --endpoint https://NAME.openai.azure.com --deployment DEPLOYMENT \
      --size 20 --waves 5 --gap 10s -o results.csv

  # OpenAI-compatible endpoint (key from OPENAI_API_KEY)
  ptuprobe burst --url http://127.0.0.1:8000/v1/chat/completions --model my-model --size 10`,
			Args: noArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				plan, err := bf.plan(results.GroupBurst)
				if err != nil {
					return err
				}
				if cap <= 0 {
					return usageError("--duration must be positive")
				}
				if plan.span >= cap && !bf.waitWave {
					return usageError("the burst plan spans %s, longer than the --duration cap %s; raise --duration deliberately if you mean it", plan.span, cap)
				}
				return trafficCommand(c.Context(), plan, &tf, &rf, cap, c.OutOrStdout(), c.ErrOrStderr())
			},
		}
		bf.add(c, "", burst.DefaultSize, burst.DefaultWaves, burst.DefaultGap)
		c.Flags().DurationVar(&cap, "duration", DefaultBurstCap, "safety cap: stop sending after this long")
		rf.add(c.Flags(), true)
		rf.addRetry(c.Flags())
		tf.add(c.Flags())
		return c
	})
}
