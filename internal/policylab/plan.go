package policylab

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/num"
)

// WritePlan prints the lab's plan for --dry-run, after the dry run's
// header and target lines (the command's: they are every command's): its
// runs and where they go, its loads and their rates, what it may take
// (the wall time against a named target, the attempts on the simulator)
// and where the report goes.
func (j Job) WritePlan(w io.Writer) {
	l := j.Lab
	capacity, clock := 0.0, "on the wall clock, one run at a time"
	if l.Named != nil {
		capacity = l.Named.Capacity
	} else {
		capacity, _ = l.Sim.Capacity(l.PromptTokens, l.MaxTokens, slices.Min(l.Clients))
		clock = "each on a virtual clock (seconds of wall time)"
	}
	if l.Coordinate != nil {
		clock += fmt.Sprintf("; %s also coordinated through --coordinate's Redis, in real time", num.Count(uint64(l.CoordinatedPolicies()), "policy", "policies"))
	}
	var loads []string
	peak := 0.0
	for _, ld := range l.Loads {
		r := ld.Rate
		if ld.X > 0 {
			r = ld.X * capacity
		}
		loads = append(loads, fmt.Sprintf("%s (%s)", ld.Text, num.PerSecond(r)))
		peak = math.Max(peak, r)
	}
	fmt.Fprintf(w, "runs: %d (%s × %s × %s × %s), %s\n", l.Runs(), num.Count(uint64(len(l.Policies)), "policy", "policies"),
		num.Count(uint64(len(l.Loads)), "load", "loads"), num.Count(uint64(len(l.Clients)), "fleet size", "fleet sizes"), num.Count(uint64(l.Repeat), "repeat", "repeats"), clock)
	fmt.Fprintf(w, "loads: %s, each for %s: %d requests in all (first attempts), peak %s\n", strings.Join(loads, ", "), num.About(l.Duration), l.Planned(capacity), num.PerSecond(peak))
	if l.Named != nil {
		fmt.Fprintf(w, "expected duration: up to about %s\n", num.About(l.namedLength()))
	} else {
		fmt.Fprintf(w, "work: at most %s attempts on the simulator (--max-work %s)\n", num.Grouped(float64(l.Work()), 0), num.Grouped(float64(l.MaxWork), 0))
	}
	fmt.Fprintf(w, "report: %s\n", j.OutDir)
}

// namedLength bounds a named lab's wall time: every run's arrivals and
// its budget, and the pauses between runs.
func (l *Lab) namedLength() time.Duration {
	total := l.Runs()
	return time.Duration(total)*(l.Duration+l.Budget) + time.Duration(max(total-1, 0))*l.Named.Pause
}

// coordinatedLength bounds a coordinated lab's wall time: its runs, at
// runs at a time, each its arrivals and its budget.
func (l *Lab) coordinatedLength(at int) time.Duration {
	return time.Duration((l.Runs()+at-1)/at) * (l.Duration + l.Budget)
}

// Announce says on stderr what the lab will run, and where (with what
// it may take), and has its progress printed there every tenth of its
// runs (Progress).
func (l *Lab) Announce(stderr io.Writer) {
	total := l.Runs()
	where := fmt.Sprintf("on the embedded simulator, on a virtual clock, at most %s attempts", num.Grouped(float64(l.Work()), 0))
	if n := l.Named; n != nil {
		where = fmt.Sprintf("against the named target, in turn on the wall clock, %d requests in all, up to about %v", l.Planned(n.Capacity), l.namedLength().Round(time.Second))
	} else if l.Coordinate != nil {
		at := LoopbackRuns()
		where = fmt.Sprintf("coordinated through --coordinate, on the wall clock (not byte-reproducible), each on a fresh embedded simulator on loopback, %d at a time, up to about %v", at, l.coordinatedLength(at).Round(time.Second))
	}
	policies := fmt.Sprintf("%d policies", len(l.Policies))
	if l.Coordinate != nil {
		policies = fmt.Sprintf("(%d policies + %d coordinated)", len(l.Policies), l.CoordinatedPolicies())
	}
	fmt.Fprintf(stderr, "ptuprobe: up to %d runs (%s × %d loads × %d fleet sizes × %d repeats; on the simulator a row clearly beaten after %d keeps them) %s\n",
		total, policies, len(l.Loads), len(l.Clients), l.Repeat, MinRaceRepeats, where)
	step := max(1, total/progressSteps)
	l.Progress = func(done, total int) {
		if done%step == 0 || done == total {
			fmt.Fprintf(stderr, "ptuprobe: %d of %d runs done\n", done, total)
		}
	}
}

// progressSteps are the progress lines Announce has the lab print.
const progressSteps = 10
