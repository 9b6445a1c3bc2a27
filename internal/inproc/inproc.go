// Package inproc serves an HTTP request with a handler on the calling
// goroutine, in memory: no socket, no other goroutine. internal/vrun (the
// policy lab's runs, `ptuprobe fit`'s replays) runs the simulator this way
// on a virtual clock (internal/vclock), where the handler's latency is a
// Sleep on that clock and a socket would stall it. It imports nothing of
// ptuprobe; only internal/vrun imports it.
package inproc

import (
	"bytes"
	"net/http"
	"strconv"
)

// Transport is an http.RoundTripper that calls Handler's ServeHTTP on the
// calling goroutine with an in-memory ResponseWriter, and returns what it
// wrote as the response (a status never written is 200).
//
// BodyOf, when set, says which statuses' bodies are kept: a body it
// refuses is discarded as it is written (the response's is empty), so a
// caller that reads only refusals does not buffer every completion.
type Transport struct {
	Handler http.Handler
	BodyOf  func(status int) bool
}

// RoundTrip serves req in process.
func (t Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	// The writer, the response and its body's reader are one allocation
	// (a lab run answers hundreds of thousands of requests).
	w := &answer{header: make(http.Header, 8), bodyOf: t.BodyOf}
	t.Handler.ServeHTTP(w, req)
	if req.Body != nil {
		req.Body.Close()
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.read.Reset(w.body.Bytes())
	w.resp = http.Response{
		Status: statusLine(w.status), StatusCode: w.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: &w.read,
		ContentLength: int64(w.body.Len()), Request: req,
	}
	return &w.resp, nil
}

// bodyReader is a response's body: the answer's bytes, and a Close that
// does nothing.
type bodyReader struct{ bytes.Reader }

func (*bodyReader) Close() error { return nil }

// statusLine is a response's Status, "200 OK": the two a simulator
// mostly answers are constants (a lab run answers hundreds of thousands).
func statusLine(code int) string {
	switch code {
	case http.StatusOK:
		return "200 OK"
	case http.StatusTooManyRequests:
		return "429 Too Many Requests"
	}
	return strconv.Itoa(code) + " " + http.StatusText(code)
}

// answer is the http.ResponseWriter of an in-process request.
type answer struct {
	resp    http.Response
	read    bodyReader
	header  http.Header
	status  int
	body    bytes.Buffer
	bodyOf  func(status int) bool
	discard bool
}

func (w *answer) Header() http.Header { return w.header }

func (w *answer) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		w.discard = w.bodyOf != nil && !w.bodyOf(code)
	}
}

func (w *answer) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.discard {
		return len(p), nil
	}
	if w.body.Cap() == 0 {
		w.body.Grow(max(512, len(p))) // a refusal's body, whole: no growing by doubling
	}
	return w.body.Write(p)
}

// Flush lets a streamed answer be written: everything is in memory.
func (w *answer) Flush() {}
