//go:build unix && !linux

package referee

import (
	"os/exec"
	"syscall"
	"time"
)

// ownGroup starts the command as the leader of a new process group, so
// that everything it starts can be ended with it. (Outside Linux there
// is no Pdeathsig nor subreaper: a referee killed by SIGKILL leaves its
// command running, and a process that leaves the group is out of reach.)
func ownGroup(c *exec.Cmd) { c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// ending ends what is left of the exited command's process group pgid:
// SIGTERM, then SIGKILL to what is still there after grace.
func ending(pgid int, _ string, _ time.Time, grace time.Duration) {
	if syscall.Kill(-pgid, 0) != nil {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	for deadline := time.Now().Add(grace); time.Now().Before(deadline); time.Sleep(pollEvery) {
		if syscall.Kill(-pgid, 0) != nil {
			return
		}
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// pollEvery is how often ending looks whether the group is gone.
const pollEvery = 10 * time.Millisecond
