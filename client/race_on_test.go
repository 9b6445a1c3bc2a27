//go:build race && linux

package client

// The race detector multiplies a process's memory (shadow memory for every
// goroutine and allocation): peak-RSS bounds are set for a plain build.
func init() { raceEnabled = true }
