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

func (f *fleetFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.shard, "shard", "", "send only this worker's share of the plan: I/N sends the arrivals whose index is I mod N; /N takes I from "+completionIndexEnv+" (a Kubernetes Indexed Job); needs --start-at ('ptuprobe help fleet')")
	fs.StringVar(&f.startAt, "start-at", "", fmt.Sprintf("start the plan at this instant, RFC 3339 (e.g. 2026-05-01T12:00:00Z), by this machine's clock: at most %s past and %s ahead ('ptuprobe help fleet')", campaign.Roughly(campaign.StartTolerance), campaign.Roughly(campaign.MaxStartAhead)))
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
