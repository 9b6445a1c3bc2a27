//go:build !unix

package referee

import (
	"os/exec"
	"time"
)

// ownGroup: without process groups, the command alone is ended.
func ownGroup(*exec.Cmd) {}

// endGroup kills the command (a signal to its group needs unix).
func endGroup(c *exec.Cmd, _ bool) {
	if c.Process != nil {
		_ = c.Process.Kill()
	}
}

// ending: without process groups, what the command started is out of
// reach.
func ending(int, string, time.Time, time.Duration) {}
