// Package testkit holds the helpers this module's tests share: reading
// every record of a results file, a snapshot of a directory's files,
// a context that cancels at its n-th look, and a watch of the process's
// stalls for the tests that judge a timing. It is for tests only: no
// production package imports it (package results's own tests cannot, as
// it imports results).
package testkit
