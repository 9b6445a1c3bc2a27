package referee

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"github.com/ptuprobe/ptuprobe/sim"
)

// Verdict is what the referee found.
type Verdict struct {
	Scenario string  `json:"scenario"`
	Dialect  string  `json:"dialect"`
	Checks   []Check `json:"checks"`
	// Pass: every expectation held and the command finished in time,
	// uninterrupted.
	Pass bool `json:"pass"`
	// Command is the program's base name (its arguments may name hosts
	// or carry keys, so they are not kept).
	Command string `json:"command"`
	// CommandExit is the command's exit status, -1 when a signal ended it.
	CommandExit int  `json:"command_exit"`
	TimedOut    bool `json:"timed_out"`
	// Interrupted: the referee was interrupted (Ctrl-C) and ended the
	// command; the checks hold what the witness saw until then.
	Interrupted bool `json:"interrupted,omitempty"`
	// Seconds is how long the command ran.
	Seconds float64 `json:"seconds"`
	// WithheldEnv counts the credential-like variables of the caller's
	// environment the command was not given (their names are not kept
	// here: Run says them on the job's Stderr).
	WithheldEnv int `json:"withheld_env"`
	// What the simulator counted, for the reader of the checks.
	Admitted uint64 `json:"admitted"`
	Refused  uint64 `json:"refused"`
	Spilled  uint64 `json:"spilled"`
	Rejected uint64 `json:"rejected"`
	// ForeignKeys are the rejected requests refused for their key.
	ForeignKeys uint64 `json:"foreign_keys"`
	Retries     uint64 `json:"retries"`
	// SDKRetries, MarkedRetries and UndeclaredRetries are the witness's:
	// declared, recognized by a marker, and neither.
	SDKRetries        uint64 `json:"sdk_retries"`
	MarkedRetries     uint64 `json:"marked_retries"`
	UndeclaredRetries uint64 `json:"undeclared_retries"`
	// MaxCallRetries and MixedCalls are the witness's evidence of a stack
	// that declares nothing (sim.Stats).
	MaxCallRetries uint64 `json:"max_call_retries"`
	MixedCalls     uint64 `json:"mixed_calls"`
	// HerdSource is the field the herd was read against, the one the
	// client honours ("" when no retry was compared); HerdCompared the
	// retries compared with the client's median lateness (sim.Stats).
	HerdSource   string `json:"herd_source,omitempty"`
	HerdCompared uint64 `json:"herd_compared"`
	// UnansweredPastBudget counts the refusals older than the budget that
	// nobody had come back to when the command ended: a client asleep
	// past its budget, or one that gave them up (the witness cannot tell
	// which); they are among incomplete.
	UnansweredPastBudget uint64  `json:"unanswered_past_budget"`
	NeighbourBatches     uint64  `json:"neighbour_batches,omitempty"`
	PTU                  float64 `json:"ptu"`
	BudgetSeconds        float64 `json:"budget_seconds"`
	OwnerRetries         int     `json:"owner_retries"`
}

// Run validates the job, starts the simulator on 127.0.0.1, runs the
// command against it, grades what the simulator saw and writes the
// outputs into OutDir. An error wrapping ErrStart means the command could
// not be started; a *valid.Error, a refused setting. When ctx ends first
// (Ctrl-C), the command is ended, and the verdict, marked Interrupted, is
// graded and written all the same: Run returns it with ctx's error.
func Run(ctx context.Context, j Job) (Verdict, []string, error) {
	if err := j.Validate(); err != nil {
		return Verdict{}, nil, err
	}
	key, err := randomID("ptuprobe-referee-")
	if err != nil {
		return Verdict{}, nil, err
	}
	run, err := randomID("")
	if err != nil {
		return Verdict{}, nil, err
	}
	cfg := j.simConfig()
	cfg.OnlyKey = key
	simCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	running, err := sim.Start(simCtx, cfg, "127.0.0.1:0")
	if err != nil {
		return Verdict{}, nil, err
	}
	defer running.Close()
	runsInFlight.Add(1)
	defer runsInFlight.Add(-1)
	env, withheld, unset := commandEnv(j.Env, refereeEnv(j.Dialect, running.URL, key, run), j.PassEnv)
	j.Stdout, j.Stderr = lockOutputs(j.Stdout, j.Stderr)
	began := time.Now()
	end, err := runCommand(ctx, &j, env, run, func() { noteEnv(j.Stderr, j.Dialect, withheld, unset) })
	if err != nil {
		return Verdict{}, nil, err
	}
	v := j.verdict(running.Server.Stats(), end, cfg.PTU)
	v.Seconds, v.WithheldEnv = time.Since(began).Round(time.Millisecond).Seconds(), len(withheld)
	var written []string
	if j.OutDir != "" {
		written, err = write(j.OutDir, v)
	}
	if end.interrupted {
		return v, written, errors.Join(ctx.Err(), err)
	}
	return v, written, err
}

