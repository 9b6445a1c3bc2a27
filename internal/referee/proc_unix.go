//go:build unix

package referee

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the command as the leader of a new process group, so
// that everything it starts can be ended with it.
func ownGroup(c *exec.Cmd) { c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// endGroup signals the command's whole process group: SIGTERM, or
// SIGKILL when kill. A group already gone is no error.
func endGroup(c *exec.Cmd, kill bool) {
	if c.Process == nil {
		return
	}
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-c.Process.Pid, sig)
}
