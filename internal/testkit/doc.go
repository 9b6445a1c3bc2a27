// Package testkit holds the helpers this module's tests share: reading
// every record of a results file, a snapshot of a directory's files, and
// a context that cancels at its n-th look. It is for tests only: no
// production package imports it (package results's own tests cannot, as
// it imports results).
package testkit