// verdict grades the simulator's stats of a command that ended so.
func (j *Job) verdict(st sim.Stats, end commandEnd, ptu float64) Verdict {
	v := Verdict{
		Scenario: j.Scenario, Dialect: j.Dialect, Checks: grade(st, j.Expect, j.ownerRetries()),
		Command: filepath.Base(j.Command[0]), CommandExit: end.exit, TimedOut: end.timedOut, Interrupted: end.interrupted,
		Admitted: st.Admitted, Refused: st.Refused, Spilled: st.Spilled, Rejected: st.Rejected, ForeignKeys: st.ForeignKeys, Retries: st.Retries,
		SDKRetries: st.SDKRetries, MarkedRetries: st.MarkedRetries, UndeclaredRetries: st.UndeclaredRetries,
		MaxCallRetries: st.MaxCallRetries, MixedCalls: st.MixedCalls, HerdSource: st.HerdSource, HerdCompared: st.HerdCompared,
		UnansweredPastBudget: st.PendingPastBudget, NeighbourBatches: st.NeighbourBatches,
		PTU: ptu, BudgetSeconds: j.Budget.Seconds(), OwnerRetries: j.ownerRetries(),
	}
	v.Pass = !end.timedOut && !end.interrupted
	for _, c := range v.Checks {
		v.Pass = v.Pass && c.Pass
	}
	return v
}

// ownerRetries is the job's OwnerRetries (0: no bound).
func (j *Job) ownerRetries() int {
	return max(j.OwnerRetries, DefaultOwnerRetries)
}

// randomID is prefix and 16 random bytes in hex: the throwaway key, good
// for this run's simulator only, and the run's mark.
func randomID(prefix string) (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("a throwaway key: %w", err)
	}
	return prefix + hex.EncodeToString(b), nil
}

// runsInFlight counts the runs of this process whose command is running
// or being ended: with one, every process re-parented to the referee
// since its command started is that command's (ending).
var runsInFlight atomic.Int32

// killGrace is how long the command's process group, and what it left
// behind, have between SIGTERM and SIGKILL.
const killGrace = 2 * time.Second

// commandEnd is how the command ended.
type commandEnd struct {
	exit                  int
	timedOut, interrupted bool
}

// runCommand runs the command in a process group of its own and waits
// for it within the job's timeout; on expiry, or when ctx ends, the
// group is ended (SIGTERM, then SIGKILL after the grace). When the
// command has exited, whatever it left running is ended too (ending),
// so nothing it started keeps calling a closed simulator. started is
// called once the command has started.
func runCommand(ctx context.Context, j *Job, env []string, run string, started func()) (commandEnd, error) {
	grace := j.grace
	if grace <= 0 {
		grace = killGrace
	}
	c := exec.Command(j.Command[0], j.Command[1:]...)
	c.Env, c.Stdin, c.Stdout, c.Stderr = env, stdinOf(j.Stdin), j.Stdout, j.Stderr
	c.WaitDelay = grace
	ownGroup(c)
	began := time.Now()
	done, err := startLocked(c)
	if err != nil {
		return commandEnd{}, fmt.Errorf("%w: %s: %v", ErrStart, filepath.Base(j.Command[0]), startReason(err))
	}
	started()
	timer := time.NewTimer(j.Timeout)
	defer timer.Stop()
	var end commandEnd
	var werr error
	select {
	case werr = <-done:
	case <-timer.C:
		end.timedOut = true
		werr = stopGroup(c, done, grace)
	case <-ctx.Done():
		end.interrupted = true
		werr = stopGroup(c, done, grace)
	}
	ending(c.Process.Pid, run, began, grace)
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) && !errors.Is(werr, exec.ErrWaitDelay) {
		return end, fmt.Errorf("wait for %s: %w", filepath.Base(j.Command[0]), werr)
	}
	end.exit = c.ProcessState.ExitCode()
	return end, nil
}

// startLocked starts c from a goroutine locked to its OS thread, which
// then waits for it. The kernel sends a child's Pdeathsig when the thread
// that started it ends, and Go ends a thread only when a goroutine locked
// to it returns locked: this one unlocks once c is waited for, so the
// command is killed with the referee (SIGKILL included), and never
// because a thread of a live referee went away.
func startLocked(c *exec.Cmd) (<-chan error, error) {
	started, done := make(chan error, 1), make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := c.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		done <- c.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return done, nil
}

// stopGroup ends the command's group, SIGTERM then SIGKILL after grace,
// and returns what Wait said.
func stopGroup(c *exec.Cmd, done <-chan error, grace time.Duration) error {
	endGroup(c, false)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		endGroup(c, true)
		return <-done
	}
}

// stdinOf is what the command reads: in, unless in is a terminal. The
// command runs in a process group of its own, in the terminal's
// background, where reading the terminal would stop it (SIGTTIN) until
// the timeout; it reads nothing (/dev/null) instead.
func stdinOf(in io.Reader) io.Reader {
	if f, ok := in.(*os.File); ok && (f == nil || term.IsTerminal(int(f.Fd()))) {
		return nil
	}
	return in
}

// startReason is why the command could not start, without its path's
// directories (they may name a user).
func startReason(err error) string {
	if errors.Is(err, exec.ErrNotFound) {
		return "not found in PATH"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// lockedWriter serializes writes to w: the command's output, copied by
// exec's goroutines when it is not a file, and the referee's own notes
// share it.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// lockOutputs makes the command's stdout and stderr safe to write from
// the referee while the command runs: a file as it is (the kernel
// serializes its writes, and exec hands it to the command), any other
// writer behind a lock, one lock for both when they are the same writer.
func lockOutputs(stdout, stderr io.Writer) (io.Writer, io.Writer) {
	wrap := func(w io.Writer) io.Writer {
		if _, ok := w.(*os.File); ok || w == nil {
			return w
		}
		return &lockedWriter{w: w}
	}
	if stdout != nil && sameWriter(stdout, stderr) {
		w := wrap(stdout)
		return w, w
	}
	return wrap(stdout), wrap(stderr)
}

// sameWriter is stdout == stderr, false for writers that cannot be
// compared (a comparison of such would panic).
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}
