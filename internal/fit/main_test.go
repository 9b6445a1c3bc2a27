package fit

import (
	"os"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/testkit"
)

// TestMain raises the collector's target (testkit.LessGC) for the
// package's tests beyond the fits themselves (which set fitGCPercent
// while they run): recorded runs read and replayed. The package's test
// binary, four turns by GOGC at load 1.2: 1.07-1.37 s CPU (median 1.29)
// at 100, 1.01-1.08 (1.06) at 400.
func TestMain(m *testing.M) {
	testkit.LessGC()
	os.Exit(m.Run())
}
