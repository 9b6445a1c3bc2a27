package capacity

import (
	"os"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/testkit"
)

// TestMain runs up to 4 of the package's parallel tests at once (not
// under -race): three of them step on the wall clock (a second a step)
// and compute little: the package's run 1.3–1.4 s instead of 1.9–2.4
// (load 5–6, three runs each by turns).
func TestMain(m *testing.M) {
	testkit.WaitBound(4)
	os.Exit(m.Run())
}
