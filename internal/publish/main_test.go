package publish

import (
	"os"
	"testing"

	"github.com/ptuprobe/ptuprobe/report"
)

// TestMain draws the reports' PNG charts at 24 dpi, a sixteenth of the
// pixels: these tests write whole reports, a dozen times over, to check
// what Run does around them (issue 39); report's own tests draw the
// charts at full size.
func TestMain(m *testing.M) {
	report.SetPNGResolutionForTests(24)
	os.Exit(m.Run())
}
