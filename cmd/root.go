// Package cmd is the command line: it parses flags into options and calls
// the packages that do the work. It holds no logic a user could not reach
// without it.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	ExitOK          = 0
	ExitFailure     = 1   // the run could not be done (I/O, target setup)
	ExitUsage       = 2   // bad flags or input
	ExitThreshold   = 3   // a --fail-if threshold was breached
	ExitInterrupted = 130 // SIGINT/SIGTERM; completed rows are kept
)

// ExitError carries an exit code with the one line the user sees.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// usageError returns an error that exits with ExitUsage.
func usageError(format string, a ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, a...)}
}

// asUsage marks err as a usage error (exit 2).
func asUsage(err error) error {
	if err == nil {
		return nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	return &ExitError{Code: ExitUsage, Err: err}
}

// Version is set at build time with -ldflags "-X …/cmd.Version=…".
var Version = "dev"

// newRoot builds the tree and returns a finish func that stops a CPU
// profile started by the hidden --cpuprofile flag.
func newRoot() (*cobra.Command, func()) {
	root := &cobra.Command{
		Use:   "ptuprobe",
		Short: "Load generator and retry-after characterizer for rate-limited LLM endpoints",
		Long: `ptuprobe fires burst-shaped and scheduled-shaped traffic at an HTTP target
(an Azure OpenAI provisioned deployment, an OpenAI-compatible endpoint, or any
URL), records every response and every advised wait (retry-after-ms,
retry-after), and turns the records into sanitized percentile tables and ECDF
charts.

With no target given, burst, schedule and characterize run against an embedded
PTU simulator on loopback, so the tool works with no credentials.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// The root runs only when no sub-command matched: a word it does not
		// know is a usage error, typed here rather than recognised later by
		// the text of cobra's message.
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return c.Help()
			}
			hint := ""
			if s := c.SuggestionsFor(args[0]); len(s) > 0 {
				hint = fmt.Sprintf("; did you mean %s?", strings.Join(s, " or "))
			}
			return usageError("unknown command %q%s (see 'ptuprobe --help')", clipArg(args[0]), hint)
		},
	}
	root.SuggestionsMinimumDistance = 2
	// --version prints what the version command prints.
	root.Version = Version
	root.SetVersionTemplate(versionLine() + "\n")
	root.SetFlagErrorFunc(flagError)
	for _, add := range commands {
		root.AddCommand(add())
	}
	setHelp(root)
	var p profiles
	p.flags(root)
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return p.start() }
	return root, p.finish
}

// profiles are the hidden --cpuprofile, --memprofile and --trace flags:
// profiles of ptuprobe itself, for benchmarking it.
type profiles struct {
	cpu, mem string
	trace    string        // an execution trace (runtime/trace) of the whole command
	memAt    time.Duration // write the live heap this long after the start instead
	stop     func()        // ends what start began; nil before
}

func (p *profiles) flags(root *cobra.Command) {
	root.PersistentFlags().StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile to this file (for benchmarking ptuprobe itself)")
	root.PersistentFlags().StringVar(&p.mem, "memprofile", "", "write an allocation profile to this file when the command ends (for benchmarking ptuprobe itself)")
	root.PersistentFlags().DurationVar(&p.memAt, "memprofile-at", 0, "with --memprofile: write the live heap this long after the start (at a run's peak) instead of the allocations at the end, and the goroutines and their stacks to FILE.goroutines")
	root.PersistentFlags().StringVar(&p.trace, "trace", "", "write an execution trace to this file (go tool trace; for benchmarking ptuprobe itself)")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	_ = root.PersistentFlags().MarkHidden("trace")
	_ = root.PersistentFlags().MarkHidden("memprofile")
	_ = root.PersistentFlags().MarkHidden("memprofile-at")
}

// start begins the profiles asked for, before the command runs.
func (p *profiles) start() error {
	if p.mem != "" {
		runtime.MemProfileRate = 64 << 10
		write := func(profile string) {
			if f, err := os.Create(p.mem); err == nil {
				_ = pprof.Lookup(profile).WriteTo(f, 0)
				f.Close()
			}
		}
		stopMem := func() { write("allocs") }
		if p.memAt > 0 {
			// The heap in use at that moment, after a collection: what a
			// run holds at its peak (open streams), not what it allocated.
			t := time.AfterFunc(p.memAt, func() { runtime.GC(); write("heap"); p.writeStacks() })
			stopMem = func() { t.Stop() }
		}
		prev := p.stop
		p.stop = func() {
			if prev != nil {
				prev()
			}
			stopMem()
		}
	}
	// The trace (what each goroutine, thread and P did and when: a
	// stall's cause, read with go tool trace) and the CPU profile.
	if err := p.startWriter("--trace", p.trace, trace.Start, trace.Stop); err != nil {
		return err
	}
	return p.startWriter("--cpuprofile", p.cpu, pprof.StartCPUProfile, pprof.StopCPUProfile)
}

// writeStacks writes, beside the live heap of --memprofile-at, what the
// heap profile does not show: the goroutines' stacks (their count and
// the bytes of stack the runtime holds for them, runtime.MemStats) and
// the goroutines themselves, grouped by stack (PATH.goroutines).
func (p *profiles) writeStacks() {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	f, err := os.Create(p.mem + ".goroutines")
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "goroutines %d, stack in use %d B (%.0f B a goroutine), heap in use %d B, heap live %d B, next GC at %d B, sys %d B\n\n",
		runtime.NumGoroutine(), m.StackInuse, float64(m.StackInuse)/float64(max(runtime.NumGoroutine(), 1)),
		m.HeapInuse, m.HeapAlloc, m.NextGC, m.Sys)
	_ = pprof.Lookup("goroutine").WriteTo(f, 1)
}

// startWriter creates path (none when empty) and starts a profile writing
// to it, which the command's end stops before the ones started earlier.
func (p *profiles) startWriter(flag, path string, start func(io.Writer) error, stop func()) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return asUsage(fmt.Errorf("%s: %w", flag, err))
	}
	if err := start(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", flag, err)
	}
	prev := p.stop
	p.stop = func() {
		stop()
		f.Close()
		if prev != nil {
			prev()
		}
	}
	return nil
}

// finish writes the profiles, once the command has run.
func (p *profiles) finish() {
	if p.stop != nil {
		p.stop()
	}
}

// commands holds the constructors of the sub-commands; each command file
// registers its own in init, so files can be added independently.
var commands []func() *cobra.Command

func register(f func() *cobra.Command) { commands = append(commands, f) }

// Execute runs the command line and returns the process exit code.
func Execute() int {
	ctx, stop := signalContext()
	defer stop()
	return Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
}

// Run executes the CLI with args, writing to stdout and stderr, and returns
// the exit code. Tests call it in-process.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root, finish := newRoot()
	defer finish()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code := ExitFailure
	var ee *ExitError
	if errors.As(err, &ee) {
		code = ee.Code
	}
	fmt.Fprintf(stderr, "ptuprobe: %s\n", oneLine(err.Error()))
	return code
}

// noArgs refuses positional arguments with a usage error.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError("%s takes no arguments, got %q (see '%s --help')", c.CommandPath(), clipArg(args[0]), c.CommandPath())
	}
	return nil
}

// clipArg bounds an argument echoed in a message.
func clipArg(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", " ")
}

// signalContext is canceled on the first SIGINT or SIGTERM. A second signal
// restores the default behaviour, so a stuck run can still be killed.
func signalContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-ch:
			cancel()
			signal.Stop(ch)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel() }
}
