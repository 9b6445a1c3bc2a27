//go:build race

package campaign

// The race detector's instrumentation grows every frame: stack sizes are
// judged for a plain build (TestOpenStreamStack).
func init() { raceEnabled = true }
