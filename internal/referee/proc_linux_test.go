//go:build linux

package referee

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/sim"
)

func init() {
	moreClients["leave"] = func() int { return leave(false) }
	moreClients["escape"] = func() int { return leave(true) }
	moreClients["escape-unmarked"] = func() int { return leaveUnmarked() }
	moreClients["term-ignorer"] = termIgnorer
	moreClients["ready-then-hang"] = readyThenHang
	moreClients["referee"] = refereeOfAHang
	moreClients["until-file"] = untilFile
}

// untilFileEnv names the file untilFile waits for.
const untilFileEnv = "PTUPROBE_TEST_UNTIL_FILE"

// untilFile says it is ready on stdout and exits when the file named by
// untilFileEnv exists (10 s at most).
func untilFile() int {
	fmt.Println("ready")
	for range 1000 {
		if _, err := os.Stat(os.Getenv(untilFileEnv)); err == nil {
			return 0
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 6
}

// TestProgramsOwnChildSurvivesARun: a process the referee's program
// starts itself while a run is in flight (os/exec, in the program's own
// group) is not the run's to end, although it is the program's child,
// started since the command, unmarked: it is alive after Run returns.
// Not parallel: the start-time rule holds only while one run is in
// flight, and parallel tests wait while this one runs.
func TestProgramsOwnChildSurvivesARun(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	until := filepath.Join(t.TempDir(), "until")
	j := helperJob(t, "until-file")
	j.Env = append(j.Env, untilFileEnv+"="+until)
	j.Stdout, j.OutDir = w, ""
	done := make(chan error, 1)
	go func() { _, _, err := Run(t.Context(), j); w.Close(); done <- err }()
	if line, err := bufio.NewReader(r).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("the command did not start: %q %v", line, err)
	}
	own := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	out, err := own.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	own.Env = append(os.Environ(), helperEnv+"=ready-then-hang")
	if err := own.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { own.Process.Kill(); own.Wait() }()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.HasPrefix(line, "ready") {
		t.Fatalf("the program's own child did not start: %q %v", line, err)
	}
	if err := os.WriteFile(until, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := own.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the run's end took the program's own child: %v", err)
	}
}

// leave starts a process that ignores SIGTERM (in a session of its own
// when setsid), waits until it is ready, and exits, leaving it behind.
func leave(setsid bool) int {
	r, w, err := os.Pipe()
	if err != nil {
		return 5
	}
	c := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	c.Env = append(os.Environ(), helperEnv+"=term-ignorer")
	c.Stdout, c.ExtraFiles = os.Stdout, []*os.File{w}
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
	if err := c.Start(); err != nil {
		return 5
	}
	w.Close()
	if _, err := bufio.NewReader(r).ReadString('\n'); err != nil {
		return 5
	}
	return 0
}

// leaveUnmarked is a daemon's double fork that clears the run's mark: it
// starts, in a session of its own and with runEnv removed from its
// environment, a process that ignores SIGTERM, waits until it is ready,
// and exits, leaving it behind.
func leaveUnmarked() int {
	r, w, err := os.Pipe()
	if err != nil {
		return 5
	}
	c := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, runEnv+"=") {
			c.Env = append(c.Env, kv)
		}
	}
	c.Env = append(c.Env, helperEnv+"=term-ignorer")
	c.Stdout, c.ExtraFiles = os.Stdout, []*os.File{w}
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		return 5
	}
	w.Close()
	if _, err := bufio.NewReader(r).ReadString('\n'); err != nil {
		return 5
	}
	return 0
}

// termIgnorer ignores SIGTERM, says so on fd 3, and hangs.
func termIgnorer() int {
	signal.Ignore(syscall.SIGTERM)
	ready := os.NewFile(3, "ready")
	fmt.Fprintln(ready, "ready")
	ready.Close()
	time.Sleep(time.Hour)
	return 0
}

// readyThenHang says its pid on stdout and hangs.
func readyThenHang() int {
	fmt.Println("ready", os.Getpid())
	time.Sleep(time.Hour)
	return 0
}

