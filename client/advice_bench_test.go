package client

import (
	"net/http"
	"testing"

	"github.com/ptuprobe/ptuprobe/results"
)

// BenchmarkCaptureHeaders is reading an answer's advice as in
// bench/race.sh: a raw target sending one extra header (its value, 16
// bytes, a secret the answer's read fields are vetted for) and the
// loopback server's 429 (retry-after-ms, retry-after, a Date).
func BenchmarkCaptureHeaders(b *testing.B) {
	rec := benchCapture(b, http.StatusTooManyRequests, http.Header{
		"Content-Type":   {"application/json"},
		"Retry-After-Ms": {"43"},
		"Retry-After":    {"1"},
		"Date":           {"Sun, 06 Dec 2026 20:33:09 GMT"},
		"Content-Length": {"71"},
	})
	if rec.WaitMS != 43 {
		b.Fatalf("wait %v, want 43", rec.WaitMS)
	}
}

// BenchmarkCaptureHeaders200 is the race's success: a header retryafter
// would not read (a silent answer).
func BenchmarkCaptureHeaders200(b *testing.B) {
	benchCapture(b, http.StatusOK, http.Header{
		"Content-Type":   {"application/json"},
		"Date":           {"Sun, 06 Dec 2026 20:33:09 GMT"},
		"Content-Length": {"57"},
	})
}

// benchCapture times captureHeaders on an answer of status and header h
// from bench/race.sh's raw target, and returns the last row it filled.
func benchCapture(b *testing.B, status int, h http.Header) results.Record {
	b.Helper()
	tg, err := New(Config{API: APIRaw, URL: "http://127.0.0.1:1/v1/chat/completions", Method: http.MethodPost,
		Body: []byte(`{"max_tokens":1}`), Headers: []Header{{"Content-Type", "application/json"}}})
	if err != nil {
		b.Fatal(err)
	}
	defer tg.Close()
	b.ReportAllocs()
	var rec results.Record
	for b.Loop() {
		rec = results.Blank()
		rec.Status = status
		tg.captureHeaders(h, nil, &rec)
	}
	return rec
}
