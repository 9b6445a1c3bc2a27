package redisstate

import (
	"os"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/testkit"
)

// TestMain runs up to 4 of the package's parallel tests at once (not
// under -race): they wait on Redis processes and on calls' timeouts far
// more than they compute: the package's wall time 3.5–3.9 s instead of
// 5.3–5.8 (load 15–20, round 8, when a TLS handshake to a plaintext
// Redis waited out 2 s every run; now 100 ms unless the machine is too
// busy to answer a PING within it).
func TestMain(m *testing.M) {
	testkit.WaitBound(4)
	os.Exit(m.Run())
}
