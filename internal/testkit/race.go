//go:build race

package testkit

// Race is true when the tests run under the race detector (-race), which
// multiplies the cost of every row read. A test whose volume proves
// agreement, not concurrency, runs a representative part of it then:
// enough to put every goroutine to work, while the full run without -race
// keeps proving the rest.
const Race = true
