package referee

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/sim"
)

// Verdict is what the referee found.
type Verdict struct {
	Scenario string  `json:"scenario"`
	Dialect  string  `json:"dialect"`
	Checks   []Check `json:"checks"`
	// Pass: every expectation held and the command finished in time.
	Pass bool `json:"pass"`
	// Command is the program's base name (its arguments may name hosts
	// or carry keys, so they are not kept).
	Command string `json:"command"`
	// CommandExit is the command's exit status, -1 when a signal ended it.
	CommandExit int  `json:"command_exit"`
	TimedOut    bool `json:"timed_out"`
	// Seconds is how long the command ran.
	Seconds float64 `json:"seconds"`
	// What the simulator counted, for the reader of the checks.
	Admitted uint64 `json:"admitted"`
	Refused  uint64 `json:"refused"`
	Spilled  uint64 `json:"spilled"`
	Rejected uint64 `json:"rejected"`
	Retries  uint64 `json:"retries"`
	// SDKRetries, MarkedRetries and UndeclaredRetries are the witness's:
	// declared, recognized by a marker, and neither.
	SDKRetries        uint64  `json:"sdk_retries"`
	MarkedRetries     uint64  `json:"marked_retries"`
	UndeclaredRetries uint64  `json:"undeclared_retries"`
	PTU               float64 `json:"ptu"`
	BudgetSeconds     float64 `json:"budget_seconds"`
}

// Run validates the job, starts the simulator on 127.0.0.1, runs the
// command against it, grades what the simulator saw and writes the
// outputs into OutDir. An error wrapping ErrStart means the command could
// not be started; a *valid.Error, a refused setting.
func Run(ctx context.Context, j Job) (Verdict, []string, error) {
	if err := j.Validate(); err != nil {
		return Verdict{}, nil, err
	}
	cfg := j.simConfig()
	simCtx, stop := context.WithCancel(ctx)
	defer stop()
	running, err := sim.Start(simCtx, cfg, "127.0.0.1:0")
	if err != nil {
		return Verdict{}, nil, err
	}
	defer running.Close()
	key, err := throwawayKey()
	if err != nil {
		return Verdict{}, nil, err
	}
	began := time.Now()
	exit, timedOut, err := runCommand(ctx, &j, commandEnv(j.Env, running.URL, key))
	if err != nil {
		return Verdict{}, nil, err
	}
	st := running.Server.Stats()
	v := Verdict{
		Scenario: j.Scenario, Dialect: j.Dialect, Checks: grade(st, j.Expect, timedOut),
		Command: filepath.Base(j.Command[0]), CommandExit: exit, TimedOut: timedOut,
		Seconds:  time.Since(began).Round(time.Millisecond).Seconds(),
		Admitted: st.Admitted, Refused: st.Refused, Spilled: st.Spilled, Rejected: st.Rejected, Retries: st.Retries,
		SDKRetries: st.SDKRetries, MarkedRetries: st.MarkedRetries, UndeclaredRetries: st.UndeclaredRetries,
		PTU: cfg.PTU, BudgetSeconds: j.Budget.Seconds(),
	}
	v.Pass = !timedOut
	for _, c := range v.Checks {
		v.Pass = v.Pass && c.Pass
	}
	if j.OutDir == "" {
		return v, nil, nil
	}
	written, err := write(j.OutDir, v)
	return v, written, err
}

// throwawayKey is a fresh random key, good for this run's simulator only.
func throwawayKey() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("a throwaway key: %w", err)
	}
	return "ptuprobe-referee-" + hex.EncodeToString(b), nil
}

