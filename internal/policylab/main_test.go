package policylab

import (
	"os"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/report"
)

// TestMain draws the lab's PNG charts at 24 dpi, a sixteenth of the
// pixels: rasterizing and compressing them at 96 was a third of this
// package's CPU (issue 39; report's own tests draw them at full size,
// TestCharts checks report.PNGSize).
func TestMain(m *testing.M) {
	report.SetPNGResolutionForTests(24)
	testkit.LessGC() // the lab's own GOGC is set during a lab; its tests' other work too: 1.52 -> 1.37 s CPU (medians of four by turns, load 1.2)
	os.Exit(m.Run())
}
