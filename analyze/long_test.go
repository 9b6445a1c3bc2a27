package analyze

import "flag"

// long runs the tests' volume: the cases of many rows or many simulated
// runs that check a model or a bound again at other settings, beyond
// what `go test ./...` keeps (each such test keeps one case of each kind
// there). .ci/run runs them: go test ./analyze -long.
var long = flag.Bool("long", false, "also run the volume cases (.ci/run's long stage)")
