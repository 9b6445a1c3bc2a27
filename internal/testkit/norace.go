//go:build !race

package testkit

// Race is true when the tests run under the race detector (see race.go).
const Race = false
