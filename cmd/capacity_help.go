package cmd

import (
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ptuprobe/ptuprobe/internal/capacity"
)

func init() {
	register(func() *cobra.Command {
		k := &capacityCmd{}
		c := &cobra.Command{
			Use:   "capacity",
			Short: "Find the highest load whose goodput under an SLO and 429 share hold",
			Long: `capacity finds the highest offered load, in requests/s and tokens/min, at
which the share of requests answered 2xx within --slo stays at or above
--goodput and the share refused with a 429 at or under --max-429-share.
(calibrate answers the stricter question: the highest rate without a 429.)

It offers constant rates in steps of --duration, their last half judged:
a rising ramp from --min-rate, each step --factor times the last, until a
step fails; then --depth bisections at geometric midpoints; then each rate
of the boundary runs --repeats times with its own seed. The capacity is
the median of the repeats' crossings (where the margin crosses zero,
interpolated between the two rates), its interval their least and most.
A step stops early once it is clearly past the capacity: more missed or
refused than the target allows, or TTFT rising through it (three windows'
medians each higher, the last 1.25× the first and 1 s more). Every request
is streamed; the traffic is --prompt-tokens/--max-tokens (drawn by --seed)
or the sizes of a --replay trace's rows (at the step's rate).

With no target it runs in process on the embedded simulator's virtual
clock (the ptu profile, --sim-* and --sim-profile): seconds, and two runs
write the same capacity.json. Against a named target it runs on the wall
clock, --pause between steps, within --max-requests and --max-time;
--dry-run prints its worst case in requests, tokens and minutes.

It prints a progress line per step, the table and the capacity, and writes
capacity.json and capacity.png (the curve, the knee marked) to --out-dir.`,
			Example: `  # The embedded simulator at 200 PTU, TTFT under 2 s
  ptuprobe capacity --sim-ptu 200 --slo ttft=2s

  # An Azure deployment, the worst case first
  ptuprobe capacity --endpoint https://NAME.openai.azure.com --deployment DEPLOYMENT \
      --slo ttft=1s,tpot=50ms --prompt-tokens lognormal:800,0.6 --max-tokens 300 \
      --min-rate 0.5/s --max-rate 16/s --duration 2m --dry-run`,
			Args: noArgs,
			RunE: k.run,
		}
		k.c = c
		k.flags()
		return c
	})
}

// flags registers the command's flags.
func (k *capacityCmd) flags() {
	fs := k.c.Flags()
	fs.Var(&k.slo, "slo", sloUsage)
	fs.StringVar(&k.goodput, "goodput", "95%", "least share of the judged requests answered 2xx within --slo")
	fs.StringVar(&k.share429, "max-429-share", "5%", "most share of the judged requests refused with a 429")
	fs.StringVar(&k.minRate, "min-rate", "0.5/s", "first rate of the ramp")
	fs.StringVar(&k.maxRate, "max-rate", strconv.Itoa(capacity.DefaultMaxRate)+"/s", "highest rate tried")
	fs.Float64Var(&k.factor, "factor", capacity.DefaultFactor, "each ramp step is this many times the last")
	fs.DurationVar(&k.step, "duration", capacity.DefaultStepDuration, "length of each step (its last half judged)")
	fs.IntVar(&k.depth, "depth", capacity.DefaultDepth, "bisections once the ramp brackets the capacity")
	fs.IntVar(&k.repeats, "repeats", capacity.DefaultRepeats, "runs of each boundary rate, each with its own seed (the interval)")
	fs.DurationVar(&k.pause, "pause", 10*time.Second, "pause between steps on the wall clock (none in process)")
	fs.DurationVar(&k.maxTime, "max-time", 2*time.Hour, "cap on the search's planned time, steps and pauses (0: none)")
	fs.IntVar(&k.maxRequests, "max-requests", 100_000, "cap on the search's requests: a step that would pass it is not run (0: none)")
	fs.IntVar(&k.maxInFlight, "max-in-flight", 1000, "most requests in progress at once against a named target")
	fs.StringVar(&k.outDir, "out-dir", "capacity", "directory of capacity.json and capacity.png")
	fs.BoolVarP(&k.quiet, "quiet", "q", false, "print no progress")
	fs.BoolVar(&k.dryRun, "dry-run", false, dryRunUsage)
	k.tf.add(fs)
	k.tf.tokens.addSeed(fs)
	k.replay.add(fs)
}