// refereeOfAHang is a referee (Run) whose command says it is ready on
// the referee's stdout and hangs: the process TestKilledRefereeKillsItsCommand kills.
func refereeOfAHang() int {
	j := Job{
		Scenario: ScenarioStorm, Dialect: sim.DialectAzure, Budget: time.Second, Timeout: time.Hour,
		Command: []string{os.Args[0], "-test.run=^TestHelperProcess$"}, Env: append(os.Environ(), helperEnv+"=ready-then-hang"),
		Stdout: os.Stdout, Seed: 1,
	}
	if _, _, err := Run(context.Background(), j); err != nil {
		fmt.Fprintln(os.Stderr, "referee:", err)
		return 5
	}
	return 0
}

// TestLeftBehindIsEnded: what the command leaves running when it exits,
// ignoring SIGTERM, in its group or in a session of its own, is killed
// before Run returns: the pipe it holds is closed.
func TestLeftBehindIsEnded(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"leave", "escape"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			j := helperJob(t, mode)
			j.Stdout, j.OutDir = w, ""
			v, _, err := Run(t.Context(), j)
			w.Close()
			if err != nil || v.CommandExit != 0 {
				t.Fatalf("%v, exit %d", err, v.CommandExit)
			}
			expectEOF(t, r)
		})
	}
}

// TestClearedMarkIsEnded: a process that left the command's session and
// cleared the run's mark, then outlived its parent, is ended with the
// run all the same when the run is the only one of the process (not
// parallel: the test runs alone).
func TestClearedMarkIsEnded(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	j := helperJob(t, "escape-unmarked")
	j.Stdout, j.OutDir = w, ""
	v, _, err := Run(t.Context(), j)
	w.Close()
	if err != nil || v.CommandExit != 0 {
		t.Fatalf("%v, exit %d", err, v.CommandExit)
	}
	expectEOF(t, r)
}

// expectEOF reads r to its end: every holder of the pipe's other end is
// gone. A holder still alive after 10 s fails the test.
func expectEOF(t *testing.T, r *os.File) {
	t.Helper()
	if err := r.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(r); err != nil {
		t.Errorf("a process left behind still holds the pipe: %v", err)
	}
}

// TestKilledRefereeKillsItsCommand: a referee killed by SIGKILL takes
// its command with it (Pdeathsig). Not parallel: its referee is a child
// of the test binary, which a parallel test's Run, the only one in
// flight, ends as a process its command left behind ("the command did
// not start: EOF" under -race at load 12).
func TestKilledRefereeKillsItsCommand(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ref := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	var stderr bytes.Buffer
	ref.Env, ref.Stdout, ref.Stderr = append(os.Environ(), helperEnv+"=referee"), w, &stderr
	if err := ref.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	line, err := bufio.NewReader(r).ReadString('\n')
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "ready")))
	if err != nil || pid <= 0 {
		ref.Process.Kill()
		ref.Wait()
		t.Fatalf("the command did not start: %q %v; the referee's stderr: %q", line, err, stderr.String())
	}
	ref.Process.Kill()
	ref.Wait()
	expectEOF(t, r)
	if syscall.Kill(pid, 0) == nil { // the command outlived its referee: end it
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// FuzzParseStat: /proc/PID/stat's reader never panics, and reads back
// what it is given, whatever the command's name holds: its start time
// from a whole line, -1 from a short one.
func FuzzParseStat(f *testing.F) {
	f.Add([]byte("4711 (sleep) S 1 4711 4711 0 -1 4194560"), 4711, 1, 4711, "sleep", int64(12345))
	f.Add([]byte("1 (a) b) (c) Z 2 3"), 1, 2, 3, "a) b) (c", int64(0))
	f.Fuzz(func(t *testing.T, raw []byte, pid, ppid, pgrp int, comm string, start int64) {
		parseStat(raw)
		if pid < 0 || ppid < 0 || pgrp < 0 || start < 0 || strings.ContainsAny(comm, "\n") {
			return
		}
		p, ok := parseStat(fmt.Appendf(nil, "%d (%s) R %d %d 0", pid, comm, ppid, pgrp))
		if !ok || p.pid != pid || p.ppid != ppid || p.pgrp != pgrp || p.zombie || p.start != -1 {
			t.Errorf("%d (%s) R %d %d: %+v %v", pid, comm, ppid, pgrp, p, ok)
		}
		line := fmt.Appendf(nil, "%d (%s) S %d %d %d 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 %d 1000 10", pid, comm, ppid, pgrp, pid, start)
		if p, ok := parseStat(line); !ok || p.start != start || p.pid != pid {
			t.Errorf("%s: %+v %v", line, p, ok)
		}
	})
}
