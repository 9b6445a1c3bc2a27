package referee

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER (linux/prctl.h).
const prSetChildSubreaper = 36

// subreaper makes the referee its descendants' subreaper, once: a
// process whose parent dies is re-parented to the referee rather than to
// init, so ending can find what the command left behind, even what left
// its process group (setsid, a daemon's double fork). Should the kernel
// refuse (before Linux 3.4), orphans go to init and only the group is
// ended.
var subreaper = sync.OnceFunc(func() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
})

// ownGroup starts the command as the leader of a new process group, so
// that everything it starts can be ended with it, killed when the
// referee dies (Pdeathsig, which startLocked keeps to the referee's
// life), under the referee as subreaper.
func ownGroup(c *exec.Cmd) {
	subreaper()
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// pollEvery is how often ending looks at what is left.
const pollEvery = 10 * time.Millisecond

// ending ends what the exited command left running: the rest of its
// process group pgid, and the processes that left it and were
// re-parented to the referee, with all their descendants: those that
// carry the run's mark (runEnv), and, when this run is the only one in
// the process (runsInFlight), those started since the command was
// (since), mark or not — a daemon's double fork that cleared its
// environment. SIGTERM first, SIGKILL to what is still alive after
// grace; the ones that die as the referee's children are reaped. Out of
// reach: a process that left the group, outlived its parent and cleared
// its environment (or exec'd a set-uid program, whose environment cannot
// be read) while another run of the same process was in flight, or that
// joined the referee's own process group.
func ending(pgid int, run string, since time.Time, grace time.Duration) {
	mark := []byte(runEnv + "=" + run)
	ours := map[int]bool{}
	sinceTicks := int64(-1)
	if runsInFlight.Load() == 1 {
		sinceTicks = bootTicks(since)
	}
	left := leftovers(pgid, mark, sinceTicks, ours)
	if len(left) == 0 {
		return
	}
	signalAll(pgid, left, syscall.SIGTERM)
	for deadline := time.Now().Add(grace); len(left) > 0 && time.Now().Before(deadline); {
		time.Sleep(pollEvery)
		left = leftovers(pgid, mark, sinceTicks, ours)
	}
	for round := 0; len(left) > 0 && round < 100; round++ { // a second at most
		signalAll(pgid, left, syscall.SIGKILL)
		time.Sleep(pollEvery)
		left = leftovers(pgid, mark, sinceTicks, ours)
	}
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's starttime: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// bootTicks is t in clock ticks since boot, a tick early (the command
// starts after t; a process it starts, at or after its tick); -1 when
// /proc/uptime cannot be read.
func bootTicks(t time.Time) int64 {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return -1
	}
	f := bytes.Fields(b)
	if len(f) == 0 {
		return -1
	}
	up, err := strconv.ParseFloat(string(f[0]), 64)
	if err != nil || up < 0 {
		return -1
	}
	boot := time.Now().Add(-time.Duration(up * float64(time.Second)))
	return max(int64(t.Sub(boot).Seconds()*clockTicks)-1, 0)
}

// signalAll sends sig to the group pgid and to each of pids.
func signalAll(pgid int, pids []int, sig syscall.Signal) {
	_ = syscall.Kill(-pgid, sig)
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
}

// proc is one process as /proc/PID/stat tells it; start is its start
// time in clock ticks since boot (-1 when the line stops short of it).
type proc struct {
	pid, ppid, pgrp int
	start           int64
	zombie          bool
}

// leftovers lists the live processes of the run: members of the group
// pgid, the referee's children that carry mark in their environment or,
// when sinceTicks >= 0, started at or after it, and every descendant of
// them. It reaps the referee's dead children among them, or among ours,
// the ones seen alive before (a process re-parented to the referee is
// its child to reap; no other child of the referee's, such as another
// run's command, is touched).
func leftovers(pgid int, mark []byte, sinceTicks int64, ours map[int]bool) []int {
	procs := scanProcs()
	// Read after the scan: another run counts itself before it starts its
	// command, so a command the scan saw of a run begun since is counted
	// here, and its command is not taken for this run's escapee.
	if runsInFlight.Load() != 1 {
		sinceTicks = -1
	}
	self, ownPgrp := os.Getpid(), syscall.Getpgrp()
	children := map[int][]int{}
	var seeds []int
	for _, p := range procs {
		if p.zombie {
			if p.ppid == self && (p.pgrp == pgid || ours[p.pid]) {
				var ws syscall.WaitStatus
				_, _ = syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
			}
			continue
		}
		children[p.ppid] = append(children[p.ppid], p.pid)
		// Unmarked, a process is taken by its start time only outside the
		// referee's own process group: the command runs in a group of its
		// own and a double fork leaves it for another, while a process the
		// referee's program starts itself (os/exec, no Setpgid) stays in
		// the program's group (a parallel test's child was killed at a
		// run's end, 0.39 s after it started).
		adopted := p.ppid == self && (marked(p.pid, mark) || sinceTicks >= 0 && p.start >= sinceTicks && p.pgrp != ownPgrp)
		if p.pgrp == pgid || ours[p.pid] || adopted {
			seeds = append(seeds, p.pid)
		}
	}
	var left []int
	seen := map[int]bool{}
	for len(seeds) > 0 {
		pid := seeds[len(seeds)-1]
		seeds = seeds[:len(seeds)-1]
		if seen[pid] {
			continue
		}
		seen[pid], ours[pid] = true, true
		left = append(left, pid)
		seeds = append(seeds, children[pid]...)
	}
	return left
}

// marked reports whether the process's environment holds mark, a whole
// NAME=VALUE entry.
func marked(pid int, mark []byte) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for entry := range bytes.SplitSeq(env, []byte{0}) {
		if bytes.Equal(entry, mark) {
			return true
		}
	}
	return false
}

// scanProcs reads every process's pid, parent, group and whether it is a
// zombie from /proc; a process that ends meanwhile is left out.
func scanProcs() []proc {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	out := make([]proc, 0, len(dirs))
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		if p, ok := parseStat(b); ok {
			out = append(out, p)
		}
	}
	return out
}

// parseStat reads "pid (comm) state ppid pgrp … starttime …" (proc(5):
// starttime is the 22nd field); comm may hold spaces and parentheses, so
// the fields after it start after the last ')'.
func parseStat(b []byte) (proc, bool) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return proc{}, false
	}
	f := bytes.Fields(b[end+1:])
	if len(f) < 3 {
		return proc{}, false
	}
	pid, err1 := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	ppid, err2 := strconv.Atoi(string(f[1]))
	pgrp, err3 := strconv.Atoi(string(f[2]))
	if err1 != nil || err2 != nil || err3 != nil {
		return proc{}, false
	}
	start := int64(-1)
	if len(f) > 19 {
		if n, err := strconv.ParseInt(string(f[19]), 10, 64); err == nil && n >= 0 {
			start = n
		}
	}
	return proc{pid: pid, ppid: ppid, pgrp: pgrp, start: start, zombie: string(f[0]) == "Z"}, true
}
