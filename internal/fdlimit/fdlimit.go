// Package fdlimit raises the open-file limit a run needs, where the system
// allows it, and says what limit is in force: each request in flight holds
// a socket, and a run that runs out of them fails on this machine, not at
// the target.
package fdlimit

// Raise raises the soft open-file limit to need when the hard limit allows
// (never lowering it) and returns the soft limit then in force; ok is false
// where the limit cannot be read (then nothing is known or changed).
func Raise(need uint64) (limit uint64, ok bool) { return raise(need) }
