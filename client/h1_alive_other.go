//go:build !unix

package client

// peeker is nothing where a socket cannot be peeked.
type peeker struct{}

// alive reports whether pc, idle in the pool, may carry a request. Where
// a socket cannot be peeked without waiting, it is taken as alive, and a
// request on a connection the server closed while idle fails as it is
// (GET and other replayable requests are sent again once).
func (pc *h1Conn) alive() bool { return true }
