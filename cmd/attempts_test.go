package cmd

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/policy"
)

// TestMaxAttemptsOneRange: --max-attempts takes one range in every
// command that has it, the lab's default inside it, and refuses a value
// outside it with the same line everywhere.
func TestMaxAttemptsOneRange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	commands := [][]string{
		{"burst", "--burst-size", "1", "--burst-waves", "1", "-o", dir + "/burst.csv"},
		{"schedule", "--rate", "1/s", "--duration", "1s", "-o", dir + "/schedule.csv"},
		{"characterize", "--out-dir", dir + "/characterize"},
		{"policies", "--policy", "honor", "--load", "1x", "--clients", "1", "--repeat", "1", "--duration", "1s", "--out-dir", dir + "/policies"},
	}
	const refusal = "--max-attempts must be from 1 to 200"
	for _, command := range commands {
		for _, n := range []int{1, policy.DefaultMaxAttempts, policy.MaxAttempts, 0, policy.MaxAttempts + 1} {
			args := append(append([]string{}, command...), "--dry-run", "--max-attempts", strconv.Itoa(n))
			code, _, stderr := runCLI(context.Background(), args...)
			inRange := n >= 1 && n <= policy.MaxAttempts
			switch {
			case inRange && code != ExitOK:
				t.Errorf("%s --max-attempts %d: exit %d, %q; want it taken", command[0], n, code, stderr)
			case !inRange && (code != ExitUsage || strings.TrimSpace(stderr) != "ptuprobe: "+refusal):
				t.Errorf("%s --max-attempts %d: exit %d, %q; want exit 2 and %q", command[0], n, code, stderr, refusal)
			}
		}
	}
}
