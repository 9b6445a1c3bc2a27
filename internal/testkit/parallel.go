package testkit

import (
	"flag"
	"strconv"
)

// WaitBound raises -test.parallel to n unless the run set it or runs
// under the race detector: for a package whose parallel tests spend
// their time waiting (on subprocesses, on simulators' advised waits, on
// timers) more than computing, so that running more of them than the
// cores (the default) shortens the run without changing what any test
// sees. Under -race, where each test computes several times as long,
// the default stays. Call it from TestMain before m.Run; it parses the
// flags.
func WaitBound(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set && !Race {
		flag.Set("test.parallel", strconv.Itoa(n))
	}
}
