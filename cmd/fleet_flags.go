package cmd

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
)

// completionIndexEnv is where a Kubernetes Indexed Job gives each pod its
// index: `--shard /N` reads the worker's index from it.
const completionIndexEnv = "JOB_COMPLETION_INDEX"

// fleetFlags are --shard and --start-at: one plan sent by several workers
// (burst, schedule, characterize and policies; not calibrate, whose probes
// adapt to the answers).
type fleetFlags struct {
	shard   string
	startAt string
}

// fleetHelp is the clock-sync assumption, for every command's --help.
var fleetHelp = fmt.Sprintf(`
Fleet runs: N workers given the same flags, each its own --shard I/N (or
/N with %s set, as in a Kubernetes Indexed Job), and one
--start-at, send one plan together: every worker computes the whole plan
and sends the arrivals whose index is I mod N, each at --start-at + its
offset, so a burst wave still leaves at one instant and a schedule's rate
is the sum. seq is the arrival's index in the whole plan and the worker
column says who sent it: 'ptuprobe analyze' over every worker's results
gives the fleet's table (--group-by worker splits it by worker).

Each worker reads --start-at on its own clock, so the machines' clocks
must agree (NTP; a clock off by d sends its whole share d early or late).
A worker that begins more than %s after --start-at refuses to run;
--start-at may be at most %s ahead. --max-requests bounds the whole plan
(every worker refuses the same plan), not one worker's share. With
--start-at, each plan after the first starts at its place in the plan (a
burst one gap after its last wave, a schedule after its duration), not
when its last answer came; a wave that waits for answers (--wait-wave) is
refused.`, completionIndexEnv, campaign.Roughly(campaign.StartTolerance), campaign.Roughly(campaign.MaxStartAhead))

func (f *fleetFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.shard, "shard", "", "send only this worker's share of the plan: I/N sends the arrivals whose index is I mod N; /N takes I from "+completionIndexEnv+" (a Kubernetes Indexed Job); needs --start-at (see Fleet runs below)")
	fs.StringVar(&f.startAt, "start-at", "", fmt.Sprintf("start the plan at this instant, RFC 3339 (e.g. 2026-05-01T12:00:00Z), by this machine's clock: at most %s past and %s ahead (see Fleet runs below)", campaign.Roughly(campaign.StartTolerance), campaign.Roughly(campaign.MaxStartAhead)))
}

// resolve reads the flags (and, for /N, the completion index from the
// environment) into campaign options. The start's distance from now is
// checked with the rest of the job (campaign's Validate).
func (f *fleetFlags) resolve(o *campaign.Options) error {
	if f.startAt != "" {
		t, err := time.Parse(time.RFC3339, f.startAt)
		if err != nil {
			return usageError("--start-at %q is not an RFC 3339 time such as 2026-05-01T12:00:00Z (UTC) or 2026-05-01T14:00:00+02:00", clipArg(f.startAt))
		}
		o.Start = t
	}
	if f.shard == "" {
		return nil
	}
	spec := f.shard
	if strings.HasPrefix(spec, "/") {
		index, ok := os.LookupEnv(completionIndexEnv)
		if !ok || index == "" {
			return usageError("--shard %s takes the worker's index from %s, which is not set: give I/N", clipArg(spec), completionIndexEnv)
		}
		s, err := dispatch.ParseShard(index + spec)
		if err != nil {
			return usageError("--shard %s with %s=%q: %v", clipArg(spec), completionIndexEnv, clipArg(index), err)
		}
		o.Shard = s
		return nil
	}
	s, err := dispatch.ParseShard(spec)
	if err != nil {
		return usageError("--shard %q: %v", clipArg(spec), err)
	}
	o.Shard = s
	return nil
}

// announceStart says, unless quiet, that label waits for its start on the
// common timeline, and as which worker.
func announceStart(w io.Writer, label string, start time.Time, shard dispatch.Shard) {
	wait := time.Until(start)
	if start.IsZero() || wait < 100*time.Millisecond {
		return
	}
	who := ""
	if !shard.Whole() {
		who = ", as worker " + shard.String()
	}
	fmt.Fprintf(w, "%s: waiting for the start at %s (in %s)%s\n", label, start.UTC().Format(time.RFC3339Nano), wait.Round(100*time.Millisecond), who)
}
