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
// process group pgid, and the processes that left it (carrying the run's
// mark, runEnv, re-parented to the referee), with all their
// descendants. SIGTERM first, SIGKILL to what is still alive after grace;
// the ones that die as the referee's children are reaped. A process that
// left the group, outlived its parent and cleared its environment (or
// exec'd a set-uid program, whose environment cannot be read) is out of
// reach.
func ending(pgid int, run string, grace time.Duration) {
	mark := []byte(runEnv + "=" + run)
	ours := map[int]bool{}
	left := leftovers(pgid, mark, ours)
	if len(left) == 0 {
		return
	}
	signalAll(pgid, left, syscall.SIGTERM)
	for deadline := time.Now().Add(grace); len(left) > 0 && time.Now().Before(deadline); {
		time.Sleep(pollEvery)
		left = leftovers(pgid, mark, ours)
	}
	for round := 0; len(left) > 0 && round < 100; round++ { // a second at most
		signalAll(pgid, left, syscall.SIGKILL)
		time.Sleep(pollEvery)
		left = leftovers(pgid, mark, ours)
	}
}

// signalAll sends sig to the group pgid and to each of pids.
func signalAll(pgid int, pids []int, sig syscall.Signal) {
	_ = syscall.Kill(-pgid, sig)
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
}

// proc is one process as /proc/PID/stat tells it.
type proc struct {
	pid, ppid, pgrp int
	zombie          bool
}

// leftovers lists the live processes of the run: members of the group
// pgid, the referee's children that carry mark in their environment, and
// every descendant of either. It reaps the referee's dead children among
// them, or among ours, the ones seen alive before (a process re-parented
// to the referee is its child to reap; no other child of the referee's,
// such as another run's command, is touched).
func leftovers(pgid int, mark []byte, ours map[int]bool) []int {
	procs := scanProcs()
	self := os.Getpid()
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
		if p.pgrp == pgid || ours[p.pid] || p.ppid == self && marked(p.pid, mark) {
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

// parseStat reads "pid (comm) state ppid pgrp …" (proc(5)); comm may
// hold spaces and parentheses, so the fields after it start after the
// last ')'.
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
	return proc{pid: pid, ppid: ppid, pgrp: pgrp, zombie: string(f[0]) == "Z"}, true
}
