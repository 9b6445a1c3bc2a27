package sim

import "flag"

// long runs the tests' volume (.ci/run's long stage):
// TestWitnessMemoryIsBounded at MaxAdvisedWaits.
var long = flag.Bool("long", false, "also run the volume cases (.ci/run's long stage)")
