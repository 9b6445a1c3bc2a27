package testkit

import (
	"os"
	"runtime/debug"
)

// LessGCPercent is the collector's target a package's tests run at after
// LessGC: the heap grows to five times the live heap between collections,
// not twice.
const LessGCPercent = 400

// LessGC raises the collector's target (GOGC) to LessGCPercent unless the
// environment sets GOGC: for a package whose tests allocate much and keep
// little (whole reports, simulated runs), where the collector was a tenth
// of their CPU (issue 39). A test that measures the heap (TotalAlloc,
// AllocsPerRun) sees the same figures; one that needs the default
// collector sets it itself. Call it from TestMain before m.Run.
func LessGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(LessGCPercent)
	}
}
