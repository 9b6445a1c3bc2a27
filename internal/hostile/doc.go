// Package hostile is a misbehaving HTTP/1.1 server for tests: it answers
// every request the way its Mode says a broken or malicious target would,
// so a test can check that the client records the fault (one row, a class
// in the error column) and stays within bounded memory and time.
//
// It writes its answers byte by byte on a raw net.Listener, not through
// net/http's server, which would refuse to send most of them: a 9.5 MB
// header, invalid UTF-8, a status line that is not HTTP. It reads each
// request with net/http's request parser, bounded to MaxRequestBytes.
//
// # Modes
//
// Every answer that has a status line carries Config.Status (429 by
// default), so the retry headers are the ones a client parses.
//
//   - huge-header: a Retry-After-Ms of 10, then X-Huge, a header whose
//     value is Config.HeaderBytes bytes (9.5 MB by default: just under Go's
//     default 10 MB response header limit, the case that limit lets
//     through), then an empty body. The value is written from one shared
//     block, so the server's memory does not grow with the header.
//   - echo-key: the value of the first request header of
//     Config.EchoHeaders present (api-key, then Authorization, by default)
//     goes back whole in Retry-After-Ms and X-Echo, and in part (its
//     middle half, at least 12 bytes) in Retry-After: a target that
//     reflects the credential it was sent.
//   - non-utf8: a Retry-After of two invalid bytes, a 7, then 40 × "é", so
//     that a 64-byte cut lands inside a rune; a Retry-After-Ms of "25"
//     followed by a truncated three-byte rune.
//   - dup-retry-after: two Retry-After-Ms headers (10 and 20000) and two
//     Retry-After headers (1 and 30): advice that contradicts itself.
//   - garbage: a line that is not HTTP (an SSH banner) and some binary
//     bytes, then the connection is closed.
//   - reset: a status line and half a header, then the connection is
//     reset (closed with SO_LINGER 0 on TCP, closed on other networks).
//   - slow-body: headers with a Content-Length of Config.BodyBytes (1,024
//     by default), then one byte of body every Config.Trickle (100 ms).
//   - endless-body: headers with no length and Connection: close, then a
//     body that never ends, until the client hangs up.
//
// # Lifetime
//
// Start listens on 127.0.0.1:0 only; Serve takes any listener, such as an
// internal/memnet one under testing/synctest, where the slow modes run
// on the bubble's clock. Close stops accepting, closes every open
// connection and returns when every goroutine of the server has ended.
// Without Close, a connection still ends by itself: its first read or
// write after Config.Lifetime (a minute by default) fails, and so does a
// write to a client that has gone.
//
// It imports nothing of ptuprobe: it is the far side of the wire.
package hostile