// commandEnv is base with every variable the SDKs read for their target
// and key replaced: the OpenAI (OPENAI_BASE_URL, OPENAI_API_KEY, and
// openai-go's OPENAI_ADMIN_KEY), Azure OpenAI (AZURE_OPENAI_ENDPOINT,
// AZURE_OPENAI_API_KEY, AZURE_OPENAI_AD_TOKEN, OPENAI_API_VERSION),
// Anthropic (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN)
// and Gemini (@google/genai: GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY and
// GOOGLE_API_KEY, which it prefers; GOOGLE_GENAI_USE_VERTEXAI off) SDKs.
// Loopback is added to NO_PROXY, and PTUPROBE_REFEREE_URL names the
// simulator for clients of no SDK.
func commandEnv(base []string, url, key string) []string {
	set := map[string]string{
		"OPENAI_BASE_URL":           url + "/v1",
		"OPENAI_API_KEY":            key,
		"OPENAI_ADMIN_KEY":          key,
		"AZURE_OPENAI_ENDPOINT":     url,
		"AZURE_OPENAI_API_KEY":      key,
		"AZURE_OPENAI_AD_TOKEN":     key,
		"OPENAI_API_VERSION":        APIVersion,
		"ANTHROPIC_BASE_URL":        url,
		"ANTHROPIC_API_KEY":         key,
		"ANTHROPIC_AUTH_TOKEN":      key,
		"GOOGLE_GEMINI_BASE_URL":    url,
		"GEMINI_API_KEY":            key,
		"GOOGLE_API_KEY":            key,
		"GOOGLE_GENAI_USE_VERTEXAI": "false",
		"PTUPROBE_REFEREE_URL":      url,
	}
	noProxy := "127.0.0.1,localhost"
	out := make([]string, 0, len(base)+len(set)+2)
	for _, kv := range base {
		name, value, _ := strings.Cut(kv, "=")
		if _, ok := set[name]; ok {
			continue
		}
		if name == "NO_PROXY" || name == "no_proxy" {
			if value != "" {
				noProxy = value + "," + noProxy
			}
			continue
		}
		out = append(out, kv)
	}
	for name, value := range set {
		out = append(out, name+"="+value)
	}
	return append(out, "NO_PROXY="+noProxy, "no_proxy="+noProxy)
}

// killGrace is how long a command's process group has between SIGTERM
// and SIGKILL once its time is up.
const killGrace = 2 * time.Second

// runCommand runs the command in a process group of its own and waits
// for it within the job's timeout; on expiry (or ctx's end) the whole
// group is ended. When the command exits, what is left of its group is
// ended too: nothing it started keeps calling a closed simulator.
func runCommand(ctx context.Context, j *Job, env []string) (exit int, timedOut bool, err error) {
	c := exec.Command(j.Command[0], j.Command[1:]...)
	c.Env, c.Stdout, c.Stderr = env, j.Stdout, j.Stderr
	c.WaitDelay = killGrace
	ownGroup(c)
	if err := c.Start(); err != nil {
		return 0, false, fmt.Errorf("%w: %s: %v", ErrStart, filepath.Base(j.Command[0]), startReason(err))
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	timer := time.NewTimer(j.Timeout)
	defer timer.Stop()
	var werr error
	select {
	case werr = <-done:
		endGroup(c, false)
	case <-timer.C:
		timedOut = true
		werr = stopGroup(c, done)
	case <-ctx.Done():
		werr = stopGroup(c, done)
	}
	if ctx.Err() != nil {
		return 0, false, ctx.Err()
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) && !errors.Is(werr, exec.ErrWaitDelay) {
		return 0, timedOut, fmt.Errorf("wait for %s: %w", filepath.Base(j.Command[0]), werr)
	}
	return c.ProcessState.ExitCode(), timedOut, nil
}

// stopGroup ends the command's group, SIGTERM then SIGKILL after
// killGrace, and returns what Wait said.
func stopGroup(c *exec.Cmd, done <-chan error) error {
	endGroup(c, false)
	select {
	case err := <-done:
		endGroup(c, true)
		return err
	case <-time.After(killGrace):
		endGroup(c, true)
		return <-done
	}
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
