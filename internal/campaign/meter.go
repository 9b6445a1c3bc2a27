package campaign

import (
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/results"
)

// Meter counts a run's requests and Records live (--metrics-addr):
// internal/metrics' *Traffic, which cmd gives Options.Metrics and
// Calibration.Metrics. An interface, so that this package, and the
// packages and tests that import it (the lab, capacity, fit's tests),
// link no Prometheus client (issue 39: it and its protobuf runtime were
// a third of their test binaries).
type Meter interface {
	// Meter is told that a plan of planned requests starts under group:
	// it wraps the plan's sender (requests sent and in flight) and
	// returns what every completed Record of the plan is shown.
	Meter(group string, planned int, s dispatch.Sender) (dispatch.Sender, func(*results.Record))
}
