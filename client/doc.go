// Package client builds one request, sends it, and turns the response into
// the fields of a results.Record: status, timings, the advised wait parsed
// from retry-after-ms / retry-after, rate-limit headers and token usage.
//
// It decides nothing about when requests are sent (that is the shape and
// dispatch packages) and imports only results. It never writes a key, an
// auth header, the endpoint host, a deployment name, a request id or prompt
// text anywhere: not into a Record, not into an error.
package client
