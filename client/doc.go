// Package client builds one request, sends it, and turns the response into
// the fields of a results.Record: status, timings, the advised wait parsed
// from retry-after-ms / retry-after, rate-limit headers and token usage.
//
// It is a library that other packages use, not a command: cmd turns flags
// into a Spec, Resolve turns the Spec into a Config (the API chosen, the key
// read from the environment through an injectable getenv, an "@path" body
// loaded from a regular file of at most MaxBodyFileBytes, headers split),
// and New turns the Config into a Target. dispatch reaches a Target only
// through its Sender interface, which *Target satisfies without either
// package importing the other.
//
// A setting it refuses is a *valid.Error naming the Go field of Spec or
// Config (Endpoint, URL, PromptTokens, Headers, APIKeyEnv, …), in words that
// know nothing of flags; cmd renders field names as flag names.
//
// # What a target says
//
// Nothing a target sends may take unbounded memory or time, or stop a run:
// response headers are read up to MaxHeaderBytes (beyond it the attempt is
// error "headers"), a body up to MaxBodyBytes (beyond it, error "body") of
// which only the last 64 KiB are kept, for the usage block, and
// Config.Timeout bounds the whole attempt, body included. A failure on
// this machine (out of descriptors or ports) is error "local" (Classify).
//
// The advised wait is read by package retryafter, with its precedence. A retry header
// that the response repeats with different values is ambiguous: it is
// recorded as the list (joined by ", ", as HTTP combines a repeated
// field) and counts as unusable, as a value that is not a number would,
// so retry-after is read when retry-after-ms is ambiguous, and the source
// is "invalid" when no usable header is left. Identical repeats are one
// value.
//
// It decides nothing about when requests are sent (that is the shape and
// dispatch packages) and imports only results and internal/valid. It never
// writes a secret anywhere: a key, an auth header, the endpoint host, a
// deployment name, the value of a header it was given, a request id or
// prompt text go neither into a Record nor into an error, and it writes no
// logs. Redirects are recorded, never followed, so the key never travels to
// another host.
//
// A target may echo a secret back. Every response header value the client
// reads is first checked, whole and before it is cut to
// results.MaxHeaderLen, against the key, the values of Config.Headers and
// the query values of the URL: a value holding one, whole, or any 12
// bytes of a secret of 12 bytes or more (a partial echo), is recorded as
// Redacted, "[redacted]", and so advises no wait. Values shorter than 8
// bytes are not taken for secrets: no key is that short, and "1" would
// match ordinary waits.
package client
