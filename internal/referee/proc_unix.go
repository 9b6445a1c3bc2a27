//go:build unix

package referee

import (
	"os/exec"
	"syscall"
)

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
