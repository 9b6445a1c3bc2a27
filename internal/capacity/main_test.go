package capacity

import (
	"os"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/testkit"
)

// TestMain runs up to 4 of the package's parallel tests at once (not
// under -race): three of them step on the wall clock and compute little:
// the package's run 1.3–1.4 s instead of 1.9–2.4 (load 5–6, three runs
// each by turns). Their steps are a quarter of a second (testMinStep),
// not the second a user's step is at least: what they check is counted
// in requests (the rates are four times a second-long step's), and the
// package's run was the longest one's second (issue 39).
func TestMain(m *testing.M) {
	testkit.WaitBound(4)
	minStep = testMinStep
	os.Exit(m.Run())
}

// testMinStep is the shortest step this package's tests take (minStep).
const testMinStep = 250 * time.Millisecond
