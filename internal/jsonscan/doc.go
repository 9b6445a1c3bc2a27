// Package jsonscan reads a JSON text in place: a caller walks objects and
// arrays with callbacks, reads the few values it wants (a short string,
// a character count, an integer, a boolean) and skips the rest, without
// building values. It exists for the simulator, which must read a request
// body on every answer, a refusal included: encoding/json spent ~45 µs on
// the client's 4 KB body, most of a 429's budget at 20,000 answers/s on
// two cores, where a refusal needs only character counts. The client reads
// the usage of every answer with it too (encoding/json took 6–7 µs of a
// 300-byte chat completion), leaving unusual documents to encoding/json.
//
// It accepts exactly RFC 8259 JSON (FuzzScanner checks it against
// encoding/json), bounds nesting at MaxDepth, and matches object keys byte
// for byte (escapes are not decoded, so a key is case- and
// escape-sensitive).
//
// It imports only the standard library. It may not import any ptuprobe
// package, and it knows nothing of requests, messages or tokens: what a
// body means is the caller's business.
package jsonscan
